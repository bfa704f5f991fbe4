import { casUpdate, jsonValue } from '../../pipeline/kv-store.js';
import { KvConflictError, type KvStore } from '../../ports/kv.js';

/** The page that owns a content digest: the first page with that body the crawl processed (`t`: its fetch time, for whoever reads the bucket). */
export interface DigestOwner {
  url: string;
  t: number;
}

/** `sha1:ABC…` → `dg.sha1.ABC…` (KV keys allow no colon). */
export const digestKey = (digest: string) => `dg.${digest.replace(':', '.')}`;

/**
 * Exact duplicates, before any SimHash work: one KV key per content digest names the page
 * whose body it is. A new body costs one operation (create-if-absent); a repeated body
 * reads the owner and is its duplicate. Returns the owner's URL, or null when this page owns
 * the digest.
 *
 * The owner is the page whose create landed first, and it never changes. That is the one
 * order a streaming stage can keep: the owner's row already went out saying "original",
 * and no later copy can take that back, whatever its fetch time (a copy fetched earlier but
 * processed later taking the digest over left both copies unmarked). Two processes racing
 * on a new body are ordered by the server (one create wins, the other conflicts and reads
 * the winner), and a redelivered page gets the verdict it got the first time.
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
    // gone since the conflict (the bucket was purged): this page is the first again
    if (!current) return { value: owner, result: null };
    // a redelivery of the owner itself is not its own duplicate
    return { result: current.url === page.url ? null : current.url };
  });
}
