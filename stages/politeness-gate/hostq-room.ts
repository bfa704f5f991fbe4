import type { AdmittedUrl } from '../../schemas/index.js';
import { EDGES } from '../../topology/index.js';
import type { Emit, StageContext } from '../../pipeline/stage.js';
import { outcomeEmit, urlOutcome } from '../shared/messages/outcome-emit.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { jobFieldsOf } from '../shared/jobs/job-fields.js';

/**
 * Room in the host queues. `CRAWL_HOSTQ` has no age limit, and a size limit, if the user sets
 * one, refuses new messages ("maximum bytes exceeded") instead of dropping waiting URLs
 * (ops/nats/topology.ts). The intake then stops queueing: its frontier messages wait in
 * `CRAWL_FRONTIER`, tried again every HOSTQ_FULL_RETRY_MS, while fetches free room (a served
 * URL's message is deleted). A URL that has waited HOSTQ_FULL_WAIT_MS for room ends with an
 * outcome row saying so, rather than waiting until the frontier stream's own limits could
 * drop it without one.
 */

/** How long a URL waits for room in full host queues before it ends as `filtered`. */
export const HOSTQ_FULL_WAIT_MS = 10 * 60_000;
/** How often a frontier message that found the host queues full is tried again. */
export const HOSTQ_FULL_RETRY_MS = 30_000;
/** After a refused publish, the intake tries no more publishes for this long (each could store part of its batch). */
const FULL_HOLD_MS = 5_000;
/** The refusal is logged at most this often per process (the runner's own retry line says more). */
const LOG_EVERY_MS = 60_000;

interface FullState {
  /** first refusal of this spell */
  since: number;
  /** the last refused publish */
  lastRefused: number;
  lastLogged: number;
}

/** Per intake (its context): one spell of a full stream at a time. */
const spells = new WeakMap<object, FullState>();

/** The server refuses a message a stream with DiscardPolicy.New has no room for. */
export const isNoRoomError = (err: Error) => /maximum (bytes|messages) exceeded|resource limits exceeded/i.test(err.message);

/** The spell the intake is in, if the stream refused a publish a moment ago. */
export function fullSpell(ctx: StageContext): FullState | null {
  const spell = spells.get(ctx);
  return spell && ctx.clock.now() - spell.lastRefused < FULL_HOLD_MS ? spell : null;
}

/** A publish of host-queue messages failed: if for want of room, the spell starts (or goes on). */
export function noteRefused(ctx: StageContext, err: Error): void {
  if (!isNoRoomError(err)) return;
  const now = ctx.clock.now();
  const spell = spells.get(ctx) ?? { since: now, lastRefused: now, lastLogged: 0 };
  spell.lastRefused = now;
  spells.set(ctx, spell);
  if (now - spell.lastLogged >= LOG_EVERY_MS) {
    spell.lastLogged = now;
    ctx.log.warn(
      { stream: EDGES.hostq.stream, full_for_s: Math.round((now - spell.since) / 1000), err: err.message },
      `the host queues are full (${EDGES.hostq.stream} at its size limit): new URLs wait in ${EDGES.frontier.stream}, each ending as filtered after ${HOSTQ_FULL_WAIT_MS / 60_000} min without room; raise the limit (--stream-retention hostq=0,SIZE) or let fetching drain it`,
    );
  }
}

/** The host queues took a publish again: the spell is over. */
export function noteRoom(ctx: StageContext): void {
  const spell = spells.get(ctx);
  if (!spell) return;
  spells.delete(ctx);
  ctx.log.info({ stream: EDGES.hostq.stream, full_for_s: Math.round((ctx.clock.now() - spell.since) / 1000) }, 'the host queues have room again');
}

/** How long a message published at `publishedAt` has waited for room in this spell. */
export function waitedForRoom(spell: FullState, publishedAt: number | undefined, now: number): number {
  return now - Math.max(spell.since, publishedAt ?? now);
}

/** The row of a URL that found no room in the host queues for HOSTQ_FULL_WAIT_MS. */
export function noRoomOutcome(ctx: StageContext, m: AdmittedUrl, waitedMs: number): Emit {
  ctx.metrics.count('politeness-gate', 'urls', 'hostq_full_ended');
  return outcomeEmit(
    ctx,
    `hostq-full:${m.fetch_id}`,
    urlOutcome(m, {
      event_id: stableId('hostq-full', m.fetch_id),
      outcome: 'filtered',
      reason: `host queues full: ${EDGES.hostq.stream} at its size limit, no room for ${Math.round(waitedMs / 1000)} s`,
      fetch_time: ctx.clock.now(),
    }),
  );
}
