/**
 * A per-process DNS cache that respects record TTLs. Every request and the gate's per-IP
 * accounting ask it, so a host is resolved once per TTL rather than once per request, and
 * both see the same address. Built for crawls of tens of thousands of new hosts:
 *
 * - Answers are kept for their TTL, clamped to [minTtlMs, maxTtlMs] (a zero TTL would mean a
 *   lookup per request; a week-long one would pin a moved site).
 * - Negative answers are kept too (RFC 2308): NXDOMAIN and NODATA for the SOA minimum of the
 *   zone when it has one (see `ZoneMinimums`), else negativeTtlMs, at most negativeMaxTtlMs;
 *   SERVFAIL, timeouts and refusals for failureTtlMs, shorter, since the server may recover
 *   (RFC 2308 §7: at most five minutes). A dead domain is then not asked again for every URL.
 * - At most maxInFlight lookups are out at once; the others queue in arrival order. A crawl
 *   that discovers 20,000 hosts at once would otherwise send 40,000 queries (A and AAAA) at
 *   its resolver, which drops what it cannot hold (dnsmasq forwards 150 at once by default).
 * - Concurrent lookups of one name share one query.
 * - At most maxEntries names are kept, the least recently used leaving first; expired
 *   entries leave when read or swept (once a minute).
 *
 * Resolution: `dns.Resolver` (A and AAAA, with TTLs) against the system's servers or the
 * ones given; when that finds nothing the system resolver (`dns.lookup`: /etc/hosts, mDNS)
 * is asked, and its answer kept for minTtlMs.
 */
import dns from 'node:dns';
import { Semaphore } from '../semaphore.js';
import { TtlLru } from './ttl-lru.js';
import { ZoneMinimums } from './dns-zone-minimums.js';

export interface DnsCacheOptions {
  minTtlMs: number;
  maxTtlMs: number;
  /** NXDOMAIN and NODATA are kept this long when the zone's SOA gives no minimum */
  negativeTtlMs: number;
  /** ...and at most this long whatever the SOA says (default 3600000: RFC 2308 §5 suggests one to three hours) */
  negativeMaxTtlMs?: number;
  /** SERVFAIL, timeouts, refusals are kept this long (default 5000) */
  failureTtlMs?: number;
  /** lookups sent to DNS at once; the others wait (default 64) */
  maxInFlight?: number;
  /** names kept (default 100000) */
  maxEntries?: number;
  /** `ADDRESS[:PORT]` of DNS servers to ask instead of the system's */
  servers?: readonly string[];
  now?: () => number;
}

/** The DNS options of a crawl's settings (`--dns-*`). */
export function dnsCacheOptions(s: {
  dnsMinTtlMs: number;
  dnsMaxTtlMs: number;
  dnsNegativeTtlMs: number;
  dnsNegativeMaxTtlMs: number;
  dnsFailureTtlMs: number;
  dnsMaxInFlight: number;
  dnsCacheEntries: number;
  dnsServers: readonly string[];
}): DnsCacheOptions {
  return {
    minTtlMs: s.dnsMinTtlMs,
    maxTtlMs: s.dnsMaxTtlMs,
    negativeTtlMs: s.dnsNegativeTtlMs,
    negativeMaxTtlMs: s.dnsNegativeMaxTtlMs,
    failureTtlMs: s.dnsFailureTtlMs,
    maxInFlight: s.dnsMaxInFlight,
    maxEntries: s.dnsCacheEntries,
    servers: s.dnsServers,
  };
}

export class DnsLookupError extends Error {
  override readonly name = 'DnsLookupError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Entry {
  addresses: string[];
  error: DnsLookupError | null;
  until: number;
}

/** What the cache has done since it started; `inFlight`, `queued` and `entries` are now. */
export interface DnsCacheStats {
  /** lookup() calls */
  lookups: number;
  /** answered from a cached address list */
  hits: number;
  /** answered from a cached failure (NXDOMAIN, NODATA, SERVFAIL, timeout) */
  negativeHits: number;
  /** joined a lookup of the same name already under way */
  shared: number;
  /** resolved: sent to DNS (after waiting for a slot if all were taken) */
  resolved: number;
  inFlight: number;
  queued: number;
  entries: number;
}

const NEGATIVE = new Set(['ENOTFOUND', 'ENODATA']);

export class DnsCache {
  private readonly entries: TtlLru<Entry>;
  private readonly pending = new Map<string, Promise<Entry>>();
  private readonly resolver = new dns.promises.Resolver({ timeout: 5000, tries: 2 });
  private readonly slots: Semaphore;
  private readonly zones: ZoneMinimums;
  private readonly now: () => number;
  private readonly counts = { lookups: 0, hits: 0, negativeHits: 0, shared: 0, resolved: 0, inFlight: 0 };

  constructor(private readonly opts: DnsCacheOptions) {
    this.now = opts.now ?? Date.now;
    if (opts.servers && opts.servers.length > 0) this.resolver.setServers([...opts.servers]);
    const maxEntries = opts.maxEntries ?? 100_000;
    this.entries = new TtlLru(maxEntries, this.now);
    this.slots = new Semaphore(Math.max(1, opts.maxInFlight ?? 64));
    this.zones = new ZoneMinimums(this.resolver, { maxEntries: Math.max(1, Math.ceil(maxEntries / 10)), keepMs: this.negativeMaxTtlMs, unknownKeepMs: opts.negativeTtlMs, now: this.now });
  }

  stats(): DnsCacheStats {
    return { ...this.counts, queued: this.slots.waiting, entries: this.entries.size };
  }

  /** All addresses of `host` (IPv4 first), or throws DnsLookupError. */
  async lookup(host: string): Promise<string[]> {
    this.counts.lookups += 1;
    const name = host.toLowerCase().replace(/\.$/, '');
    const hit = this.entries.get(name);
    if (hit) {
      if (hit.error) {
        this.counts.negativeHits += 1;
        throw hit.error;
      }
      this.counts.hits += 1;
      return hit.addresses;
    }
    let query = this.pending.get(name);
    if (query) this.counts.shared += 1;
    else {
      query = this.resolveInSlot(name).finally(() => this.pending.delete(name));
      this.pending.set(name, query);
    }
    const entry = await query;
    if (entry.error) throw entry.error;
    return entry.addresses;
  }

  private get negativeMaxTtlMs(): number {
    return this.opts.negativeMaxTtlMs ?? 3_600_000;
  }

  private async resolveInSlot(name: string): Promise<Entry> {
    await this.slots.acquire();
    this.counts.inFlight += 1;
    this.counts.resolved += 1;
    try {
      const entry = await this.resolve(name);
      this.entries.set(name, entry, entry.until);
      return entry;
    } finally {
      this.counts.inFlight -= 1;
      this.slots.release();
    }
  }

  private clamp(ttlMs: number, min: number, max: number): number {
    return Math.min(max, Math.max(min, ttlMs));
  }

  private async resolve(name: string): Promise<Entry> {
    const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(name, { ttl: true }), this.resolver.resolve6(name, { ttl: true })]);
    const records = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    if (records.length > 0) {
      const ttl = Math.min(...records.map((r) => r.ttl));
      return { addresses: records.map((r) => r.address), error: null, until: this.now() + this.clamp(ttl * 1000, this.opts.minTtlMs, this.opts.maxTtlMs) };
    }
    const found = await this.systemLookup(name);
    if (found) return found;
    const code = failureCode(v4, v6);
    const error = new DnsLookupError(code, `resolving ${name}: ${NEGATIVE.has(code) ? 'no such host' : code}`);
    return { addresses: [], error, until: this.now() + (await this.negativeTtl(name, code)) };
  }

  /** How long a failure is kept: RFC 2308 for "no such name" and "no address", briefly for the rest. */
  private async negativeTtl(name: string, code: string): Promise<number> {
    const failureTtlMs = this.opts.failureTtlMs ?? 5000;
    if (!NEGATIVE.has(code)) return failureTtlMs;
    const minimum = await this.zones.minimumFor(name, code === 'ENOTFOUND');
    if (minimum === null) return this.clamp(this.opts.negativeTtlMs, 0, this.negativeMaxTtlMs);
    // a zone that says 0 would have every URL of a dead domain ask again; keep it briefly at least
    return this.clamp(minimum * 1000, failureTtlMs, this.negativeMaxTtlMs);
  }

  private async systemLookup(name: string): Promise<Entry | null> {
    // with explicit servers, their answer is final (tests rely on it; so does a user who set them)
    if (this.opts.servers?.length) return null;
    try {
      const found = await dns.promises.lookup(name, { all: true, order: 'ipv4first' });
      if (found.length > 0) return { addresses: found.map((f) => f.address), error: null, until: this.now() + this.opts.minTtlMs };
    } catch {
      /* the resolver's error stands */
    }
    return null;
  }
}

/**
 * One code for a name from its A and AAAA answers: NXDOMAIN from either is final (the name
 * does not exist); NODATA only when both say so; otherwise the failure (SERVFAIL, timeout...).
 */
function failureCode(v4: PromiseSettledResult<unknown>, v6: PromiseSettledResult<unknown>): string {
  const codes = [v4, v6].map((r) => (r.status === 'rejected' ? ((r.reason as NodeJS.ErrnoException).code ?? 'EFAIL') : 'ENODATA'));
  if (codes.includes('ENOTFOUND')) return 'ENOTFOUND';
  return codes.find((c) => c !== 'ENODATA') ?? 'ENODATA';
}
