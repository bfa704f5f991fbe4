import { casUpdate, type KvStore } from '../../pipeline/kv-store.js';
import { blockKeys, hammingDistance, simhashFromHex } from './simhash.js';
import { MAX_ENTRIES_PER_KEY } from './spec.js';

/** One stored fingerprint: the page it came from and when. */
export interface FingerprintEntry {
  h: string;
  url: string;
  t: number;
}

/** Orders pages so that exactly one of two near-duplicates is the original: earlier fetch, then URL. */
const before = (a: FingerprintEntry, b: FingerprintEntry) => a.t < b.t || (a.t === b.t && a.url < b.url);

/**
 * Near-duplicate index shared by every simhash process: the 64-bit fingerprint is split
 * into k+1 blocks, and each block value is a KV key listing the fingerprints that have it.
 * Two fingerprints within Hamming distance k share at least one block (pigeonhole), so a
 * lookup reads k+1 keys instead of scanning. The page is added first, then the lists are
 * read, so two near-duplicates processed at the same time still see each other; the
 * earlier one is the original.
 */
export async function addAndFindOriginal(store: KvStore, page: FingerprintEntry, k: number): Promise<string | null> {
  const h = simhashFromHex(page.h);
  const candidates: FingerprintEntry[] = [];
  for (const key of blockKeys(h, k)) {
    const entries = await casUpdate<FingerprintEntry[], FingerprintEntry[]>(store, `fp.${key}`, (current) => {
      const list = current ?? [];
      if (list.some((e) => e.url === page.url)) return { result: list };
      const next = [...list, page];
      if (next.length > MAX_ENTRIES_PER_KEY) next.splice(0, next.length - MAX_ENTRIES_PER_KEY);
      return { value: next, result: next };
    });
    candidates.push(...entries);
  }
  let original: FingerprintEntry | null = null;
  for (const c of candidates) {
    if (c.url === page.url || !before(c, page)) continue;
    if (hammingDistance(simhashFromHex(c.h), h) > k) continue;
    if (!original || before(c, original)) original = c;
  }
  return original?.url ?? null;
}
