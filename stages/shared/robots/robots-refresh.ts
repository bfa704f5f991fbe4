import type { Emit, StageContext } from '../../../pipeline/stage.js';
import { feedbackForStatus, pacedFrom, releaseTurn, takeTurn, type FetchFeedback } from '../politeness/index.js';
import { oncePerObject } from '../once-per-object.js';
import { stableId } from '../messages/stage-ids.js';
import { robotsCacheFor } from './robots-cache.js';
import { fetchRobots } from './fetch-robots.js';

/** How long a robots.txt fetch holds its host. */
export const ROBOTS_LEASE_MS = 60_000;

export const robotsOf = oncePerObject((ctx: StageContext) => robotsCacheFor(ctx.kv.robots, ctx.settings));

/** The gap the host gets between requests: max(its Crawl-delay clamped to the maximum, the configured minimum). */
export function hostDelayMs(crawlDelayMs: number | null, ctx: StageContext, host: string): number {
  let delay = crawlDelayMs ?? 0;
  if (delay > ctx.settings.maxCrawlDelayMs) {
    ctx.log.info({ host, crawlDelayMs: delay, maxCrawlDelayMs: ctx.settings.maxCrawlDelayMs }, 'Crawl-delay above the maximum: clamped');
    delay = ctx.settings.maxCrawlDelayMs;
  }
  return Math.max(delay, ctx.settings.minDelayMs);
}

/**
 * Where the robots.txt exchanges go for the archive: the gate publishes them through the
 * runner's publisher at once, the render stage adds them to its outcome.
 */
export type ArchiveExchanges = (exchanges: Emit[]) => Promise<unknown>;

/**
 * Fetches robots.txt of `origin` holding the host's lease, like any request, so it counts
 * toward the host's politeness (and a failing robots.txt backs the host off too).
 * Returns a wait when the host is busy; null once the record is stored.
 */
export async function refreshRobots(ctx: StageContext, host: string, origin: string, archive: ArchiveExchanges): Promise<{ kind: 'wait'; until: number; ip?: string } | null> {
  const start = ctx.clock.now();
  const leaseId = `robots:${stableId(origin, start, Math.random())}`;
  // a robots.txt request is a request: it takes the host and a place on its IP like any other
  const taken = await takeTurn(ctx, host, start, { leaseId, leaseMs: ROBOTS_LEASE_MS, seq: 0 });
  if (!taken.taken) return { kind: 'wait', until: taken.retryAt, ...(taken.ip ? { ip: taken.ip } : {}) };
  let feedback: FetchFeedback = { kind: 'network_error', code: 'unknown', durationMs: 0, baseDelayMs: ctx.settings.minDelayMs };
  try {
    const record = await fetchRobots(ctx.http, origin, ctx.settings, () => ctx.clock.now(), archive);
    const durationMs = Math.round(ctx.clock.now() - start);
    // the host's delay is taken from the answer before it is stored: when storing it fails
    // (the bucket electing a leader), the request was still made and the host is still paced
    // by its Crawl-delay, not by the crawl's minimum
    const baseDelayMs = hostDelayMs(robotsOf(ctx).compile(record).compiled.crawlDelayMs, ctx, host);
    if (record.ends) {
      // nothing reached the host (no address, or one the guard refuses): nothing to back off from
      feedback = { kind: 'ok', durationMs: 0, baseDelayMs };
    } else {
      feedback =
        record.status === null
          ? { kind: 'network_error', code: 'robots', durationMs, baseDelayMs }
          : feedbackForStatus(record.status, null, durationMs, baseDelayMs);
    }
    const cached = await robotsOf(ctx).put(origin, record);
    // the stored record: a failure that repeats one before it can end the host (every address refusing twice)
    const stored = cached.record;
    ctx.metrics.count('politeness-gate', 'robots_fetches', stored.ends ? 'host_dead' : record.kind);
    const level = record.kind === 'disallow_all' ? 'warn' : 'info';
    ctx.log[level](
      { host, origin, kind: record.kind, status: record.status, reason: stored.reason, failures: stored.failures },
      stored.ends
        ? 'host cannot be reached in this crawl: its URLs end at once'
        : record.kind === 'disallow_all'
          ? 'robots.txt unavailable: host disallowed until a fetch succeeds'
          : 'robots.txt fetched',
    );
  } finally {
    // the host's delay runs from a little after our end, as after a page (pacedFrom says
    // why); with no delay to keep, the host's first URL may follow in the same turn
    const delayed = feedback.kind !== 'ok' || feedback.baseDelayMs > 0;
    const end = ctx.clock.now();
    await releaseTurn(ctx, taken.lease, { from: delayed ? pacedFrom(end) : end, feedback });
  }
  return null;
}
