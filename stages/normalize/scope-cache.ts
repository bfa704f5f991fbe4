import type { KvStore } from '../../ports/kv.js';

/**
 * The crawl's default scope is the set of the seeds' registrable domains, kept in the
 * `crawl-scope` bucket so every normalize process agrees. This caches answers briefly:
 * positive answers never change (domains are only added), negative ones are re-checked
 * after a few seconds, so a domain seeded by another process is picked up quickly.
 */
export class ScopeCache {
  private readonly known = new Set<string>();
  private readonly unknownUntil = new Map<string, number>();
  private static readonly NEGATIVE_TTL_MS = 2_000;
  private static readonly MAX_NEGATIVE = 10_000;

  constructor(private readonly store: KvStore) {}

  async add(domain: string): Promise<void> {
    if (this.known.has(domain)) return;
    await this.store.put(domain, new TextEncoder().encode('1'));
    this.known.add(domain);
    this.unknownUntil.delete(domain);
  }

  async has(domain: string, now: number): Promise<boolean> {
    if (this.known.has(domain)) return true;
    const until = this.unknownUntil.get(domain);
    if (until !== undefined && until > now) return false;
    const entry = await this.store.get(domain);
    if (entry) {
      this.known.add(domain);
      this.unknownUntil.delete(domain);
      return true;
    }
    if (this.unknownUntil.size >= ScopeCache.MAX_NEGATIVE) this.unknownUntil.clear();
    this.unknownUntil.set(domain, now + ScopeCache.NEGATIVE_TTL_MS);
    return false;
  }

}
