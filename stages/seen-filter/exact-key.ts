import { hash } from 'node:crypto';

/**
 * The exact record's key for a URL of a crawl (its seen-set key: the URL, or the job and the
 * URL): the crawl id and 128 bits of the SHA-256 of the key, base64url (22 characters; KV keys
 * allow `-` and `_`). Two different URLs share a key with probability about n² / 2^129 among
 * n URLs (10^-15 for a trillion), which is what "exact" means here; a Bloom filter at 2 bytes
 * per URL errs on about 1 in 2,000. A cryptographic hash, so nobody can choose URLs that
 * collide with another site's and make it look seen.
 */
export function exactKeyOf(crawlId: string, seenKey: string): string {
  return `${crawlId}.${hash('sha256', seenKey, 'base64url').slice(0, 22)}`;
}
