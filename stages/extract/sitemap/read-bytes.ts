// The bytes of a sitemap file, inflated when they are gzip, handed on in pieces and never more
// than the byte limit in all. Gzip is told by its magic bytes, not the Content-Type: servers
// send `.xml.gz` as application/gzip, application/octet-stream or application/xml alike, and a
// client that undid a Content-Encoding leaves plain XML under a gzip type.
//
// fflate's Gunzip inflates synchronously in pieces, so the extract stage (which runs on worker
// threads, synchronously) can call this, and it stops at the cap; Node's zlib has no
// synchronous streaming form: gunzipSync's maxOutputLength throws away everything at the cap.

import { Gunzip } from 'fflate';
import { StopParsing } from './collector.js';

export const isGzip = (b: Uint8Array): boolean => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

// Deflate inflates at most ~1032:1, so one 16 KB piece of a bomb yields at most ~16 MB more
// than the cap before we stop feeding it: a bounded overshoot, dropped at once.
const GZIP_PIECE = 16 * 1024;
const PLAIN_PIECE = 1024 * 1024;

export interface ReadResult {
  /** the file was longer than the limit (after inflating): only its first maxBytes were handed on */
  cut: boolean;
  /** the gzip stream is corrupt or ends early; what inflated before the fault was handed on */
  error?: string;
}

/** Hands the file's (inflated) bytes to onBytes in pieces, maxBytes at most. onBytes may throw StopParsing. */
export function readSitemapBytes(body: Uint8Array, maxBytes: number, onBytes: (bytes: Uint8Array) => void): ReadResult {
  if (!isGzip(body)) {
    const end = Math.min(body.length, maxBytes);
    for (let i = 0; i < end; i += PLAIN_PIECE) onBytes(body.subarray(i, Math.min(end, i + PLAIN_PIECE)));
    return { cut: body.length > maxBytes };
  }
  let total = 0;
  let cut = false;
  /** bytes inflated before the current member of a multi-member file */
  let memberStart = 0;
  const gunzip = new Gunzip((chunk) => {
    if (cut) return;
    const room = maxBytes - total;
    if (chunk.length > room) {
      cut = true;
      if (room > 0) onBytes(chunk.subarray(0, room));
      total = maxBytes;
      return;
    }
    total += chunk.length;
    if (chunk.length > 0) onBytes(chunk);
  });
  gunzip.onmember = () => {
    memberStart = total;
  };
  try {
    for (let i = 0; i < body.length && !cut; i += GZIP_PIECE) gunzip.push(body.subarray(i, i + GZIP_PIECE), i + GZIP_PIECE >= body.length);
  } catch (err) {
    if (err instanceof StopParsing) throw err;
    return { cut, error: `gzip: ${(err as Error).message}` };
  }
  // fflate does not notice every stream that ends early: the trailer's size (ISIZE, RFC 1952,
  // the last member's length mod 2^32) tells a whole file from a cut one
  const isize = body.length >= 4 ? new DataView(body.buffer, body.byteOffset + body.length - 4, 4).getUint32(0, true) : -1;
  if (!cut && (total - memberStart) % 2 ** 32 !== isize) return { cut, error: `gzip: the stream ends early or is corrupt (inflated ${total - memberStart} bytes, its trailer says ${isize})` };
  return { cut };
}
