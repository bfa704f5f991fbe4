import { randomBytes } from 'node:crypto';
import { casUpdate } from '../../pipeline/kv-store.js';
import type { KvStore } from '../../ports/kv.js';

const LEASE_KEY = '_service.leader';

/**
 * One `crawl serve` process at a time starts runs and hands out due revisits: the one holding
 * this lease, a KV entry renewed by compare-and-set. Another service takes over once the
 * holder stops renewing (it died, or its connection did) for `ttlMs`; until then it only
 * answers the API, which any number of services can.
 */
export class ServiceLease {
  readonly member = `serve-${randomBytes(6).toString('hex')}`;

  constructor(
    private readonly kv: KvStore,
    private readonly ttlMs = 15_000,
  ) {}

  /** Takes or renews the lease; true while this process holds it. */
  async hold(now: number): Promise<boolean> {
    return casUpdate<{ member: string; until: number }, boolean>(this.kv, LEASE_KEY, (current) => {
      if (current && current.member !== this.member && current.until > now) return { result: false };
      return { value: { member: this.member, until: now + this.ttlMs }, result: true };
    });
  }

  async release(): Promise<void> {
    await casUpdate<{ member: string; until: number }, void>(this.kv, LEASE_KEY, (current) =>
      current?.member === this.member ? { value: { member: this.member, until: 0 }, result: undefined } : { result: undefined },
    );
  }
}
