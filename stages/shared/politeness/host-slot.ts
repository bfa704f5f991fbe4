import { casUpdate, parseJsonValue, readingFromLeader } from '../../../pipeline/kv-store.js';
import { type KvStore } from '../../../ports/kv.js';
import { nextPacing, type FetchFeedback, type Pacing, type PacingSettings } from './host-pacing.js';
import type { LastFailure } from '../../../schemas/index.js';

/**
 * Per-host state, one KV entry per host in `crawl-hosts`, shared by every gate and fetch
 * process and changed only by compare-and-set. It is two things at once:
 *
 * - the politeness slot: one request in flight (the lease, which expires, so a fetcher
 *   that dies blocks its host only until `lease_until`), the gap before the next request
 *   (`next_allowed_at`, from the delay and the adaptive backoff), consecutive failures and
 *   a pause after too many;
 * - the heads of the host's queues: URLs waiting for the host sit in the host-queue stream,
 *   one subject per lane (host-lanes.ts: a priority level, and a crawl job); `cursor` (the
 *   default lane) and `cursors` are the newest sequence handed out per lane. The newest one
 *   queued per lane is kept under a key of its own (`_q.<host>`, see {@link QueueTail}): the
 *   gate's intake writes it once per URL, and on the slot's key those writes would crowd out
 *   the fetchers' releases. A lane has work while its tail > its cursor.
 */
export interface HostSlot extends Pacing {
  host: string;
  lease_id: string | null;
  lease_until: number;
  /** host-queue sequence of the URL the lease was granted for (0: robots.txt) */
  lease_seq: number;
  /** a fetcher took the grant up: if the lease lapses unconfirmed, the grant never arrived */
  lease_confirmed: boolean;
  last_duration_ms: number;
  /** the last leases that completed: a grant redelivered after its fetch is recognised and dropped */
  done_leases: string[];
  /** the default lane's cursor (the deployment's crawl, normal priority: the queue's first form) */
  cursor: number;
  /** every other lane's cursor */
  cursors?: Record<string, number>;
  /** the lane of the URL the lease was granted for */
  lease_lane?: string;
  /** stride scheduling between lanes (host-lanes.ts): each lane's pass, and the pass last served */
  lane_pass?: Record<string, number>;
  vtime?: number;
}

/** Completed leases remembered per host; a redelivery comes within an ack wait, so a few suffice. */
const DONE_LEASES_KEPT = 16;

export const emptySlot = (host: string): HostSlot => ({
  host,
  next_allowed_at: 0,
  delay_ms: 0,
  lease_id: null,
  lease_until: 0,
  lease_seq: 0,
  lease_confirmed: false,
  last_duration_ms: 0,
  done_leases: [],
  cursor: 0,
  failures: 0,
  paused_until: 0,
  last_decision: '',
  pauses: 0,
  failing_since: 0,
  given_up_at: 0,
  last_failure: null,
});

/** Older entries lack fields added later: fill them in. */
export const asSlot = (host: string, v: Partial<HostSlot> | null): HostSlot => ({ ...emptySlot(host), ...(v ?? {}) });

export const leaseLive = (slot: HostSlot, now: number) => slot.lease_id !== null && slot.lease_until > now;

/** The lane's cursor as stored: the newest sequence handed out (or skipped). */
export const laneCursor = (slot: HostSlot, lane = ''): number => (lane === '' ? slot.cursor : (slot.cursors?.[lane] ?? 0));

function withLaneCursor(slot: HostSlot, lane: string, seq: number): HostSlot {
  return lane === '' ? { ...slot, cursor: seq } : { ...slot, cursors: { ...slot.cursors, [lane]: seq } };
}

/**
 * The cursor to read a lane from. A lease that lapsed without a fetcher confirming it
 * means the grant was never published (the gate died between taking the lease and
 * publishing): its URL is served again.
 */
export function effectiveCursor(slot: HostSlot, now: number, lane = ''): number {
  const cursor = laneCursor(slot, lane);
  if (slot.lease_id !== null && slot.lease_seq > 0 && !slot.lease_confirmed && slot.lease_until <= now && (slot.lease_lane ?? '') === lane) {
    return Math.min(cursor, slot.lease_seq - 1);
  }
  return cursor;
}

/** The newest host-queue sequence of each lane of a host, under its own key. */
export interface QueueTail {
  host: string;
  /** the default lane's */
  tail_seq: number;
  tails?: Record<string, number>;
}
export const tailKey = (host: string) => `_q.${host}`;
export const TAIL_PREFIX = '_q.';

/** Every lane's tail: '' (the default lane) and the others. */
export const tailsOf = (tail: QueueTail | null): Record<string, number> => ({ '': tail?.tail_seq ?? 0, ...(tail?.tails ?? {}) });

/** Lanes with URLs not handed out yet, and the cursor each is read from. */
export function lanesWithWork(slot: HostSlot | null, tail: QueueTail | null, now: number): Array<{ lane: string; cursor: number; tail: number }> {
  const out: Array<{ lane: string; cursor: number; tail: number }> = [];
  for (const [lane, seq] of Object.entries(tailsOf(tail))) {
    const cursor = slot ? effectiveCursor(slot, now, lane) : 0;
    if (seq > cursor) out.push({ lane, cursor, tail: seq });
  }
  return out;
}

export const hasWork = (slot: HostSlot | null, tail: QueueTail | null, now: number) => lanesWithWork(slot, tail, now).length > 0;

/** The host's slot, or null when it has none yet. */
export async function readSlot(store: Pick<KvStore, 'get'>, host: string): Promise<HostSlot | null> {
  const entry = await store.get(host);
  return entry ? asSlot(host, parseJsonValue<Partial<HostSlot>>(entry.value)) : null;
}

/** The newest sequence queued per lane of the host (null: nothing was ever queued). */
export async function readTail(store: Pick<KvStore, 'get'>, host: string): Promise<QueueTail | null> {
  const entry = await store.get(tailKey(host));
  return entry ? parseJsonValue<QueueTail>(entry.value) : null;
}

/**
 * A confirmed lease that lapsed without a release: its fetcher died during the request, and
 * the server may have answered as late as the lease's end, so the host's delay runs from there.
 */
const lapsedRequestEnd = (slot: HostSlot, now: number) => (slot.lease_id !== null && slot.lease_confirmed && slot.lease_until <= now ? slot.lease_until + slot.delay_ms : 0);

/** When a request may start, or 0 if now: max(next allowed, end of a pause, end of a live lease, a dead request's delay). */
export function readyAt(slot: HostSlot, now: number): number {
  const at = Math.max(slot.next_allowed_at, slot.paused_until, leaseLive(slot, now) ? slot.lease_until : 0, lapsedRequestEnd(slot, now));
  return at > now ? at : 0;
}

export type AcquireResult = { acquired: true; slot: HostSlot } | { acquired: false; retryAt: number; reason: string };

function waitReason(slot: HostSlot, now: number): string {
  if (leaseLive(slot, now)) return 'request in flight';
  if (slot.paused_until > now) return `paused after ${slot.failures} failures`;
  return 'host delay';
}

/**
 * Pure decision: may a request start now? `seq` > 0 takes the queued URL at that sequence
 * (the cursor moves past it in the same write); 0 is a robots.txt fetch.
 */
export function decideAcquire(
  current: HostSlot | null,
  host: string,
  now: number,
  opts: AcquireOptions,
): { next?: HostSlot; result: AcquireResult } {
  const slot = current ?? emptySlot(host);
  const lane = opts.lane ?? '';
  const at = readyAt(slot, now);
  if (at > 0) return { result: { acquired: false, retryAt: at, reason: waitReason(slot, now) } };
  if (opts.seq > 0 && opts.seq <= effectiveCursor(slot, now, lane)) {
    return { result: { acquired: false, retryAt: now, reason: 'already handed out' } };
  }
  // a lapsed grant no fetcher confirmed puts its URL back at the head of its lane before the
  // lease is overwritten (which ends the rewind effectiveCursor makes): whether this grant is
  // robots.txt (seq 0), that URL again, or another lane's URL, it is served later, not skipped
  const settled = withLaneCursor(slot, slot.lease_lane ?? '', effectiveCursor(slot, now, slot.lease_lane ?? ''));
  // a URL's lane moves past it
  const moved = opts.seq > 0 ? withLaneCursor(settled, lane, opts.seq) : settled;
  const next: HostSlot = {
    ...moved,
    lease_id: opts.leaseId,
    lease_until: now + opts.leaseMs,
    lease_seq: opts.seq,
    lease_lane: lane,
    lease_confirmed: false,
    ...(opts.stride ? { lane_pass: opts.stride.passes, vtime: opts.stride.vtime } : {}),
  };
  return { next, result: { acquired: true, slot: next } };
}

export interface AcquireOptions {
  leaseId: string;
  leaseMs: number;
  /** the host-queue sequence of the URL granted; 0 for a robots.txt fetch */
  seq: number;
  /** its lane (default: the default lane) */
  lane?: string;
  /** stride scheduling (host-lanes.ts): the virtual time this grant serves at, and the lanes' passes after it */
  stride?: { vtime: number; passes: Record<string, number> };
}

export async function acquireSlot(
  store: KvStore,
  host: string,
  now: number,
  opts: AcquireOptions,
): Promise<AcquireResult> {
  return casUpdate<HostSlot, AcquireResult>(store, host, (current) => {
    const { next, result } = decideAcquire(current ? asSlot(host, current) : null, host, now, opts);
    return { value: next, result };
  });
}

/** A URL was queued for the host at `seq`, in `lane`. */
export async function noteQueued(store: KvStore, host: string, seq: number, lane = ''): Promise<void> {
  await casUpdate<QueueTail, void>(store, tailKey(host), (current) => {
    if ((tailsOf(current)[lane] ?? 0) >= seq) return { result: undefined };
    const base = current ?? { host, tail_seq: 0 };
    return { value: lane === '' ? { ...base, tail_seq: seq } : { ...base, tails: { ...base.tails, [lane]: seq } }, result: undefined };
  });
}

/** The queued URL at `seq` needs no request (robots said no, or it is gone): move its lane past it. */
export async function skipQueued(store: KvStore, host: string, seq: number, lane = ''): Promise<void> {
  await casUpdate<HostSlot, void>(store, host, (current) => {
    const slot = asSlot(host, current);
    if (laneCursor(slot, lane) >= seq) return { result: undefined };
    return { value: withLaneCursor(slot, lane, seq), result: undefined };
  });
}

/**
 * Publishing the grant failed: give the lease back and put the URL back at the head of its
 * lane. Unless a fetcher confirmed the lease meanwhile: then the publish did land (its ack was
 * lost, as in a leader election) and the grant is being fetched, so nothing is given back;
 * rewinding under it would serve the URL again after its fetch.
 */
export async function undoAcquire(store: KvStore, host: string, leaseId: string, seq: number, lane = ''): Promise<void> {
  await casUpdate<HostSlot, void>(store, host, (current) => {
    const slot = asSlot(host, current);
    if (slot.lease_id !== leaseId || slot.lease_confirmed) return { result: undefined };
    const cursor = laneCursor(slot, lane);
    const back = seq > 0 && cursor === seq ? withLaneCursor(slot, lane, seq - 1) : slot;
    return { value: { ...back, lease_id: null, lease_until: 0, lease_seq: 0 }, result: undefined };
  });
}

export type LeaseCheck = 'ours' | 'resumed' | 'done' | 'lost';

/**
 * Confirms the lease is still ours and extends it to cover the request about to start.
 * 'done': this grant's request already completed (the grant was redelivered); 'lost': the
 * lease lapsed unconfirmed or another request holds the host; 'resumed': the lease is ours
 * (live, or lapsed with no grant since) but an earlier delivery of this grant confirmed it already, so a request may have been made
 * whose end was never recorded (its outputs failed to publish, or its fetcher died): the
 * host must not be asked again before that answer's pacing is applied.
 */
export async function confirmLease(store: KvStore, host: string, leaseId: string, now: number, leaseMs: number): Promise<LeaseCheck> {
  return (await confirmLeaseOf(store, host, leaseId, now, leaseMs)).check;
}

/**
 * confirmLease, and the host-queue sequence of the URL the lease is for (0: none, or not
 * ours): once confirmed, that URL no longer waits in its queue (served-urls.ts).
 */
export async function confirmLeaseOf(store: KvStore, host: string, leaseId: string, now: number, leaseMs: number): Promise<{ check: LeaseCheck; seq: number }> {
  type Seen = { check: LeaseCheck; seq: number };
  const check = (current: HostSlot | null): { value?: HostSlot; result: Seen } => {
    if (current?.done_leases?.includes(leaseId)) {
      // the gate holds this completed lease again: it served the same URL a second time (its
      // queue was rewound under a grant that was being fetched). The URL is done and the host
      // must not wait for a request nobody will make: the lease goes, the cursor stays past it
      if (current.lease_id === leaseId) return { value: { ...asSlot(host, current), lease_id: null, lease_until: 0, lease_seq: 0, lease_confirmed: false }, result: { check: 'done', seq: current.lease_seq ?? 0 } };
      return { result: { check: 'done', seq: 0 } };
    }
    if (!current || current.lease_id !== leaseId) return { result: { check: 'lost', seq: 0 } };
    // a confirmed lease that lapsed with no other request since is still this grant's: its
    // first fetcher died, and the request counts as one whose end is unknown ('resumed')
    if (current.lease_until <= now && !current.lease_confirmed) return { result: { check: 'lost', seq: 0 } };
    const extended = { ...asSlot(host, current), lease_until: now + leaseMs, lease_confirmed: true };
    return { value: extended, result: { check: current.lease_confirmed ? 'resumed' : 'ours', seq: current.lease_seq ?? 0 } };
  };
  const seen = await casUpdate<HostSlot, Seen>(store, host, check);
  // 'lost' drops the grant and writes nothing: a replica that lags (a direct get may be answered
  // by any server of a replicated bucket) can show the slot from before the gate took the
  // lease, and the host would sit until the lease lapsed. Only the leader's copy says so.
  if (seen.check !== 'lost') return seen;
  const leader = readingFromLeader(store);
  if (leader === store) return seen;
  // the leader unreachable (an election) or not readable by this user (permissions from before
  // this check): the replica's answer stands, as it did before; a grant dropped is regranted
  return casUpdate<HostSlot, Seen>(leader, host, check).catch(() => seen);
}

/**
 * Renews a confirmed lease that is still ours, to `until` (never earlier than it was).
 * Returns whether it is still ours: false once it was released, lapsed or taken over.
 */
export async function renewLease(store: KvStore, host: string, leaseId: string, now: number, until: number): Promise<boolean> {
  return casUpdate<HostSlot, boolean>(store, host, (current) => {
    if (!current || current.lease_id !== leaseId || current.lease_until <= now) return { result: false };
    if (current.lease_until >= until) return { result: true };
    return { value: { ...asSlot(host, current), lease_until: until }, result: true };
  });
}

/**
 * Ends a request: frees the lease and sets when the next request to the host may start,
 * from the response (adaptive delay, Retry-After, backoff, pause). Returns the decision.
 * `done` (the default) records the lease as completed, so a redelivery of its grant is
 * dropped; without it a redelivery finds the lease gone and goes back to the gate.
 */
export async function releaseSlot(
  store: KvStore,
  host: string,
  leaseId: string,
  end: number,
  feedback: FetchFeedback,
  pacing: PacingSettings,
  random: () => number = Math.random,
  done = true,
): Promise<HostSlot> {
  return casUpdate<HostSlot, HostSlot>(store, host, (current) => {
    const slot = asSlot(host, current);
    const ours = slot.lease_id === leaseId;
    const paced = nextPacing(slot, feedback, end, pacing, random);
    const next: HostSlot = {
      ...slot,
      ...paced,
      // a late release (the lease was taken over) must not shorten the current holder's wait
      next_allowed_at: Math.max(slot.next_allowed_at, paced.next_allowed_at),
      lease_id: ours ? null : slot.lease_id,
      lease_until: ours ? 0 : slot.lease_until,
      lease_seq: ours ? 0 : slot.lease_seq,
      lease_confirmed: ours ? false : slot.lease_confirmed,
      last_duration_ms: feedback.durationMs,
      done_leases: done ? [...slot.done_leases, leaseId].slice(-DONE_LEASES_KEPT) : slot.done_leases,
    };
    return { value: next, result: next };
  });
}
