import { EDGES } from '../../../topology/index.js';
import type { StageContext } from '../../../pipeline/stage.js';

/** What each stage counts the host-queue messages it removes under (`crawler_<stage>_hostq_removed_total{outcome}`). */
export const HOSTQ_REMOVED = 'hostq_removed';

/**
 * Removes a served URL from its host's queue. The host-queue stream is a frontier, not a
 * log: it has no age limit (a URL waits as long as its host makes it), so a URL leaves it
 * when it no longer waits, one delete by sequence each (a purge of a host's subject below its
 * cursor would be one request for many URLs, but nats-server 2.9 scans the subject's whole
 * span of the stream for it, a cost that grows with the stream; a delete by sequence costs
 * the same whatever the stream holds: docs/replay-and-retention.md has both measured). A URL no longer waits when its outcome is out (the gate settled it
 * without a request) or when a fetcher has confirmed its grant: before that, a grant whose
 * lease lapses unconfirmed is served again from this message (host-slot.ts effectiveCursor).
 *
 * A delete that fails (the server unavailable for a moment) costs only the space of one
 * message: it is counted, and logged at most once a minute (an accounts file from before the
 * permission would otherwise log every URL), never retried in the way of the crawl.
 */
export async function removeServed(ctx: StageContext, stage: string, seq: number, host: string): Promise<void> {
  if (seq <= 0) return;
  try {
    const removed = await ctx.streams.deleteMessage(EDGES.hostq.stream, seq);
    ctx.metrics.count(stage, HOSTQ_REMOVED, removed ? 'ok' : 'gone');
  } catch (err) {
    ctx.metrics.count(stage, HOSTQ_REMOVED, 'failed');
    failedSinceLog++;
    const now = ctx.clock.now();
    if (now - lastLoggedAt < LOG_EVERY_MS) return;
    lastLoggedAt = now;
    ctx.log.warn({ host, seq, failed: failedSinceLog, err: (err as Error).message }, 'removing served URLs from the host-queue stream failed: their messages stay (space only)');
    failedSinceLog = 0;
  }
}

const LOG_EVERY_MS = 60_000;
let lastLoggedAt = 0;
let failedSinceLog = 0;
