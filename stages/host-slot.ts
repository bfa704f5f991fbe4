import { casUpdate, type KvStore } from '../pipeline/kv-store.js';
import { jitter } from './stage-ids.js';

/**
 * Per-host politeness state, one KV entry per host, shared by every gate and fetch process
 * and changed only by compare-and-set. It enforces: one request in flight per host (the
 * lease), and a gap of at least `delay_ms` between the end of one request and the start of
 * the next (`next_allowed_at`). A lease expires, so a fetcher that dies mid-request blocks
 * its host only until `lease_until`.
 */
export interface HostSlot {
  next_allowed_at: number;
  delay_ms: number;
  lease_id: string | null;
  lease_until: number;
  /** end of the schedule handed out to waiting URLs: spreads their redeliveries out */
  reserved_until: number;
  last_duration_ms: number;
  /** the last leases that completed: a grant redelivered after its fetch is recognised and dropped */
  done_leases?: string[];
}

/** Completed leases remembered per host; a redelivery comes within an ack wait, so a few suffice. */
const DONE_LEASES_KEPT = 32;

export const emptySlot = (): HostSlot => ({
  next_allowed_at: 0,
  delay_ms: 0,
  lease_id: null,
  lease_until: 0,
  reserved_until: 0,
  last_duration_ms: 0,
});

export type AcquireResult = { acquired: true; slot: HostSlot } | { acquired: false; waitMs: number; reason: string };

const leaseLive = (slot: HostSlot, now: number) => slot.lease_id !== null && slot.lease_until > now;

/**
 * Pure decision: may a request start now? If not, how long to wait. A first-time waiter
 * takes its place in the host's schedule (`reserved_until`) so that a backlog of N URLs
 * is redelivered about once each, not N times per request.
 */
export function decideAcquire(
  current: HostSlot | null,
  now: number,
  opts: { leaseId: string; leaseMs: number; firstAttempt: boolean },
): { next?: HostSlot; result: AcquireResult } {
  const slot = current ?? emptySlot();
  if (!leaseLive(slot, now) && slot.next_allowed_at <= now) {
    const next = { ...slot, lease_id: opts.leaseId, lease_until: now + opts.leaseMs };
    return { next, result: { acquired: true, slot: next } };
  }
  const busyUntil = leaseLive(slot, now) ? Math.max(slot.next_allowed_at, now + Math.max(slot.last_duration_ms, 50)) : slot.next_allowed_at;
  const spacing = Math.max(slot.delay_ms, 20) + Math.max(slot.last_duration_ms, 20);
  const reason = leaseLive(slot, now) ? 'request in flight' : 'host delay';
  if (opts.firstAttempt) {
    const at = Math.max(busyUntil, slot.reserved_until);
    const next = { ...slot, reserved_until: at + spacing };
    return { next, result: { acquired: false, waitMs: Math.max(10, at - now) + jitter(20), reason } };
  }
  return { result: { acquired: false, waitMs: Math.max(10, busyUntil - now) + jitter(Math.min(spacing, 250)), reason } };
}

export async function acquireSlot(
  store: KvStore,
  host: string,
  now: number,
  opts: { leaseId: string; leaseMs: number; firstAttempt: boolean },
): Promise<AcquireResult> {
  return casUpdate<HostSlot, AcquireResult>(store, host, (current) => {
    const { next, result } = decideAcquire(current, now, opts);
    return { value: next, result };
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
    return { value: { ...current, lease_until: now + leaseMs }, result: 'ours' };
  });
}

/** Ends a request: frees the lease and sets when the next request to the host may start. */
export async function releaseSlot(
  store: KvStore,
  host: string,
  leaseId: string,
  end: number,
  delayMs: number,
  durationMs: number,
): Promise<void> {
  await casUpdate<HostSlot, void>(store, host, (current) => {
    const slot = current ?? emptySlot();
    const ours = slot.lease_id === leaseId;
    return {
      value: {
        ...slot,
        lease_id: ours ? null : slot.lease_id,
        lease_until: ours ? 0 : slot.lease_until,
        next_allowed_at: Math.max(slot.next_allowed_at, end + delayMs),
        delay_ms: delayMs,
        last_duration_ms: durationMs,
        done_leases: [...(slot.done_leases ?? []), leaseId].slice(-DONE_LEASES_KEPT),
      },
      result: undefined,
    };
  });
}
