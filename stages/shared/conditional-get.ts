import { hash } from 'node:crypto';
import { jsonValue, parseJsonValue } from '../../pipeline/kv-store.js';
import { type KvStore } from '../../ports/kv.js';

/**
 * Conditional GET: a page's ETag and Last-Modified, kept per URL in the `crawl-validators`
 * bucket across crawls, so fetching the URL again (a recrawl) asks "has it changed?" and
 * an unchanged page costs the server a 304 instead of the whole body. The links the page
 * had are kept with them, so a recrawl still follows an unchanged page's links.
 */
export interface Validators {
  etag: string | null;
  last_modified: string | null;
  /** when the page these validators describe was fetched */
  fetch_time: number;
  /** the links it had that may be followed (none for nofollow), at most MAX_KEPT_LINKS */
  links?: string[];
  /**
   * the fetch that stored them: a grant of that same fetch delivered again (its outputs went
   * out but its ack did not, as when a publish ack is lost while a cluster elects a leader)
   * must not send them, or it would record a 304 against its own first answer
   */
  fetch_id?: string;
}

export const MAX_KEPT_LINKS = 500;

const keyOf = (url: string) => hash('sha256', url, 'hex').slice(0, 40);

export async function readValidators(store: KvStore, url: string): Promise<Validators | null> {
  const entry = await store.get(keyOf(url));
  return entry ? parseJsonValue<Validators>(entry.value) : null;
}

export function conditionalHeaders(v: Validators | null): Record<string, string> {
  const headers: Record<string, string> = {};
  if (v?.etag) headers['if-none-match'] = v.etag;
  if (v?.last_modified) headers['if-modified-since'] = v.last_modified;
  return headers;
}

/** Keeps the validators of a page just stored; a response without any keeps nothing. */
export async function storeValidators(store: KvStore, url: string, headers: Record<string, string>, fetchTime: number, links: readonly string[], fetchId?: string): Promise<void> {
  const etag = headers['etag'] ?? null;
  const lastModified = headers['last-modified'] ?? null;
  if (etag === null && lastModified === null) return;
  const value: Validators = { etag, last_modified: lastModified, fetch_time: fetchTime, links: links.slice(0, MAX_KEPT_LINKS), ...(fetchId ? { fetch_id: fetchId } : {}) };
  await store.put(keyOf(url), jsonValue(value));
}
