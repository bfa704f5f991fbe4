/**
 * Lookups per second with many fingerprints stored, and what the per-key bound costs.
 * The stored fingerprints are uniform random 64-bit values (computing a million SimHashes
 * of real pages would take longer than the bench may): with them every block value is
 * equally likely, the lists are as even as they get, and a lookup reads k+1 lists of
 * ~stored/65,536 entries at k=3.
 */
import type { KvStore } from '../ports/kv.js';
import { jsonValue } from '../pipeline/kv-store.js';
import { findWithin, fingerprintKeys, withinDistance, type FingerprintEntry } from '../stages/simhash/fingerprint-index.js';
import { simhashToHex } from '../stages/shared/content-identity/simhash.js';
import { mulberry32 } from '../testweb/prng.js';
import { pool } from './near-dup-add-cost.js';
import { median } from './stats.js';

export const K = 3;

export const storedUrl = (i: number) => `https://h${i % 50_000}.bench.test/p/${i}`;

/** Pages 0..n-1 (page i fetched at time i) with their index keys, computed once for every bound tried. */
export interface StoredPages {
  fps: readonly bigint[];
  entries: FingerprintEntry[];
  keys: string[][];
}

export function storedPages(fps: readonly bigint[]): StoredPages {
  return {
    fps,
    entries: fps.map((h, i) => ({ h: simhashToHex(h), url: storedUrl(i), t: i })),
    keys: fps.map((h) => fingerprintKeys(h, K)),
  };
}

/** The index's lists after adding the pages in order, as addAndFindOriginal leaves them: appended, oldest evicted past `max`. */
export function buildLists(pages: StoredPages, max: number): Map<string, FingerprintEntry[]> {
  const lists = new Map<string, FingerprintEntry[]>();
  pages.entries.forEach((e, i) => {
    for (const key of pages.keys[i]!) {
      let list = lists.get(key);
      if (!list) lists.set(key, (list = []));
      list.push(e);
      if (list.length > max) list.shift();
    }
  });
  return lists;
}

export function listStats(lists: Map<string, FingerprintEntry[]>, max: number): { keys: number; meanLength: number; maxLength: number; fullKeys: number } {
  let total = 0;
  let longest = 0;
  let full = 0;
  for (const list of lists.values()) {
    total += list.length;
    longest = Math.max(longest, list.length);
    if (list.length >= max) full++;
  }
  return { keys: lists.size, meanLength: total / lists.size, maxLength: longest, fullKeys: full };
}

/** Each key with its value as the index stores it (encoded once, written to every store). */
export const encodeLists = (lists: Map<string, FingerprintEntry[]>): Array<[string, Uint8Array]> => [...lists].map(([key, list]) => [key, jsonValue(list)]);

/** Writes the values with `concurrency` puts in flight; returns seconds taken. */
export async function loadLists(store: KvStore, values: Array<[string, Uint8Array]>, concurrency: number): Promise<number> {
  const start = performance.now();
  await pool(values.length, concurrency, (i) => store.put(values[i]![0], values[i]![1]));
  return (performance.now() - start) / 1000;
}

/** Queries: a stored fingerprint (of pages [from, to)) with 0..k random bits flipped, so it is within k. */
export function nearQueries(fps: readonly bigint[], n: number, seed: number, from = 0, to = fps.length): Array<{ h: bigint; target: number }> {
  const rng = mulberry32(seed);
  return Array.from({ length: n }, () => {
    const target = from + Math.floor(rng() * (to - from));
    let h = fps[target]!;
    const flips = Math.floor(rng() * (K + 1));
    for (let f = 0; f < flips; f++) h ^= 1n << BigInt(Math.floor(rng() * 64));
    return { h, target };
  });
}

export interface LookupRate {
  lookupsPerSecond: number;
  runs: number[];
  /** queries whose target was found (1 when nothing was evicted) */
  foundFraction: number;
}

/** Median lookups/s over 3 runs of `n` lookups (findWithin) with `concurrency` in flight. */
export async function measureLookups(store: KvStore, fps: readonly bigint[], opts: { n: number; concurrency: number; seed: number }): Promise<LookupRate> {
  const runs: number[] = [];
  let found = 0;
  for (let run = 0; run < 3; run++) {
    const queries = nearQueries(fps, opts.n, opts.seed * 100 + run);
    const start = performance.now();
    await pool(queries.length, opts.concurrency, async (i) => {
      const q = queries[i]!;
      if ((await findWithin(store, q.h, K)).some((m) => m.url === storedUrl(q.target))) found++;
    });
    runs.push(queries.length / ((performance.now() - start) / 1000));
  }
  return { lookupsPerSecond: median(runs), runs, foundFraction: found / (3 * opts.n) };
}

/** Fraction of near queries of pages [from, to) that find their page, over the lists directly (the lookup without the KV). */
export function recallIn(lists: Map<string, FingerprintEntry[]>, fps: readonly bigint[], n: number, seed: number, from: number, to: number): number {
  let found = 0;
  for (const q of nearQueries(fps, n, seed, from, to)) {
    const candidates = fingerprintKeys(q.h, K).map((key) => lists.get(key) ?? []);
    if (withinDistance(candidates, q.h, K).some((m) => m.url === storedUrl(q.target))) found++;
  }
  return found / n;
}
