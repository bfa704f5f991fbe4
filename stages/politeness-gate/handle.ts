import { encodeGrant, type AdmittedUrl } from '../../schemas/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, retryAfter, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { acquireSlot, releaseSlot } from '../host-slot.js';
import { stableId } from '../stage-ids.js';
import { perKey } from '../per-key.js';
import { outcomeEmit } from '../outcome-emit.js';
import { productToken } from './robots-rules.js';
import { RobotsCache } from './robots-cache.js';
import { fetchRobots } from './fetch-robots.js';
import { GRANT_LEASE_MS, ROBOTS_ERROR_RETRY_MS, ROBOTS_LEASE_MS } from './spec.js';

const robotsOf = perKey(
  (ctx: StageContext) =>
    new RobotsCache(ctx.kv.robots, productToken(ctx.settings.userAgent), {
      maxTtlMs: ctx.settings.robotsTtlMs,
      errorRetryMs: ROBOTS_ERROR_RETRY_MS,
    }),
);

/** The gap the host gets between requests: max(its Crawl-delay clamped to the maximum, the configured minimum). */
export function hostDelayMs(crawlDelayMs: number | null, ctx: StageContext, host: string): number {
  let delay = crawlDelayMs ?? 0;
  if (delay > ctx.settings.maxCrawlDelayMs) {
    ctx.log.info({ host, crawlDelayMs: delay, maxCrawlDelayMs: ctx.settings.maxCrawlDelayMs }, 'Crawl-delay above the maximum: clamped');
    delay = ctx.settings.maxCrawlDelayMs;
  }
  return Math.max(delay, ctx.settings.minDelayMs);
}

const originOf = (url: string) => new URL(url).origin;

/**
 * robots.txt is fetched before any other URL of the host, holding the host's lease like any
 * request, so it counts toward the host's politeness too. Returns a wait when another
 * process holds the host.
 */
async function refreshRobots(m: AdmittedUrl, input: StageInput<AdmittedUrl>, ctx: StageContext): Promise<Outcome | null> {
  const leaseId = `robots:${stableId(m.host, input.streamSeq, input.deliveryCount)}`;
  const got = await acquireSlot(ctx.kv.hosts, m.host, ctx.clock.now(), {
    leaseId,
    leaseMs: ROBOTS_LEASE_MS,
    firstAttempt: input.deliveryCount === 1,
  });
  if (!got.acquired) return retryAfter(got.waitMs, `waiting for ${m.host} to fetch robots.txt (${got.reason})`);
  const start = ctx.clock.now();
  const record = await fetchRobots(ctx.http, originOf(m.url), ctx.settings, () => ctx.clock.now());
  const end = ctx.clock.now();
  const cached = await robotsOf(ctx).put(originOf(m.url), record);
  ctx.metrics.count('politeness-gate', 'robots_fetches', record.kind);
  ctx.log.info({ host: m.host, kind: record.kind, status: record.status, reason: record.reason }, 'robots.txt fetched');
  await releaseSlot(ctx.kv.hosts, m.host, leaseId, end, hostDelayMs(cached.compiled.crawlDelayMs, ctx, m.host), end - start);
  return null;
}

function robotsBlocked(m: AdmittedUrl, ctx: StageContext, reason: string): Outcome {
  ctx.metrics.count('politeness-gate', 'urls', 'robots_disallowed');
  return emit(
    outcomeEmit(ctx, `robots:${m.fetch_id}`, {
      event_id: stableId('robots', m.fetch_id),
      fetch_id: m.fetch_id,
      url: m.url,
      host: m.host,
      outcome: 'robots_disallowed',
      reason,
      fetch_status: null,
      fetch_time: ctx.clock.now(),
      duration_ms: null,
      depth: m.depth,
    }),
  );
}

export async function handleGate(input: StageInput<AdmittedUrl>, ctx: StageContext): Promise<Outcome> {
  const m = input.message;
  // robots.txt belongs to an origin (scheme, host, port: RFC 9309 §2.3); the politeness slot to the host
  const origin = originOf(m.url);
  let robots = await robotsOf(ctx).get(origin, ctx.clock.now());
  if (!robots) {
    const wait = await refreshRobots(m, input, ctx);
    if (wait) return wait;
    robots = await robotsOf(ctx).get(origin, ctx.clock.now());
    if (!robots) return retryAfter(1000, `robots.txt of ${m.host} expired immediately`);
  }
  if (robots.record.kind === 'disallow_all') {
    return robotsBlocked(m, ctx, `robots.txt unavailable, everything disallowed: ${robots.record.reason}`);
  }
  const verdict = robots.compiled.verdict(m.url);
  if (!verdict.allowed) {
    return robotsBlocked(m, ctx, verdict.matchedRule ? `robots.txt: ${verdict.matchedRule}` : 'robots.txt disallows this path');
  }
  const delayMs = hostDelayMs(robots.compiled.crawlDelayMs, ctx, m.host);
  const leaseId = `fetch:${stableId(m.fetch_id, input.streamSeq, input.deliveryCount)}`;
  const now = ctx.clock.now();
  const got = await acquireSlot(ctx.kv.hosts, m.host, now, { leaseId, leaseMs: GRANT_LEASE_MS, firstAttempt: input.deliveryCount === 1 });
  if (!got.acquired) {
    ctx.metrics.count('politeness-gate', 'urls', 'wait');
    return retryAfter(got.waitMs, `${m.host}: ${got.reason}`);
  }
  ctx.metrics.count('politeness-gate', 'urls', 'granted');
  return emit({
    subject: subjectFor('ready', m.host, ctx.settings.partitions),
    data: encodeGrant({ ...m, lease_id: leaseId, granted_at: now, delay_ms: delayMs }),
  });
}
