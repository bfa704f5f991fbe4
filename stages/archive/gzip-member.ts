/**
 * A WARC record as its own gzip member, compressed off the main thread where that pays.
 *
 * `crawl run` runs every stage in one process, and its main thread is what limits it:
 * gzipSync of a 25 KB response took ~0.6 ms of it. node:zlib's async gzip runs the deflate
 * on libuv's thread pool (the other core) and costs the main thread 60-90 µs of stream
 * bookkeeping whatever the size: more than gzipSync below ~4 KB (25 µs at 0.5 KB, 55 µs at
 * 2 KB, 75 µs at 4 KB; /proc thread CPU, 2 in flight). So request and metadata records,
 * revisits and the warcinfo are compressed inline, and responses on the pool. Both give
 * the same bytes (same zlib, same settings).
 *
 * The level is 3, not zlib's default 6: deflate was a tenth of a one-process crawl's CPU (a
 * `perf` profile of `npm run bench`), and on the 121 real pages of the article benchmark in
 * shared/conformance level 3 takes 59 % of level 6's CPU for members 9.6 % larger (21.6 % of
 * the HTML's size against 19.7 %; level 2: 22.0 % at 55 %; 9: 19.6 % at 157 %).
 * `--warc-gzip-level` picks another.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { Slots } from '../../pipeline/slots.js';

const gzipOnPool = promisify(zlib.gzip);

export const WARC_GZIP_LEVEL = 3;

/** Records up to this size are compressed on the main thread. */
export const INLINE_MAX_BYTES = 4096;

/**
 * Records compressed on the pool at once, in this process. The pool has 4 threads by
 * default and also runs every fs call (the WARC writes and fsyncs among them); each job in
 * flight holds a zlib stream (~300 KB). Two keep a second core busy and leave the rest to fs.
 */
const poolJobs = new Slots(2);

export async function gzipMember(record: Buffer, level = WARC_GZIP_LEVEL): Promise<Buffer> {
  if (record.length <= INLINE_MAX_BYTES) return zlib.gzipSync(record, { level });
  await poolJobs.acquire();
  try {
    return await gzipOnPool(record, { level });
  } finally {
    poolJobs.release();
  }
}
