import { createHash } from 'node:crypto';

/** The exact-content digest extract, simhash and archive agree on (WARC's payload digest). */
const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, uppercase, no padding. */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < bytes.length; i++) {
    buffer = ((buffer << 8) | bytes[i]!) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32_ALPHABET[(buffer >>> bits) & 31];
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * WARC / Common Crawl style payload digest: 'sha1:' + base32(SHA-1). Strings are hashed
 * as UTF-8; parts are hashed as their concatenation.
 */
export function contentDigest(bytes: Uint8Array | string | readonly Uint8Array[]): string {
  const hash = createHash('sha1');
  if (Array.isArray(bytes)) for (const part of bytes as readonly Uint8Array[]) hash.update(part);
  else hash.update(bytes as Uint8Array | string);
  return 'sha1:' + base32Encode(hash.digest());
}
