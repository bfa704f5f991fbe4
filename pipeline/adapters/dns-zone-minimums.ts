/**
 * The SOA minimum of the zone a name lives in, which RFC 2308 makes the time a "no such name"
 * or "no address" answer may be kept. Node's resolver does not hand over the SOA that comes
 * in a negative answer's authority section, so it is asked for: of the name's registrable
 * domain, then of its public suffix (the zone a dead domain would be in). Those two are where
 * nearly every zone cut is, and both are shared by many names, so at breadth the question is
 * asked once per domain and once per suffix, not once per host. A name with no SOA found
 * there gets the caller's default; so does one whose SOA query fails.
 *
 * RFC 2308 takes the smaller of the SOA's own TTL and its MINIMUM field; Node's `resolveSoa`
 * gives only the fields, so the minimum alone is used (the caller clamps it).
 */
import type dns from 'node:dns';
import { getDomain, getPublicSuffix } from 'tldts';
import { TtlLru } from './ttl-lru.js';

export interface ZoneMinimumsOptions {
  maxEntries: number;
  /** how long a zone's SOA minimum is kept */
  keepMs: number;
  /** how long "this name is no zone" is kept */
  unknownKeepMs: number;
  now: () => number;
}

export class ZoneMinimums {
  /** zone apex candidate -> SOA minimum in seconds, or null when it has no SOA */
  private readonly known: TtlLru<number | null>;
  private readonly pending = new Map<string, Promise<number | null | 'failed'>>();

  constructor(
    private readonly resolver: dns.promises.Resolver,
    private readonly opts: ZoneMinimumsOptions,
  ) {
    this.known = new TtlLru(opts.maxEntries, opts.now);
  }

  /** Seconds a negative answer for `name` may be kept, or null when no SOA says. */
  async minimumFor(name: string, nameIsMissing: boolean): Promise<number | null> {
    const candidates = [getDomain(name, { allowPrivateDomains: true }), getPublicSuffix(name, { allowPrivateDomains: true })];
    for (const zone of new Set(candidates)) {
      // a name that does not exist is no zone's apex; one without an address may be
      if (!zone || (nameIsMissing && zone === name)) continue;
      const minimum = await this.soaMinimum(zone);
      if (minimum === 'failed') return null;
      if (minimum !== null) return minimum;
    }
    return null;
  }

  private async soaMinimum(zone: string): Promise<number | null | 'failed'> {
    const cached = this.known.get(zone);
    if (cached !== undefined) return cached;
    let query = this.pending.get(zone);
    if (!query) {
      query = this.ask(zone).finally(() => this.pending.delete(zone));
      this.pending.set(zone, query);
    }
    return query;
  }

  private async ask(zone: string): Promise<number | null | 'failed'> {
    try {
      const soa = await this.resolver.resolveSoa(zone);
      this.known.set(zone, soa.minttl, this.opts.now() + this.opts.keepMs);
      return soa.minttl;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTFOUND' && code !== 'ENODATA') return 'failed'; // not kept: the next negative answer asks again
      this.known.set(zone, null, this.opts.now() + this.opts.unknownKeepMs);
      return null;
    }
  }
}
