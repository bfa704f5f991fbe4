/**
 * Lookups per second with many fingerprints stored, and what the per-key bound costs.
 * The stored fingerprints are uniform random 64-bit values (computing a million SimHashes
 * of real pages would take longer than the bench may): with them every block value is
 * equally likely, the lists are as even as they get, and a lookup reads k+1 lists of
 * ~stored/65,536 entries at k=3.
 */
import type { KvStore } from '../pipeline/kv-store.js';
import { jsonValue } from '../pipeline/kv-store.js';
import { findWithin, fingerprintKeys, type FingerprintEntry } from '../stages/simhash/fingerprint-index.js';
import { simhashToHex } from '../stages/simhash/simhash.js';
import { mulberry32 } from '../testweb/prng.js';
import { median, pool, randomFingerprints } from './near-dup-add-cost.js';

export const K = 3;

export const storedUrl = (i: number) => `https://h${i % 50_000}.bench.test/p/${i}`;

/**
 * The index's lists for fingerprints added in order (page i fetched at time i), built in
 * memory exactly as addAndFindOriginal would leave them: appended, oldest evicted past `max`.
 */
export function buildLists(fps: readonly bigint[], max: number): Map<string, FingerprintEntry[]> {
  const lists = new Map<string, FingerprintEntry[]>();
  fps.forEach((h, i) => {
    const e: FingerprintEntry = { h: simhashToHex(h), url: storedUrl(i), t: i };
    for (const key of fingerprintKeys(h, K)) {
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

/** Writes the lists with `concurrency` puts in flight; returns seconds taken. */
export async function loadLists(store: KvStore, lists: Map<string, FingerprintEntry[]>, concurrency: number): Promise<number> {
  const entries = [...lists];
  const start = performance.now();
  await pool(entries.length, concurrency, (i) => store.put(entries[i]![0], jsonValue(entries[i]![1])));
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

/** Median lookups/s over 3 runs of `n` lookups with `concurrency` in flight (queries near pages [from, to)). */
export async function measureLookups(
  store: KvStore,
  fps: readonly bigint[],
  opts: { n: number; concurrency: number; seed: number; from?: number; to?: number; runs?: number },
): Promise<LookupRate> {
  const { n, concurrency, seed } = opts;
  const runs: number[] = [];
  let found = 0;
  let asked = 0;
  for (let run = 0; run < (opts.runs ?? 3); run++) {
    const queries = nearQueries(fps, n, seed * 100 + run, opts.from, opts.to);
    const start = performance.now();
    await pool(queries.length, concurrency, async (i) => {
      const q = queries[i]!;
      const matches = await findWithin(store, q.h, K);
      asked++;
      if (matches.some((m) => m.url === storedUrl(q.target))) found++;
    });
    runs.push(queries.length / ((performance.now() - start) / 1000));
  }
  return { lookupsPerSecond: median(runs), runs, foundFraction: found / asked };
}

export { randomFingerprints };
