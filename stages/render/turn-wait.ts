/**
 * A page's request waits its host's turn like any request of the crawler: robots.txt first
 * (the gate's cache, fetched if the host has none yet), then the host's slot (one request in
 * flight, the host's delay since the last one), both shared with every gate and fetcher
 * through the hosts and robots buckets. A render cannot wait forever: what is not due before
 * its deadline is blocked.
 */
import type { StageContext } from '../../pipeline/stage.js';
import type { Emit } from '../../ports/streams.js';
import { takeTurn, type HostLease } from '../shared/politeness/index.js';
import { refreshRobots, robotsOf } from '../shared/robots/robots-refresh.js';
import { stableId } from '../shared/messages/stage-ids.js';

/** How the session waits: real timers in the stage, the fake clock in unit tests. */
export type Sleep = (ms: number) => Promise<void>;

/**
 * A busy host's slot says when its lease ends, which is long after the request under it
 * usually does (the gate learns of the release from its watch; a render has none): look
 * again this often.
 */
const BUSY_POLL_MS = 100;

/** How one render waits for its hosts' turns: until its deadline, with its sleep, keeping the robots.txt exchanges made on the way. */
export interface RenderWait {
  ctx: StageContext;
  deadline: number;
  sleep: Sleep;
  /** robots.txt exchanges made on the way, for the archive */
  archive: Emit[];
}

function waitFor(t: RenderWait, until: number, busy: boolean): Promise<void> {
  const now = t.ctx.clock.now();
  const ms = Math.min(until, t.deadline) - now;
  return t.sleep(Math.max(1, busy ? Math.min(ms, BUSY_POLL_MS) : ms));
}

export type RobotsAnswer = { blocked: string } | { crawlDelayMs: number | null };

/** Why robots.txt keeps the page's request out (or could not be known in time), or the host's Crawl-delay when it allows it. */
export async function robotsVerdict(t: RenderWait, url: string, host: string): Promise<RobotsAnswer> {
  const origin = new URL(url).origin;
  for (;;) {
    const now = t.ctx.clock.now();
    const { current } = await robotsOf(t.ctx).lookup(origin, now);
    if (current) {
      const r = current.record;
      // fetching its robots.txt showed the host cannot be reached: the SSRF guard refuses its address, or its name does not exist
      if (r.ends) return { blocked: `${r.ends.outcome === 'refused' ? 'ssrf' : 'host'}: ${origin} cannot be reached in this crawl (${r.ends.reason})` };
      if (r.kind === 'disallow_all') return { blocked: `robots: ${origin}/robots.txt unavailable (${r.reason})` };
      const v = current.compiled.verdict(url);
      return v.allowed ? { crawlDelayMs: current.compiled.crawlDelayMs } : { blocked: `robots: disallowed${v.matchedRule ? ` by ${v.matchedRule}` : ''}` };
    }
    if (now >= t.deadline) return { blocked: `robots: ${origin}/robots.txt not known before the render timeout` };
    const wait = await refreshRobots(t.ctx, host, origin, async (exchanges) => {
      t.archive.push(...exchanges);
    });
    if (wait) await waitFor(t, wait.until, true);
  }
}

export type WaitedTurn = { lease: HostLease } | { blocked: string };

/** The host's turn, taken for one request once the host is free and due (politeness/host-turn.ts), or why not before the deadline. */
export async function waitForTurn(t: RenderWait, host: string, leaseMs: number): Promise<WaitedTurn> {
  let why = '';
  for (;;) {
    const now = t.ctx.clock.now();
    if (now >= t.deadline) return { blocked: `host: ${host} was not free before the render timeout (${why})` };
    const leaseId = `render:${stableId(host, now, Math.random())}`;
    const taken = await takeTurn(t.ctx, host, now, { leaseId, leaseMs, seq: 0 });
    if (taken.taken) return { lease: taken.lease };
    why = taken.reason;
    const busy = taken.reason === 'request in flight' || taken.reason === 'IP full';
    if (!busy && taken.retryAt >= t.deadline) return { blocked: `host: ${host} not due before the render timeout (${why})` };
    await waitFor(t, taken.retryAt, busy);
  }
}
