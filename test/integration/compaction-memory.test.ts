/**
 * Compaction in bounded memory: pages carry ~45 KB of text each, which zstd shrinks ~3x, so
 * files far under the size target held more rows than DuckDB could sort within its memory
 * limit ("Out of Memory Error: failed to allocate data of size 70.0 MiB (418.9 MiB/488.2 MiB
 * used)" at the end of a 3,300-page crawl). Scaled down here: 2,500 such pages under a
 * 128 MB limit failed the same way before merges were bounded by uncompressed size.
 * Strings stored with a dictionary are counted as the sort holds them, one copy a row: 200,000
 * pages sharing one 2 KB text looked like 25 MB in the Parquet footers, went into one merge
 * and ran out of the default 512 MB; scaled down in the last test.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compactOutput } from '../../pipeline/adapters/duckdb-compact.js';
import { DuckDBInstance } from '@duckdb/node-api';
import { mergeBudget, uncompressedSizes } from '../../pipeline/adapters/compact-budget.js';
import { ParquetTableWriter } from '../../pipeline/adapters/parquet/row-sink.js';
import { pageWithText } from '../../bench/support/large-pages.js';
import { page } from '../../bench/support/output-rows.js';
import { runCli } from '../support/crawl-cli.js';
import { queryOutput } from '../support/e2e-web.js';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

const PAGES = 2500;
const TEXT_BYTES = 45 * 1024;
const MEMORY_LIMIT = 128_000_000;

describe('compaction memory', () => {
  test('pages with real-sized text merge under a small memory limit, in bounded files, sorted, nothing lost', async () => {
    const out = await fsp.mkdtemp(path.join(os.tmpdir(), 'compact-memory-'));
    dirs.push(out);
    const w = await ParquetTableWriter.open(out, { threads: 1, memoryLimit: '256MB' });
    // 50 pages a file, as a persist process writes them during a crawl; a few redelivered twice
    for (let i = 0; i < PAGES; i += 50) {
      const rows = [];
      for (let j = i; j < i + 50; j++) rows.push(pageWithText(j, TEXT_BYTES));
      if (i % 500 === 0) rows.push(pageWithText(i + 60, TEXT_BYTES));
      await w.write({ pages: rows });
    }
    await w.close();
    const before = await queryOutput(out, 'SELECT count(*), sum(length(text) + length(text_full)) FROM pages');

    const summary = await compactOutput(out, { minAgeMs: 0, memoryLimitBytes: MEMORY_LIMIT });

    assert.equal(summary.filesBefore, PAGES / 50);
    assert.ok(summary.filesAfter > 1, 'more rows than one merge may hold: several merged files');
    assert.equal(summary.rowsBefore - summary.rowsAfter, PAGES / 500, 'the redelivered copies are dropped');
    assert.deepEqual(await queryOutput(out, 'SELECT count(*), sum(length(text) + length(text_full)) FROM pages'), before);
    const budget = mergeBudget(MEMORY_LIMIT);
    const files = await queryOutput(
      out,
      `SELECT file_name, sum(total_uncompressed_size) FROM parquet_metadata('${out}/pages/*/*/*/*.parquet') GROUP BY file_name`,
    );
    // a merged file holds at most one merge's input
    for (const [name, raw] of files) assert.ok(Number(raw) <= budget.inputBytes, `${String(name)}: ${String(raw)} bytes uncompressed`);
    // each merged file is sorted like the writer sorts
    const unsorted = await queryOutput(
      out,
      `SELECT count(*) FROM (SELECT filename, url < lag(url) OVER (PARTITION BY filename ORDER BY file_row_number) AS down
         FROM read_parquet('${out}/pages/*/*/*/*.parquet', filename = true, file_row_number = true)) WHERE down`,
    );
    assert.equal(Number(unsorted[0]![0]), 0);
    // the spill directory is gone
    assert.deepEqual((await fsp.readdir(out)).filter((n) => n.startsWith('.')), []);
  });

  test('crawl compact --memory-mb sets the limit the merges are bounded by', async () => {
    const out = await fsp.mkdtemp(path.join(os.tmpdir(), 'compact-memory-cli-'));
    dirs.push(out);
    const w = await ParquetTableWriter.open(out, { threads: 1, memoryLimit: '256MB' });
    // ~50 MB of rows: one merge under the default 512 MB, three or more under 128 MB
    for (let i = 0; i < 1100; i += 50) await w.write({ pages: Array.from({ length: 50 }, (_, j) => pageWithText(i + j, TEXT_BYTES)) });
    await w.close();

    const tooSmall = await runCli(['compact', '--out', out, '--memory-mb', '10']);
    assert.equal(tooSmall.code, 2);
    assert.match(tooSmall.stderr, /--memory-mb/);

    const run = await runCli(['compact', '--out', out, '--min-age-ms', '0', '--memory-mb', '128']);
    assert.equal(run.code, 0, run.stderr);
    const budget = mergeBudget(MEMORY_LIMIT);
    const files = await queryOutput(out, `SELECT file_name, sum(total_uncompressed_size) FROM parquet_metadata('${out}/pages/*/*/*/*.parquet') GROUP BY file_name`);
    assert.ok(files.length >= 3, `${files.length} merged files: the 128 MB limit bounded the merges`);
    for (const [name, raw] of files) assert.ok(Number(raw) <= budget.inputBytes, `${String(name)}: ${String(raw)} bytes uncompressed`);
    assert.deepEqual(await queryOutput(out, 'SELECT count(*) FROM pages'), [[1100]]);
  });

  test('pages whose text a dictionary holds once are merged in groups the sort can hold (crawl compact --memory-mb 64)', async () => {
    const out = await fsp.mkdtemp(path.join(os.tmpdir(), 'compact-memory-dict-'));
    dirs.push(out);
    const w = await ParquetTableWriter.open(out, { threads: 1, memoryLimit: '256MB' });
    // 1,500 pages sharing one 20 KB text: 60 MB of strings in memory, ~280 KB on disk
    const text = 'lorem ipsum dolor sit amet '.repeat(760);
    for (let i = 0; i < 1500; i += 50) await w.write({ pages: Array.from({ length: 50 }, (_, j) => page(i + j, { text, text_full: text })) });
    await w.close();
    const checksum = 'SELECT count(*), sum(hash(fetch_id, url, fetch_time, title))::VARCHAR, sum(strlen(text) + strlen(text_full)) FROM pages';
    const before = await queryOutput(out, checksum);

    const run = await runCli(['compact', '--out', out, '--min-age-ms', '0', '--memory-mb', '64']);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(await queryOutput(out, checksum), before);
    const perFile = await queryOutput(out, `SELECT filename, sum(strlen(text) + strlen(text_full)) FROM read_parquet('${out}/pages/*/*/*/*.parquet', filename = true) GROUP BY ALL`);
    assert.ok(perFile.length > 1 && perFile.length < 30, `${perFile.length} files: merged, in more than one group`);
    // what a merge held of the text alone stays within its share of the limit
    const budget = mergeBudget(64_000_000);
    for (const [name, bytes] of perFile) assert.ok(Number(bytes) <= budget.inputBytes, `${String(name)}: ${String(bytes)} bytes of text`);
  });

  test('a file is sized by its rows as read: a dictionary-encoded string once a row, a plain one by its footer', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'compact-memory-sizes-'));
    dirs.push(dir);
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      const shared = path.join(dir, 'shared.parquet');
      const distinct = path.join(dir, 'distinct.parquet');
      // 2,000 rows of one 1,000-byte string (stored once, in a dictionary) and of 2,000 different ones
      await conn.run(`COPY (SELECT repeat('a', 1000) AS s, i FROM range(2000) t(i)) TO '${shared}'`);
      await conn.run(`COPY (SELECT printf('%04d', i) || repeat('b', 996) AS s, i FROM range(2000) t(i)) TO '${distinct}'`);
      const footer = new Map(
        (await conn.runAndReadAll(`SELECT file_name, sum(total_uncompressed_size) FROM parquet_metadata(['${shared}', '${distinct}']) GROUP BY ALL`))
          .getRows()
          .map(([f, n]) => [String(f), Number(n)]),
      );
      assert.ok(footer.get(shared)! < 100_000, 'the footer counts the shared string once');
      const sizes = await uncompressedSizes(conn, [shared, distinct]);
      assert.equal(sizes.get(shared), footer.get(shared)! + 2_000_000);
      assert.equal(sizes.get(distinct), footer.get(distinct));
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});
