import { z } from 'zod';
import { checkInternal, encodeMessage, SchemaError, unpackOrThrow } from './codec.js';
import { AdmittedUrl, CandidateUrl } from './url-messages.js';
import { withoutUnknownKeys } from './shape-check.js';

/**
 * Batches of URLs on the two edges where one message per URL was most of the work of a
 * crawl's first pages: `crawl.normalized.<p>` (normalize → seen-filter) and
 * `crawl.frontier.<p>` (seen-filter → politeness gate). A fetched page's new links of one
 * partition travel as one message, and the seen-filter admits them as one message: early in
 * a crawl a page has many new links, and each one alone would be two messages (published,
 * stored, delivered, acked) before its host queue.
 *
 * A batch of one is written as the single URL it holds, as before batching; so readers take
 * either form, and a stream written before batching (replayed) or a fetch's retry (one URL)
 * reads as a batch of one.
 */

/** URLs in one message at most (a page with more new links of one partition makes several). */
export const MAX_URLS_PER_BATCH = 256;

const CandidateBatch = z.object({ v: z.literal(1), urls: z.array(CandidateUrl) });
const AdmittedBatch = z.object({ v: z.literal(1), urls: z.array(AdmittedUrl) });

function encodeBatch<T>(urls: readonly T[]): Uint8Array {
  if (urls.length === 0 || urls.length > MAX_URLS_PER_BATCH) {
    throw new RangeError(`a URL batch holds 1 to ${MAX_URLS_PER_BATCH} URLs, got ${urls.length}`);
  }
  return encodeMessage(urls.length === 1 ? urls[0] : { v: 1, urls });
}

function decodeBatch<T>(one: z.ZodType<T>, batch: z.ZodType<{ v: 1; urls: T[] }>, bytes: Uint8Array, what: string): T[] {
  const raw = unpackOrThrow(bytes, what);
  if (typeof raw !== 'object' || raw === null || !('urls' in raw)) return [checkInternal(one, raw, what)];
  const urls = checkInternal(batch, raw, `${what} batch`).urls;
  if (urls.length > MAX_URLS_PER_BATCH) throw new SchemaError(`decoding ${what} batch: ${urls.length} URLs, at most ${MAX_URLS_PER_BATCH}`);
  // keys a newer writer added are dropped from each URL, as from a message of one
  return urls.map((u) => withoutUnknownKeys(one, u as object) as T);
}

export const encodeCandidates = (urls: readonly CandidateUrl[]) => encodeBatch(urls);
export const encodeAdmittedBatch = (urls: readonly AdmittedUrl[]) => encodeBatch(urls);
/** The candidates of a `crawl.normalized.<p>` message (one, or a batch). */
export const decodeCandidates = (b: Uint8Array): CandidateUrl[] => decodeBatch(CandidateUrl, CandidateBatch, b, 'candidate url');
/** The admitted URLs of a `crawl.frontier.<p>` message (one, or a batch). */
export const decodeAdmittedBatch = (b: Uint8Array): AdmittedUrl[] => decodeBatch(AdmittedUrl, AdmittedBatch, b, 'admitted url');

/** `items` in runs of at most MAX_URLS_PER_BATCH, grouped by `keyOf` (the subject), each group in order. */
export function batchesBy<T>(items: readonly T[], keyOf: (item: T) => string): Array<{ key: string; items: T[] }> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  const out: Array<{ key: string; items: T[] }> = [];
  for (const [key, all] of groups) {
    for (let i = 0; i < all.length; i += MAX_URLS_PER_BATCH) out.push({ key, items: all.slice(i, i + MAX_URLS_PER_BATCH) });
  }
  return out;
}
