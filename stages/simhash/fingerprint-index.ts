import { casUpdate, parseJsonValue } from '../../pipeline/kv-store.js';
import { type KvStore } from '../../ports/kv.js';
import { blockKeys, popcount32, simhashFromHex } from '../shared/simhash.js';
import { MAX_ENTRIES_PER_KEY } from './spec.js';

/** One stored fingerprint: the page it came from and when. */
export interface FingerprintEntry {
  h: string;
  url: string;
  t: number;
}

export interface FingerprintIndexOptions {
  /** entries kept per key, oldest evicted first (default MAX_ENTRIES_PER_KEY) */
  maxEntriesPerKey?: number;
}

/** Orders pages so that exactly one of two near-duplicates is the original: earlier fetch, then URL. */
export const before = (a: { t: number; url: string }, b: { t: number; url: string }) => a.t < b.t || (a.t === b.t && a.url < b.url);

/**
 * The KV keys of a fingerprint: one per block of the k+1 blocks, `fp.b<i>-<hex>`.
 *
 * This is the "permuted tables" index of Manku, Jain and Das Sarma (WWW 2007) with one
 * table per block: their table i keeps the fingerprints sorted with block i moved to the
 * front and probes the run sharing the query's leading bits; here key `fp.b<i>-<value>`
 * *is* that run (the fingerprints whose block i equals value). Pigeonhole: two
 * fingerprints differing in at most k bits differ in at most k of the k+1 blocks, so they
 * share one block, so one of the query's k+1 keys lists the other. Nothing within k is
 * missed while no key is full; lists are short (16-bit blocks at k=3: 65,536 keys per
 * block, ~15 entries per key at a million pages).
 */
export function fingerprintKeys(h: bigint, k: number): string[] {
  return blockKeys(h, k).map((block) => `fp.${block}`);
}

/** A fingerprint's hex as two 32-bit halves, so a comparison needs no BigInt. */
function halves(hex: string): [number, number] {
  const padded = hex.padStart(16, '0');
  return [parseInt(padded.slice(0, 8), 16), parseInt(padded.slice(8), 16)];
}

function distance(a: [number, number], hex: string): number {
  const b = halves(hex);
  return popcount32((a[0] ^ b[0]) >>> 0) + popcount32((a[1] ^ b[1]) >>> 0);
}

/** `list` with `page` appended (the oldest evicted past `max`), or null when the page is already there. */
function appended(list: FingerprintEntry[], page: FingerprintEntry, max: number): FingerprintEntry[] | null {
  if (list.some((e) => e.url === page.url)) return null;
  const next = [...list, page];
  // Bounded growth: a hot block value (many pages sharing 16 bits) keeps its newest `max`
  // pages. An evicted page can still be found through its other k keys, unless its
  // near-duplicate shares only this block with it: that is the recall this bound costs.
  if (next.length > max) next.splice(0, next.length - max);
  return next;
}

/**
 * Adds `page` to the index shared by every simhash process and returns the URL of its
 * original: the earliest page (see `before`) stored within Hamming distance k, or null.
 *
 * Each of the k+1 keys gets a compare-and-set append that returns the list as it stands
 * after the append; the k+1 appends run concurrently (one round trip of latency, not k+1).
 * Why two near-duplicates A and B processed at the same moment, by any processes, still
 * meet: they share a key K (pigeonhole), and the server orders the two appends to K, so the
 * one that lands second gets a list holding the other. The verdict is therefore the one a
 * serial order would give (or better, when each lands second on a different key): as when
 * processed one after the other, a later fetch whose appends all land first is not marked,
 * since only the earlier page sees the other, and it is the original. The argument is per
 * key, so the order of the k+1 appends among themselves does not matter. Reading before
 * appending would break it: both could read before either appends.
 */
export async function addAndFindOriginal(store: KvStore, page: FingerprintEntry, k: number, options: FingerprintIndexOptions = {}): Promise<string | null> {
  const max = options.maxEntriesPerKey ?? MAX_ENTRIES_PER_KEY;
  const fingerprint = simhashFromHex(page.h); // throws on a malformed fingerprint, before any write
  const h = halves(page.h);
  const lists = await Promise.all(
    fingerprintKeys(fingerprint, k).map((key) =>
      casUpdate<FingerprintEntry[], FingerprintEntry[]>(store, key, (current) => {
        const list = current ?? [];
        const next = appended(list, page, max);
        return next ? { value: next, result: next } : { result: list };
      }),
    ),
  );
  let original: FingerprintEntry | null = null;
  for (const list of lists) {
    for (const c of list) {
      if (c.url === page.url || !before(c, page)) continue;
      if (original && !before(c, original)) continue;
      if (distance(h, c.h) <= k) original = c;
    }
  }
  return original?.url ?? null;
}

/** Every stored fingerprint within Hamming distance k of `h`, each page once; reads k+1 keys, writes nothing. */
export async function findWithin(store: KvStore, h: bigint, k: number): Promise<FingerprintEntry[]> {
  const lists = await Promise.all(
    fingerprintKeys(h, k).map(async (key) => {
      const entry = await store.get(key);
      return entry ? parseJsonValue<FingerprintEntry[]>(entry.value) : [];
    }),
  );
  return withinDistance(lists, h, k);
}

/** The entries of a fingerprint's k+1 lists that are within distance k of it, each page once. */
export function withinDistance(lists: readonly FingerprintEntry[][], h: bigint, k: number): FingerprintEntry[] {
  const q = halves(h.toString(16));
  const found = new Map<string, FingerprintEntry>();
  for (const list of lists) {
    for (const c of list) if (!found.has(c.url) && distance(q, c.h) <= k) found.set(c.url, c);
  }
  return [...found.values()];
}
