import { casUpdate, parseJsonValue } from '../../../pipeline/kv-store.js';
import { type KvStore } from '../../../ports/kv.js';
import { nextPacing, type FetchFeedback, type PacingSettings } from './host-pacing.js';

/**
 * Per-host state, one KV entry per host in `crawl-hosts`, shared by every gate and fetch
 * process and changed only by compare-and-set. It is two things at once:
 *
 * - the politeness slot: one request in flight (the lease, which expires, so a fetcher
 *   that dies blocks its host only until `lease_until`), the gap before the next request
 *   (`next_allowed_at`, from the delay and the adaptive backoff), consecutive failures and
 *   a pause after too many;
 * - the head of the host's queue: URLs waiting for the host sit in the host-queue stream
 *   (`crawl.hostq.<p>.<hostkey>`); `cursor` is the newest one handed out. The newest one
 *   queued is kept under a key of its own (`_q.<host>`, see {@link QueueTail}): the gate's
 *   intake writes it once per URL, and on the slot's key those writes would crowd out the
 *   fetchers' releases. The host has work while tail > cursor.
 */
export interface HostSlot {
  host: string;
  next_allowed_at: number;
  /** the gap after the last request: max(Crawl-delay, minimum, adaptive), backoff included */
  delay_ms: number;
  lease_id: string | null;
  lease_until: number;
  /** host-queue sequence of the URL the lease was granted for (0: robots.txt) */
  lease_seq: number;
  /** a fetcher took the grant up: if the lease lapses unconfirmed, the grant never arrived */
  lease_confirmed: boolean;
  last_duration_ms: number;
  /** the last leases that completed: a grant redelivered after its fetch is recognised and dropped */
  done_leases: string[];
  cursor: number;
  /** consecutive failed requests (5xx, 429, timeouts, network errors) */
  failures: number;
  /** no request before this (after too many failures in a row); then one probe */
  paused_until: number;
  /** the last pacing decision, for logs and `crawl sql` */
  last_decision: string;
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
});

/** Older entries lack fields added later: fill them in. */
export const asSlot = (host: string, v: Partial<HostSlot> | null): HostSlot => ({ ...emptySlot(host), ...(v ?? {}) });

export const leaseLive = (slot: HostSlot, now: number) => slot.lease_id !== null && slot.lease_until > now;

/**
 * The cursor to read the queue from. A lease that lapsed without a fetcher confirming it
 * means the grant was never published (the gate died between taking the lease and
 * publishing): its URL is served again.
 */
export function effectiveCursor(slot: HostSlot, now: number): number {
  if (slot.lease_id !== null && slot.lease_seq > 0 && !slot.lease_confirmed && slot.lease_until <= now) {
    return Math.min(slot.cursor, slot.lease_seq - 1);
  }
  return slot.cursor;
}

/** The newest host-queue sequence of a host, under its own key. */
export interface QueueTail {
  host: string;
  tail_seq: number;
}
export const tailKey = (host: string) => `_q.${host}`;
export const TAIL_PREFIX = '_q.';

export const hasWork = (slot: HostSlot | null, tail: number, now: number) => tail > (slot ? effectiveCursor(slot, now) : 0);

/** The host's slot, or null when it has none yet. */
export async function readSlot(store: KvStore, host: string): Promise<HostSlot | null> {
  const entry = await store.get(host);
  return entry ? asSlot(host, parseJsonValue<Partial<HostSlot>>(entry.value)) : null;
}

/** The newest sequence queued for the host (0: none). */
export async function readTail(store: KvStore, host: string): Promise<number> {
  const entry = await store.get(tailKey(host));
  return entry ? parseJsonValue<QueueTail>(entry.value).tail_seq : 0;
}

/** When a request may start, or 0 if now: max(next allowed, end of a pause, end of a live lease). */
export function readyAt(slot: HostSlot, now: number): number {
  const at = Math.max(slot.next_allowed_at, slot.paused_until, leaseLive(slot, now) ? slot.lease_until : 0);
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
  opts: { leaseId: string; leaseMs: number; seq: number },
): { next?: HostSlot; result: AcquireResult } {
  const slot = current ?? emptySlot(host);
  const at = readyAt(slot, now);
  if (at > 0) return { result: { acquired: false, retryAt: at, reason: waitReason(slot, now) } };
  if (opts.seq > 0 && opts.seq <= effectiveCursor(slot, now)) {
    return { result: { acquired: false, retryAt: now, reason: 'already handed out' } };
  }
  const next: HostSlot = {
    ...slot,
    lease_id: opts.leaseId,
    lease_until: now + opts.leaseMs,
    lease_seq: opts.seq,
    lease_confirmed: false,
    cursor: opts.seq > 0 ? opts.seq : effectiveCursor(slot, now),
  };
  return { next, result: { acquired: true, slot: next } };
}

export async function acquireSlot(
  store: KvStore,
  host: string,
  now: number,
  opts: { leaseId: string; leaseMs: number; seq: number },
): Promise<AcquireResult> {
  return casUpdate<HostSlot, AcquireResult>(store, host, (current) => {
    const { next, result } = decideAcquire(current ? asSlot(host, current) : null, host, now, opts);
    return { value: next, result };
  });
}

/** A URL was queued for the host at `seq`. */
export async function noteQueued(store: KvStore, host: string, seq: number): Promise<void> {
  await casUpdate<QueueTail, void>(store, tailKey(host), (current) => {
    if (current && current.tail_seq >= seq) return { result: undefined };
    return { value: { host, tail_seq: seq }, result: undefined };
  });
}

/** The queued URL at `seq` needs no request (robots said no, or it is gone): move past it. */
export async function skipQueued(store: KvStore, host: string, seq: number): Promise<void> {
  await casUpdate<HostSlot, void>(store, host, (current) => {
    const slot = asSlot(host, current);
    if (slot.cursor >= seq) return { result: undefined };
    return { value: { ...slot, cursor: seq }, result: undefined };
  });
}

/** Publishing the grant failed: give the lease back and put the URL back at the head of the queue. */
export async function undoAcquire(store: KvStore, host: string, leaseId: string, seq: number): Promise<void> {
  await casUpdate<HostSlot, void>(store, host, (current) => {
    const slot = asSlot(host, current);
    if (slot.lease_id !== leaseId) return { result: undefined };
    return {
      value: { ...slot, lease_id: null, lease_until: 0, lease_seq: 0, cursor: seq > 0 && slot.cursor === seq ? seq - 1 : slot.cursor },
      result: undefined,
    };
  });
}

export type LeaseCheck = 'ours' | 'done' | 'lost';

/**
 * Confirms the lease is still ours and extends it to cover the request about to start.
 * 'done': this grant's request already completed (the grant was redelivered); 'lost': the
 * lease lapsed or another request holds the host.
 */
export async function confirmLease(store: KvStore, host: string, leaseId: string, now: number, leaseMs: number): Promise<LeaseCheck> {
  return casUpdate<HostSlot, LeaseCheck>(store, host, (current) => {
    if (current?.done_leases?.includes(leaseId)) return { result: 'done' };
    if (!current || current.lease_id !== leaseId || current.lease_until <= now) return { result: 'lost' };
    return { value: { ...asSlot(host, current), lease_until: now + leaseMs, lease_confirmed: true }, result: 'ours' };
  });
}

/**
 * Ends a request: frees the lease and sets when the next request to the host may start,
 * from the response (adaptive delay, Retry-After, backoff, pause). Returns the decision.
 */
export async function releaseSlot(
  store: KvStore,
  host: string,
  leaseId: string,
  end: number,
  feedback: FetchFeedback,
  pacing: PacingSettings,
  random: () => number = Math.random,
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
      done_leases: [...slot.done_leases, leaseId].slice(-DONE_LEASES_KEPT),
    };
    return { value: next, result: next };
  });
}
