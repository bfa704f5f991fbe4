import { casUpdate, jsonValue } from '../../pipeline/kv-store.js';
import { KvConflictError, type KvStore } from '../../ports/kv.js';
import { before } from './fingerprint-index.js';

/** The page that owns a content digest: the earliest fetch seen with that content. */
export interface DigestOwner {
  url: string;
  t: number;
}

/** `sha1:ABC…` → `dg.sha1.ABC…` (KV keys allow no colon). */
export const digestKey = (digest: string) => `dg.${digest.replace(':', '.')}`;

/**
 * Exact duplicates, before any SimHash work: one KV key per content digest names the page
 * whose body it is. A new body costs one operation (create-if-absent); a repeated body
 * reads the owner and is its duplicate. Returns the owner's URL, or null when this page is
 * the first (or the earliest, see `before`, so later copies point at it) with this body.
 */
export async function findExactOriginal(store: KvStore, digest: string, page: DigestOwner): Promise<string | null> {
  const key = digestKey(digest);
  const owner: DigestOwner = { url: page.url, t: page.t };
  try {
    await store.create(key, jsonValue(owner));
    return null;
  } catch (err) {
    if (!(err instanceof KvConflictError)) throw err;
  }
  return casUpdate<DigestOwner, string | null>(store, key, (current) => {
    if (!current) return { value: owner, result: null };
    // a redelivery of the owner itself: not its own duplicate
    if (current.url === page.url) return { result: null };
    if (before(current, page)) return { result: current.url };
    // processed late but fetched earlier: this page becomes the original of later copies
    return { value: owner, result: null };
  });
}
