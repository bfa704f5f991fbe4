/**
 * Addresses that recently failed to connect, remembered per process. A host with several
 * addresses (A and AAAA records, or a `--resolve` rule naming several) is tried in its DNS
 * order, except that an address that failed lately goes last: its next request does not pay
 * the failed attempt again, and the gate charges the request to the address it will go to
 * (the first one), so the per-IP cap counts the address actually used. An address that
 * connects again is forgotten at once; one that does not is retried first again after
 * `forgetAfterMs` (a dead server comes back, an address moves).
 */
export interface AddressHealthOptions {
  forgetAfterMs: number;
  now?: () => number;
  /** addresses remembered at most; past it the memory starts again (a bound, not a policy) */
  maxEntries?: number;
}

/** Five minutes: longer than a host's usual gap between requests, short against a crawl. */
export const FORGET_FAILED_ADDRESS_MS = 5 * 60_000;

export class AddressHealth {
  private readonly failedUntil = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly opts: AddressHealthOptions = { forgetAfterMs: FORGET_FAILED_ADDRESS_MS }) {
    this.now = opts.now ?? Date.now;
  }

  /** a connection to `address` failed: no answer, refused, or a proxy that could not reach it */
  connectFailed(address: string): void {
    if (this.failedUntil.size >= (this.opts.maxEntries ?? 10_000)) this.failedUntil.clear();
    this.failedUntil.set(address, this.now() + this.opts.forgetAfterMs);
  }

  connected(address: string): void {
    this.failedUntil.delete(address);
  }

  failedLately(address: string): boolean {
    const until = this.failedUntil.get(address);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.failedUntil.delete(address);
    return false;
  }

  /** The same items, those whose address failed lately moved to the end (each group in its order). */
  order<T extends { address: string }>(items: readonly T[]): T[] {
    const ok: T[] = [];
    const failed: T[] = [];
    for (const item of items) (this.failedLately(item.address) ? failed : ok).push(item);
    return failed.length === 0 ? [...items] : [...ok, ...failed];
  }
}
