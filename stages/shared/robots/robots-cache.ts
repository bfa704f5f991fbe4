import { jsonValue, parseJsonValue } from '../../../pipeline/kv-store.js';
import { type KvStore } from '../../../ports/kv.js';
import type { CrawlSettings } from '../../../pipeline/settings.js';
import { compileRobots, robotsTokenOf, type CompiledRobots, type RobotsRecord } from './robots-rules.js';
import { robotsTtlMs, withFailureHistory } from './robots-fetch-policy.js';

export interface CachedRobots {
  record: RobotsRecord;
  compiled: CompiledRobots;
  expiresAt: number;
}

/**
 * robots.txt per host, stored in the `crawl-robots` bucket (shared, survives restarts), with
 * a small in-process cache of compiled rules. An entry is never used past its TTL
 * (24 h at most; an error-caused disallow-all much sooner), so expired rules are re-fetched
 * before the next URL of the host is released.
 *
 * The cache holds at most LOCAL_MAX hosts (what one costs: docs/capacity.md, M4), in two generations as casUpdate's entry cache does
 * (pipeline/kv-store.ts): new rules go into `young`; when it holds half of LOCAL_MAX it becomes
 * `old` and the one before is dropped; a host found in `old` moves back to `young`. So a crawl
 * over millions of hosts keeps the rules of those it is serving, and an idle host's are read
 * from the bucket again.
 */
export class RobotsCache {
  private young = new Map<string, CachedRobots>();
  private old = new Map<string, CachedRobots>();
  static readonly LOCAL_MAX = 5_000;

  constructor(
    private readonly store: KvStore,
    private readonly userAgentToken: string,
    private readonly ttl: { maxTtlMs: number; errorRetryMs: number },
  ) {}

  /** A record with its rules compiled for this crawler's token, and when it expires. */
  compile(record: RobotsRecord): CachedRobots {
    return {
      record,
      compiled: compileRobots(record, this.userAgentToken),
      expiresAt: record.fetchedAt + robotsTtlMs(record, this.ttl),
    };
  }

  /** the host's current rules, or null when there are none or they expired */
  async get(host: string, now: number): Promise<CachedRobots | null> {
    return (await this.lookup(host, now)).current;
  }

  /**
   * `current`: the rules to use, or null when there are none or they expired. `last`: the
   * stored record even when it expired; never for a verdict (an expired copy is refetched
   * before the host's next URL), only to know how long a robots.txt has been failing.
   */
  async lookup(host: string, now: number): Promise<{ current: CachedRobots | null; last: CachedRobots | null }> {
    const hit = this.recall(host);
    if (hit && hit.expiresAt > now) return { current: hit, last: hit };
    const entry = await this.store.get(host);
    if (!entry) return { current: null, last: null };
    const cached = this.compile(parseJsonValue<RobotsRecord>(entry.value));
    if (cached.expiresAt <= now) return { current: null, last: cached };
    this.remember(host, cached);
    return { current: cached, last: cached };
  }

  /** Stores a fetch result; a failure continues the failure history of the stored record. */
  async put(host: string, fetched: RobotsRecord): Promise<CachedRobots> {
    const previous = await this.store.get(host);
    const record = withFailureHistory(fetched, previous ? parseJsonValue<RobotsRecord>(previous.value) : null);
    await this.store.put(host, jsonValue(record));
    const cached = this.compile(record);
    this.remember(host, cached);
    return cached;
  }

  /** whether this cache compiles for `token` with these TTLs */
  serves(token: string, maxTtlMs: number, errorRetryMs: number): boolean {
    return this.userAgentToken === token && this.ttl.maxTtlMs === maxTtlMs && this.ttl.errorRetryMs === errorRetryMs;
  }

  /** hosts whose rules are held in memory now (at most LOCAL_MAX) */
  get size(): number {
    return this.young.size + this.old.size;
  }

  private recall(host: string): CachedRobots | undefined {
    const young = this.young.get(host);
    if (young) return young;
    const old = this.old.get(host);
    if (old) {
      this.old.delete(host);
      this.remember(host, old);
    }
    return old;
  }

  private remember(host: string, cached: CachedRobots): void {
    this.old.delete(host);
    this.young.set(host, cached);
    if (this.young.size >= RobotsCache.LOCAL_MAX / 2) {
      this.old = this.young;
      this.young = new Map();
    }
  }
}

const cachesByStore = new WeakMap<KvStore, RobotsCache>();

/**
 * The crawl's robots cache over its bucket: the crawl's robots token and the TTLs from the
 * settings. One per store and settings in a process, so the gate and the waiting-hosts report
 * beside it hold one copy of each host's rules, not two.
 */
export function robotsCacheFor(store: KvStore, settings: Pick<CrawlSettings, 'userAgent' | 'robotsToken' | 'robotsTtlMs' | 'robotsRetryMs'>): RobotsCache {
  const token = robotsTokenOf(settings);
  const known = cachesByStore.get(store);
  if (known?.serves(token, settings.robotsTtlMs, settings.robotsRetryMs)) return known;
  const cache = new RobotsCache(store, token, { maxTtlMs: settings.robotsTtlMs, errorRetryMs: settings.robotsRetryMs });
  cachesByStore.set(store, cache);
  return cache;
}
