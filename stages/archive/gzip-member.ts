/**
 * A WARC record as its own gzip member, compressed inline on the thread that builds it.
 *
 * Inline, not on libuv's pool. Handing a response record to the pool (node:zlib's async gzip)
 * was kept while measurements said the main thread, which limits a one-process crawl, spent
 * more on deflating a 25 KB record (~0.3 ms) than on the stream bookkeeping and the thread
 * hand-offs of the pool (three runs of `npm run bench` in 2026-11 gave inline 1.12 times the
 * CPU). After extract's parse got cheaper and V8 collected on one thread, seven interleaved
 * pairs (2026-11-27) gave inline a median 0.89 of the pool's CPU a page (0.82-1.00) and 182
 * pages/s against 167: on two busy cores, a hand-off wakes a pool thread that often preempts
 * the main thread (docs/performance.md). Writing the WARC with `fs.writeSync` too was tried
 * and lost (1.05).
 *
 * The level is 3, not zlib's default 6: deflate was a tenth of a one-process crawl's CPU (a
 * `perf` profile of `npm run bench`), and on the 121 real pages of the article benchmark in
 * shared/conformance level 3 takes 59 % of level 6's CPU for members 9.6 % larger (21.6 % of
 * the HTML's size against 19.7 %; level 2: 22.0 % at 55 %; 9: 19.6 % at 157 %).
 * `--warc-gzip-level` picks another.
 */
import zlib from 'node:zlib';

export const WARC_GZIP_LEVEL = 3;

export function gzipMember(record: Buffer, level = WARC_GZIP_LEVEL): Buffer {
  return zlib.gzipSync(record, { level });
}
