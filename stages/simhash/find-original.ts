import type { KvStore } from '../../ports/kv.js';
import { findExactOriginal } from './exact-duplicates.js';
import { addAndFindOriginal, type FingerprintEntry } from './fingerprint-index.js';

/**
 * The page this one duplicates, or null: exact duplicates by content digest first (one KV
 * operation, and the copy is not added to the SimHash index: its owner stands for it), then
 * near-duplicates within Hamming distance k.
 */
export async function findOriginal(store: KvStore, page: FingerprintEntry, digest: string, k: number): Promise<string | null> {
  return (await findExactOriginal(store, digest, page)) ?? (await addAndFindOriginal(store, page, k));
}
