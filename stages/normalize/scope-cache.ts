import type { KvStore } from '../../ports/kv.js';

/**
 * The crawl's scope is the keys its seeds (and their redirects) put in the `crawl-scope` bucket
 * (scope-keys.ts), so every normalize process agrees. This caches answers briefly: positive
 * answers never change (keys are only added), negative ones are re-checked after a few seconds,
 * so a key added by another process is picked up quickly.
 */
export class ScopeCache {
  private readonly known = new Set<string>();
  private readonly unknownUntil = new Map<string, number>();
  private static readonly NEGATIVE_TTL_MS = 2_000;
  private static readonly MAX_NEGATIVE = 10_000;

  constructor(private readonly store: KvStore) {}

  async add(key: string): Promise<void> {
    if (this.known.has(key)) return;
    await this.store.put(key, new TextEncoder().encode('1'));
    this.known.add(key);
    this.unknownUntil.delete(key);
  }

  async addAll(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((k) => this.add(k)));
  }

  async has(key: string, now: number): Promise<boolean> {
    if (this.known.has(key)) return true;
    const until = this.unknownUntil.get(key);
    if (until !== undefined && until > now) return false;
    const entry = await this.store.get(key);
    if (entry) {
      this.known.add(key);
      this.unknownUntil.delete(key);
      return true;
    }
    if (this.unknownUntil.size >= ScopeCache.MAX_NEGATIVE) this.unknownUntil.clear();
    this.unknownUntil.set(key, now + ScopeCache.NEGATIVE_TTL_MS);
    return false;
  }

  /** Whether any of `keys` is in the scope (asked in order, the first yes ends it). */
  async hasAny(keys: readonly string[], now: number): Promise<boolean> {
    for (const k of keys) if (await this.has(k, now)) return true;
    return false;
  }
}
