/**
 * A WARC record as its own gzip member, compressed inline on the thread that builds it.
 *
 * Inline, not on libuv's pool (node:zlib's async gzip): the pool's stream bookkeeping costs
 * less of the main thread, which limits a one-process crawl, than deflating a record does,
 * yet on two busy cores each hand-off wakes a pool thread that often preempts the main
 * thread, and interleaved bench pairs give inline less CPU a page and more pages/s. Writing
 * the WARC with `fs.writeSync` too lost (docs/performance.md#warc-gzip-inline-at-level-3).
 *
 * The level is 3, not zlib's default 6: deflate is a large share of a one-process crawl's
 * CPU, and on the real pages of the article benchmark in shared/conformance level 3 takes
 * much less CPU than 6 for members only slightly larger (the same page has the figures).
 * `--warc-gzip-level` picks another.
 */
import zlib from 'node:zlib';

export const WARC_GZIP_LEVEL = 3;

export function gzipMember(record: Buffer, level = WARC_GZIP_LEVEL): Buffer {
  return zlib.gzipSync(record, { level });
}
