import type { KvStore } from '../../ports/kv.js';

/**
 * Scope keys a normalize process remembers as in the scope. The ones asked about are few in a
 * `domain`, `host` or `prefix` crawl (the seeds' and their redirects'), each asked for every
 * link: they stay, as the ones asked last. A crawl with many seeds, or jobs with their own,
 * would otherwise hold every key it ever met; past this many, the one asked about longest ago
 * is forgotten and read from KV again the next time (about 100 bytes each: ~10 MB at most).
 */
export const SCOPE_KEYS_KNOWN_MAX = 100_000;

/**
 * The crawl's scope is the keys its seeds (and their redirects) put in the `crawl-scope` bucket
 * (scope-keys.ts), so every normalize process agrees. This caches answers: positive answers
 * never change (keys are only added), so a key is remembered until it is forgotten to bound
 * the memory (then simply read again); negative ones are re-checked after a few seconds, so a
 * key added by another process is picked up quickly.
 */
export class ScopeCache {
  /** insertion order is recency: a key asked about again moves to the end */
  private readonly known = new Set<string>();
  private readonly unknownUntil = new Map<string, number>();
  private static readonly NEGATIVE_TTL_MS = 2_000;
  private static readonly MAX_NEGATIVE = 10_000;

  constructor(
    private readonly store: KvStore,
    private readonly maxKnown = SCOPE_KEYS_KNOWN_MAX,
  ) {}

  async add(key: string): Promise<void> {
    if (this.knows(key)) return;
    await this.store.put(key, new TextEncoder().encode('1'));
    this.remember(key);
    this.unknownUntil.delete(key);
  }

  async addAll(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((k) => this.add(k)));
  }

  async has(key: string, now: number): Promise<boolean> {
    if (this.knows(key)) return true;
    const until = this.unknownUntil.get(key);
    if (until !== undefined && until > now) return false;
    const entry = await this.store.get(key);
    if (entry) {
      this.remember(key);
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

  /** Scope keys remembered as in the scope (at most the bound given). */
  get knownCount(): number {
    return this.known.size;
  }

  /** Whether the key is remembered as in the scope; if so it is now the one asked about last. */
  private knows(key: string): boolean {
    if (!this.known.delete(key)) return false;
    this.known.add(key);
    return true;
  }

  private remember(key: string): void {
    this.known.delete(key);
    this.known.add(key);
    if (this.known.size > this.maxKnown) this.known.delete(this.known.values().next().value!);
  }
}
