import { casUpdate, parseJsonValue } from '../../pipeline/kv-store.js';
import { type KvStore } from '../../ports/kv.js';
import { blockKeys, popcount32, simhashFromHex } from '../shared/content-identity/simhash.js';
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

/** Fetch order (then URL): breaks the tie when two near-duplicates were added at the same moment and each saw the other. */
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
 * original: a page stored within Hamming distance k that the index holds as earlier than this
 * one (the earliest fetch among them, when several are), or null.
 *
 * Earlier means first into the index, since a streaming stage cannot take back the verdict
 * it already sent for a page: whichever of two near-duplicates is processed first is the
 * original, and the other is marked, whatever their fetch times (ordering by fetch time let
 * a copy fetched earlier but processed later see the other and still call itself the
 * original, while the other had been told the same).
 *
 * Each of the k+1 keys gets a compare-and-set append that returns the list as it stands
 * after the append, in append order; the k+1 appends run concurrently (one round trip of
 * latency, not k+1). Two near-duplicates A and B share at least one key (pigeonhole), and
 * the server orders their appends to each shared key, so both read the same order there:
 * on a shared key, B listed before A means B landed first, and B absent means B lands after
 * A (it is appended later, and sees A). When B landed first on every shared key, B is the
 * original for both; when A and B were added at the same moment by different processes and
 * each landed first on some shared key, the earlier fetch is (see `before`). So exactly one
 * of the two is marked, in any order, with any number of processes, and a redelivered page
 * (whose append changes nothing and returns the list with it in its old place) gets its old
 * verdict. Reading before appending would break it: both could read before either appends.
 * A full key (see MAX_ENTRIES_PER_KEY) may have evicted B, so B's absence there says nothing.
 */
export async function addAndFindOriginal(store: KvStore, page: FingerprintEntry, k: number, options: FingerprintIndexOptions = {}): Promise<string | null> {
  const max = options.maxEntriesPerKey ?? MAX_ENTRIES_PER_KEY;
  const fingerprint = simhashFromHex(page.h); // throws on a malformed fingerprint, before any write
  const h = halves(page.h);
  const keys = fingerprintKeys(fingerprint, k);
  const lists = await Promise.all(
    keys.map((key) =>
      casUpdate<FingerprintEntry[], FingerprintEntry[]>(store, key, (current) => {
        const list = current ?? [];
        const next = appended(list, page, max);
        return next ? { value: next, result: next } : { result: list };
      }),
    ),
  );
  const near = new Map<string, FingerprintEntry>();
  for (const list of lists) {
    for (const c of list) if (c.url !== page.url && !near.has(c.url) && distance(h, c.h) <= k) near.set(c.url, c);
  }
  let original: FingerprintEntry | null = null;
  for (const c of near.values()) {
    if (original && !before(c, original)) continue;
    if (landedFirst(c, page, keys, lists, k, max)) original = c;
  }
  return original?.url ?? null;
}

/**
 * Whether the index holds `c` as earlier than `page`: first on every shared key whose order
 * is known, or, when each was first on some (added at the same moment), the earlier fetch.
 */
function landedFirst(c: FingerprintEntry, page: FingerprintEntry, keys: readonly string[], lists: readonly FingerprintEntry[][], k: number, max: number): boolean {
  const theirs = fingerprintKeys(simhashFromHex(c.h), k);
  let cFirst = 0;
  let pageFirst = 0;
  keys.forEach((key, i) => {
    if (theirs[i] !== key) return; // not a key they share
    const order = orderOn(lists[i]!, page.url, c.url, max);
    if (order === 'candidate') cFirst++;
    else if (order === 'page') pageFirst++;
  });
  return cFirst > 0 && (pageFirst === 0 || before(c, page));
}

/** Which of two pages landed first on one key they share, from the list as it stood after `pageUrl`'s append. */
function orderOn(list: readonly FingerprintEntry[], pageUrl: string, candidateUrl: string, max: number): 'candidate' | 'page' | 'unknown' {
  const mine = list.findIndex((e) => e.url === pageUrl);
  const theirs = list.findIndex((e) => e.url === candidateUrl);
  if (mine < 0) return 'unknown';
  if (theirs >= 0) return theirs < mine ? 'candidate' : 'page';
  // not there: it has not been appended yet (it lands after this page), unless the list is
  // full, when it may have been evicted (a list below the bound has never lost an entry)
  return list.length < max ? 'page' : 'unknown';
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
