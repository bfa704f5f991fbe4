import { casUpdate } from '../../../pipeline/kv-store.js';
import { type KvStore } from '../../../ports/kv.js';

/**
 * Per-IP politeness: hosts that resolve to one address (shared hosting: hundreds of small
 * sites on one server) share a cap on requests in flight. One KV entry per address in the
 * hosts bucket, changed by compare-and-set; each request holds a lease that expires, so a
 * fetcher that dies frees its place on its own.
 */
export interface IpSlot {
  ip: string;
  leases: Array<{ id: string; until: number }>;
}

/** The keys of addresses' entries start so: `_` cannot start a host name, so it never meets a host's key. */
export const IP_KEY_PREFIX = '_ip.';
export const ipKey = (ip: string) => `${IP_KEY_PREFIX}${ip}`;

export type IpAcquire = { acquired: true } | { acquired: false; retryAt: number };

export function decideIpAcquire(current: IpSlot | null, ip: string, now: number, leaseId: string, until: number, cap: number): { next?: IpSlot; result: IpAcquire } {
  const live = (current?.leases ?? []).filter((l) => l.until > now && l.id !== leaseId);
  if (live.length >= cap) {
    return { result: { acquired: false, retryAt: Math.min(...live.map((l) => l.until)) } };
  }
  return { next: { ip, leases: [...live, { id: leaseId, until }] }, result: { acquired: true } };
}

export async function acquireIp(store: KvStore, ip: string, now: number, leaseId: string, until: number, cap: number): Promise<IpAcquire> {
  return casUpdate<IpSlot, IpAcquire>(store, ipKey(ip), (current) => {
    const { next, result } = decideIpAcquire(current, ip, now, leaseId, until, cap);
    return { value: next, result };
  });
}

export async function extendIp(store: KvStore, ip: string, leaseId: string, until: number): Promise<void> {
  await casUpdate<IpSlot, void>(store, ipKey(ip), (current) => {
    if (!current?.leases.some((l) => l.id === leaseId)) return { result: undefined };
    return { value: { ip, leases: current.leases.map((l) => (l.id === leaseId ? { id: leaseId, until } : l)) }, result: undefined };
  });
}

export async function releaseIp(store: KvStore, ip: string, leaseId: string, now: number): Promise<void> {
  await casUpdate<IpSlot, void>(store, ipKey(ip), (current) => {
    if (!current) return { result: undefined };
    const leases = current.leases.filter((l) => l.id !== leaseId && l.until > now);
    if (leases.length === current.leases.length) return { result: undefined };
    return { value: { ip, leases }, result: undefined };
  });
}
