import type { StageContext } from '../../../pipeline/stage.js';
import { acquireSlot, confirmLeaseOf, emptySlot, readSlot, releaseSlot, renewLease, undoAcquire, type AcquireOptions, type HostSlot, type LeaseCheck } from './host-slot.js';
import { acquireIp, extendIp, releaseIp } from './ip-slot.js';
import { nextPacing, pacingOf, PACING_GUARD_MS, type FetchFeedback, type Pacing } from './host-pacing.js';
import { removeServed } from './served-urls.js';

/**
 * A host's turn: the one request a host may have in flight, with the gap before the next.
 * Every request the crawler makes takes its host's turn the same way, whoever makes it (the
 * gate for a page and for robots.txt, the render stage for a page's own requests):
 *
 * - take: the host's lease and, with a per-IP cap, a place on its address, both or neither;
 * - confirm (a fetcher, on a grant the gate took the turn for): the lease is still the
 *   grant's, extended to cover the request, and its URL leaves its host's queue;
 * - release, with what the answer said (its status, a Retry-After, a failure to connect,
 *   how long it took, the host's delay): frees the lease and the place on the address, and
 *   sets when the host's next request may start.
 *
 * The state behind it (host-slot.ts, ip-slot.ts, host-pacing.ts) is KV entries changed by
 * compare-and-set, so any number of processes share a host's turns.
 */
export interface HostLease {
  host: string;
  leaseId: string;
  /** the address the request was charged to (null: no per-IP cap) */
  ip: string | null;
}

export type Taken =
  | { taken: true; lease: HostLease }
  | { taken: false; retryAt: number; reason: string; ip?: string };

/**
 * Takes the host's turn for one request: a place on its IP (when the per-IP cap is on) and
 * the host's lease, either both or neither (a host that is busy gives its IP place back).
 * `ip` on a wait says the IP was full, so its release wakes the host.
 */
export async function takeTurn(ctx: StageContext, host: string, now: number, opts: AcquireOptions): Promise<Taken> {
  const ip = ctx.settings.maxPerIp > 0 ? await ctx.resolveHost(host) : null;
  if (ip) {
    const place = await acquireIp(ctx.kv.hosts, ip, now, opts.leaseId, now + opts.leaseMs, ctx.settings.maxPerIp);
    if (!place.acquired) return { taken: false, retryAt: place.retryAt, reason: 'IP full', ip };
  }
  const got = await acquireSlot(ctx.kv.hosts, host, now, opts);
  if (!got.acquired) {
    if (ip) await releaseIp(ctx.kv.hosts, ip, opts.leaseId, now);
    return { taken: false, retryAt: got.retryAt, reason: got.reason };
  }
  return { taken: true, lease: { host, leaseId: opts.leaseId, ip } };
}

/**
 * A turn taken that no request will use (publishing its grant failed, or its domain's budget
 * refused it): the lease goes, the queued URL at `seq` goes back to the head of its lane.
 */
export async function giveBackTurn(ctx: StageContext, lease: HostLease, seq: number, lane: string, now: number): Promise<void> {
  await undoAcquire(ctx.kv.hosts, lease.host, lease.leaseId, seq, lane);
  if (lease.ip) await releaseIp(ctx.kv.hosts, lease.ip, lease.leaseId, now);
}

/**
 * A fetcher confirms the turn the gate took for its grant (see confirmLease in host-slot.ts
 * for what each answer means). Once confirmed ('ours', or 'resumed' by a redelivery) the
 * grant is this fetcher's, redelivered if it dies, so its URL no longer waits in its host's
 * queue; a fresh confirmation extends the place on the address as far as the lease.
 * `stage` names the counter of removed host-queue messages.
 */
export async function confirmTurn(ctx: StageContext, stage: string, lease: HostLease, leaseMs: number): Promise<LeaseCheck> {
  const { check, seq } = await confirmLeaseOf(ctx.kv.hosts, lease.host, lease.leaseId, ctx.clock.now(), leaseMs);
  // ('done' names a sequence only when it freed a lease the gate held again for a done URL)
  if (check === 'ours' || check === 'resumed' || check === 'done') await removeServed(ctx, stage, seq, lease.host);
  if (check === 'ours' && lease.ip) await extendIp(ctx.kv.hosts, lease.ip, lease.leaseId, ctx.clock.now() + leaseMs);
  return check;
}

/**
 * The lease of a turn whose request is under way, renewed by {@link keepTurn}: a process that
 * dies during a request holds its host this long at most.
 */
export const HELD_LEASE_MS = 15_000;

/** A confirmed turn kept alive while its request runs (see {@link keepTurn}). */
export interface KeptTurn {
  /** no more renewals: the turn is about to be released, or its handling ended */
  stop(): void;
}

/**
 * Keeps a confirmed turn's lease short while its request runs: the lease is renewed to
 * `leaseMs` ahead every third of it, so a fetcher that dies blocks its host for at most
 * `leaseMs` (the grant itself comes back after its ack wait), not for the longest a request
 * may take. Renewals end at `stop()`, when the lease is no longer ours, or at `latest`
 * (the longest the request and its publishing may take): a handling that never reaches its
 * release cannot hold the host for ever. A renewal that fails is tried at the next tick.
 */
export function keepTurn(ctx: StageContext, lease: HostLease, leaseMs: number, latest: number): KeptTurn {
  let stopped = false;
  const renew = async () => {
    const now = ctx.clock.now();
    const until = Math.min(now + leaseMs, latest);
    if (stopped || until <= now) return stop();
    const ours = await renewLease(ctx.kv.hosts, lease.host, lease.leaseId, now, until);
    if (!ours) return stop();
    if (lease.ip && !stopped) await extendIp(ctx.kv.hosts, lease.ip, lease.leaseId, until);
  };
  const timer = setInterval(() => void renew().catch((err: Error) => ctx.log.warn({ host: lease.host, err: err.message }, 'renewing a host lease failed; tried again')), Math.max(100, Math.floor(leaseMs / 3)));
  timer.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return { stop };
}

/** What a request's answer says for its host, as the release applies it. */
export interface TurnAnswer {
  /** when the host's next delay starts: after a request, {@link pacedFrom} its end */
  from: number;
  /** the answer, judged (failure-policy.ts): healthy, throttled, a server error, a network failure */
  feedback: FetchFeedback;
  /** the random draw for the backoff's jitter, when the caller has shown the decision already (previewRelease) */
  draw?: number;
  /**
   * Whether the lease is recorded as completed, so a redelivered grant is dropped (the
   * default); false when the request's outputs are not out yet, so a redelivery goes back
   * to the gate instead.
   */
  done?: boolean;
}

/**
 * The host's next delay runs from a little after our end of the response: a server measures
 * the gap from when it finished sending, which it may record some ms after we finished
 * reading (a busy event loop, its own clock), and every gap it sees must be the full delay.
 */
export const pacedFrom = (end: number): number => end + PACING_GUARD_MS;

/**
 * Ends the turn: frees the lease and the place on the address, and sets when the host's next
 * request may start from the answer (the adaptive delay, Retry-After, backoff, a pause).
 * The pacing decision, when there is one, is logged. Returns the host's slot after it.
 */
export async function releaseTurn(ctx: StageContext, lease: HostLease, answer: TurnAnswer): Promise<HostSlot> {
  const draw = answer.draw;
  const random = draw === undefined ? Math.random : () => draw;
  const slot = await releaseSlot(ctx.kv.hosts, lease.host, lease.leaseId, answer.from, answer.feedback, pacingOf(ctx), random, answer.done ?? true);
  if (lease.ip) await releaseIp(ctx.kv.hosts, lease.ip, lease.leaseId, ctx.clock.now());
  if (slot.last_decision) ctx.log.info({ host: lease.host, decision: slot.last_decision }, 'host pacing');
  return slot;
}

/**
 * What releaseTurn will decide for the host with this answer and draw, read before the
 * release (the host is this request's alone until then: one request in flight), so that
 * the URL's row can say it.
 */
export async function previewRelease(ctx: StageContext, host: string, answer: Required<Pick<TurnAnswer, 'from' | 'feedback' | 'draw'>>): Promise<Pacing> {
  const slot = (await readSlot(ctx.kv.hosts, host)) ?? emptySlot(host);
  return nextPacing(slot, answer.feedback, answer.from, pacingOf(ctx), () => answer.draw);
}
