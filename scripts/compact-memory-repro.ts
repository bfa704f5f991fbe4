/**
 * Reproduces compaction of a crawl whose pages hold a lot of text, under the memory limit
 * production uses: writes `--pages` pages rows (about `--text-kb` KB of text each, split
 * between `text` and `text_full`) through the crawl's own Parquet writer, in small files
 * as a persist process writes them, then compacts and reports time, peak RSS and the result.
 *
 *   node dist/scripts/compact-memory-repro.js [--pages 5000] [--rows-per-file 30] [--text-kb 45] [--keep DIR [--write-only]]
 *
 * `--keep DIR` writes there and leaves the files; with `--write-only` it does not compact
 * (to try DuckDB settings on the same input). A 3,300-page crawl of the test web's bench
 * hosts once failed at its compaction with "Out of Memory Error: failed to allocate data
 * of size 70.0 MiB (418.9 MiB/488.2 MiB used)"; 9,000 pages here failed the same way.
 */
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compactOutput } from '../pipeline/adapters/duckdb-compact.js';
import { ParquetTableWriter } from '../pipeline/adapters/parquet/row-sink.js';
import { pageWithText } from '../bench/support/large-pages.js';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '5000' },
    'rows-per-file': { type: 'string', default: '30' },
    'text-kb': { type: 'string', default: '45' },
    keep: { type: 'string' },
    'write-only': { type: 'boolean', default: false },
  },
});
const pages = Number(values.pages);
const perFile = Number(values['rows-per-file']);
const textBytes = Number(values['text-kb']) * 1024;

const out = values.keep ?? (await fsp.mkdtemp(path.join(os.tmpdir(), 'compact-repro-')));
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50);
try {
  const t0 = performance.now();
  const writer = await ParquetTableWriter.open(out, { threads: 1, memoryLimit: '256MB' });
  for (let i = 0; i < pages; i += perFile) {
    const rows = [];
    for (let j = i; j < Math.min(pages, i + perFile); j++) rows.push(pageWithText(j, textBytes));
    await writer.write({ pages: rows });
  }
  await writer.close();
  const t1 = performance.now();
  process.stderr.write(`wrote ${pages} pages in ${Math.ceil(pages / perFile)} files in ${((t1 - t0) / 1000).toFixed(1)} s\n`);
  if (!values['write-only']) {
    peakRss = 0;
    const summary = await compactOutput(out, { minAgeMs: 0 });
    const t2 = performance.now();
    process.stderr.write(
      `compacted in ${((t2 - t1) / 1000).toFixed(1)} s, peak RSS of the process meanwhile ${(peakRss / 2 ** 20).toFixed(0)} MiB: ` +
        `${summary.filesBefore} files -> ${summary.filesAfter}, ${summary.rowsBefore} rows -> ${summary.rowsAfter}, ` +
        `${(summary.bytesBefore / 2 ** 20).toFixed(1)} MiB -> ${(summary.bytesAfter / 2 ** 20).toFixed(1)} MiB\n`,
    );
  }
} catch (err) {
  process.stderr.write(`compact failed: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  clearInterval(sampler);
  if (!values.keep) await fsp.rm(out, { recursive: true, force: true });
}
