/**
 * A per-process DNS cache that respects record TTLs. Every request and the gate's per-IP
 * accounting ask it, so a host is resolved once per TTL rather than once per request, and
 * both see the same address. TTLs are clamped to [minTtlMs, maxTtlMs] (a zero TTL would
 * mean a lookup per request; a week-long one would pin a moved site). Failures are cached
 * briefly (negativeTtlMs) so a dead domain is not asked again for every URL. Concurrent
 * lookups of one name share one query.
 *
 * Resolution: `dns.Resolver` (A then AAAA, with TTLs) against the system's servers or the
 * ones given; when that finds nothing the system resolver (`dns.lookup`: /etc/hosts, mDNS)
 * is asked, and its answer kept for minTtlMs.
 */
import dns from 'node:dns';

export interface DnsCacheOptions {
  minTtlMs: number;
  maxTtlMs: number;
  negativeTtlMs: number;
  /** `ADDRESS[:PORT]` of DNS servers to ask instead of the system's */
  servers?: readonly string[];
  now?: () => number;
  maxEntries?: number;
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

export class DnsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();
  private readonly resolver = new dns.promises.Resolver({ timeout: 5000, tries: 2 });
  private readonly now: () => number;
  /** lookups answered from the cache / sent to DNS, for tests and metrics */
  hits = 0;
  misses = 0;

  constructor(private readonly opts: DnsCacheOptions) {
    this.now = opts.now ?? Date.now;
    if (opts.servers && opts.servers.length > 0) this.resolver.setServers([...opts.servers]);
  }

  /** All addresses of `host` (IPv4 first), or throws DnsLookupError. */
  async lookup(host: string): Promise<string[]> {
    const name = host.toLowerCase().replace(/\.$/, '');
    const hit = this.entries.get(name);
    if (hit && hit.until > this.now()) {
      this.hits += 1;
      if (hit.error) throw hit.error;
      return hit.addresses;
    }
    let query = this.pending.get(name);
    if (!query) {
      this.misses += 1;
      query = this.resolve(name).finally(() => this.pending.delete(name));
      this.pending.set(name, query);
    }
    const entry = await query;
    if (entry.error) throw entry.error;
    return entry.addresses;
  }

  private clamp(ttlSeconds: number): number {
    return Math.min(this.opts.maxTtlMs, Math.max(this.opts.minTtlMs, ttlSeconds * 1000));
  }

  private async resolve(name: string): Promise<Entry> {
    const [v4, v6] = await Promise.allSettled([
      this.resolver.resolve4(name, { ttl: true }),
      this.resolver.resolve6(name, { ttl: true }),
    ]);
    const records = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    let entry: Entry;
    if (records.length > 0) {
      const ttl = Math.min(...records.map((r) => r.ttl));
      entry = { addresses: records.map((r) => r.address), error: null, until: this.now() + this.clamp(ttl) };
    } else {
      entry = await this.systemLookup(name, v4.status === 'rejected' ? (v4.reason as NodeJS.ErrnoException) : null);
    }
    if (this.entries.size >= (this.opts.maxEntries ?? 100_000)) this.entries.clear();
    this.entries.set(name, entry);
    return entry;
  }

  private async systemLookup(name: string, resolverError: NodeJS.ErrnoException | null): Promise<Entry> {
    // with explicit servers, their answer is final (tests rely on it; so does a user who set them)
    if (!this.opts.servers?.length) {
      try {
        const found = await dns.promises.lookup(name, { all: true, order: 'ipv4first' });
        if (found.length > 0) return { addresses: found.map((f) => f.address), error: null, until: this.now() + this.opts.minTtlMs };
      } catch {
        /* fall through to the resolver's error */
      }
    }
    const code = resolverError?.code ?? 'ENOTFOUND';
    const error = new DnsLookupError(code, `resolving ${name}: ${code === 'ENOTFOUND' || code === 'ENODATA' ? 'no such host' : code}`);
    return { addresses: [], error, until: this.now() + this.opts.negativeTtlMs };
  }
}
