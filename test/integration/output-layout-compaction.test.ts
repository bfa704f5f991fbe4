/**
 * The output layout (hive partitions by crawl, date and version), the version rules of the
 * views, the old flat layout, and compaction: real DuckDB, real files.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ParquetTableWriter } from '../../pipeline/adapters/parquet/row-sink.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { compactOutput, groupForMerge } from '../../pipeline/adapters/duckdb-compact.js';
import { newestVersion } from '../../pipeline/adapters/output-layout.js';
import { TABLE_NAMES } from '../../schemas/output-tables.js';
import { link, logRow, page } from '../../bench/support/output-rows.js';

const dirs: string[] = [];
async function mk(): Promise<string> {
  const d = await fsp.mkdtemp(path.join(os.tmpdir(), 'output-layout-'));
  dirs.push(d);
  return d;
}

async function parquetFiles(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.parquet'))
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

async function query(out: string, sql: string, version?: number): Promise<unknown[][]> {
  const db = await openOutputDatabase(out, { version });
  try {
    return (await db.run(sql)).rows;
  } finally {
    await db.close();
  }
}

/** Everything a user sees through the deduplicating views. */
async function snapshot(out: string): Promise<Record<string, unknown[][]>> {
  const s: Record<string, unknown[][]> = {};
  for (const t of TABLE_NAMES) s[t] = await query(out, `SELECT * FROM ${t} ORDER BY ALL`);
  return s;
}

after(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

describe('layout', () => {
  test('files go to <table>/crawl=<id>/date=<UTC day>/version=<n>/, one per crawl id in a batch', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    const written = await w.write({ pages: [page(1), page(2, { crawl_id: 'c2' })], links: [link(1, 1)] });
    await w.close();
    const today = new Date().toISOString().slice(0, 10);
    assert.match(path.relative(out, written.pages!.path), new RegExp(`^pages/crawl=c1/date=${today}/version=0/part-[^/]+\\.parquet$`));
    assert.equal(written.pages!.more?.length, 1);
    assert.deepEqual(
      (await parquetFiles(out)).map((f) => path.dirname(f)),
      [`links/crawl=c1/date=${today}/version=0`, `pages/crawl=c1/date=${today}/version=0`, `pages/crawl=c2/date=${today}/version=0`],
    );
    assert.deepEqual(await query(out, 'SELECT crawl_id, url, version FROM pages ORDER BY crawl_id'), [
      ['c1', page(1).url, 0],
      ['c2', page(2).url, 0],
    ]);
  });

  test('files of the old flat layout are still read, as version 0', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    const written = await w.write({ pages: [page(1)], fetch_log: [logRow(1)] });
    await w.close();
    // move the files where the first release wrote them: <table>/part-*.parquet
    for (const t of ['pages', 'fetch_log'] as const) {
      await fsp.rename(written[t]!.path, path.join(out, t, path.basename(written[t]!.path)));
      await fsp.rm(path.join(out, t, 'crawl=c1'), { recursive: true });
    }
    const w2 = await ParquetTableWriter.open(out);
    await w2.write({ pages: [page(2)] });
    await w2.close();
    assert.deepEqual(await query(out, 'SELECT url, version FROM pages ORDER BY url'), [
      [page(1).url, 0],
      [page(2).url, 0],
    ]);
    assert.equal((await query(out, 'SELECT count(*) FROM fetch_log'))[0]![0], 1);
  });
});

describe('versions', () => {
  test('pages and links show the newest version of each fetch; _all views and --version show older ones', async () => {
    const out = await mk();
    const v0 = await ParquetTableWriter.open(out);
    // fetch 1 had a bogus link "d9" and no title; fetch 2 is not replayed
    await v0.write({
      pages: [page(1, { title: '' }), page(2)],
      links: [link(1, 1), link(1, 9), link(2, 1)],
      fetch_log: [logRow(1), logRow(2), logRow(3, { fetch_id: null, outcome: 'robots_disallowed' })],
    });
    await v0.close();
    assert.equal(await newestVersion(out, TABLE_NAMES, 'c1'), 0);
    const v1 = await ParquetTableWriter.open(out, { version: 1 });
    await v1.write({ pages: [page(1)], links: [link(1, 1)], fetch_log: [logRow(1)] });
    await v1.close();
    assert.equal(await newestVersion(out, TABLE_NAMES, 'c1'), 1);

    assert.deepEqual(await query(out, 'SELECT fetch_id, title, version FROM pages ORDER BY fetch_id'), [
      ['f1', 'Title 1', 1],
      ['f2', 'Title 2', 0],
    ]);
    assert.deepEqual(await query(out, 'SELECT fetch_id, dst_url, version FROM links ORDER BY ALL'), [
      ['f1', 'https://example.com/d1', 1],
      ['f2', 'https://example.com/d1', 0],
    ]);
    // a replay does not rewrite the log of what happened: one row per event
    assert.deepEqual(await query(out, 'SELECT event_id FROM fetch_log ORDER BY 1'), [['e1'], ['e2'], ['e3']]);
    assert.deepEqual(await query(out, 'SELECT fetch_id, title, version FROM pages_all ORDER BY version, fetch_id'), [
      ['f1', '', 0],
      ['f2', 'Title 2', 0],
      ['f1', 'Title 1', 1],
    ]);
    assert.deepEqual(await query(out, `SELECT fetch_id, title FROM pages ORDER BY fetch_id`, 0), [
      ['f1', ''],
      ['f2', 'Title 2'],
    ]);
    assert.equal((await query(out, `SELECT count(*) FROM links`, 0))[0]![0], 3);
  });
});

describe('compaction', () => {
  async function manySmallFiles(out: string): Promise<void> {
    const w = await ParquetTableWriter.open(out);
    for (let b = 0; b < 5; b++) {
      const ids = [b * 3, b * 3 + 1, b * 3 + 2];
      await w.write({ pages: ids.map((i) => page(i)), links: ids.map((i) => link(i, i)), fetch_log: ids.map((i) => logRow(i)) });
    }
    // a redelivered batch: the same rows again in a sixth file
    await w.write({ pages: [page(4), page(5)], links: [link(4, 4)], fetch_log: [logRow(4)] });
    await w.close();
  }

  test('merges each partition into one file, drops redelivered copies, and readers see the same rows', async () => {
    const out = await mk();
    await manySmallFiles(out);
    const before = await snapshot(out);
    assert.equal((await parquetFiles(out)).length, 18);
    assert.equal((await query(out, 'SELECT count(*) FROM raw_pages'))[0]![0], 17);

    const summary = await compactOutput(out, { minAgeMs: 0 });
    assert.equal((await parquetFiles(out)).length, 3, 'one file per table');
    assert.deepEqual({ files: summary.filesBefore, after: summary.filesAfter, dropped: summary.rowsBefore - summary.rowsAfter }, { files: 18, after: 3, dropped: 4 });
    assert.deepEqual(await snapshot(out), before);
    assert.equal((await query(out, 'SELECT count(*) FROM raw_pages'))[0]![0], 15, 'no duplicate copies left in the files');
    // sorted like the writer sorts
    const urls = (await query(out, 'SELECT url FROM raw_pages')).map((r) => String(r[0]));
    assert.deepEqual(urls, [...urls].sort());

    assert.equal((await compactOutput(out, { minAgeMs: 0 })).filesBefore, 0, 'a second run has nothing to do');
  });

  test('a crash after the merged file is written and before the inputs are deleted loses nothing and shows no duplicates', async () => {
    const out = await mk();
    await manySmallFiles(out);
    const before = await snapshot(out);
    await assert.rejects(
      compactOutput(out, {
        minAgeMs: 0,
        beforeRemove: async () => {
          throw new Error('simulated crash');
        },
      }),
      /simulated crash/,
    );
    assert.equal((await parquetFiles(out)).filter((f) => f.startsWith('pages/')).length, 7, 'six inputs and the merged file');
    assert.deepEqual(await snapshot(out), before);
    // the next run merges the leftovers with the merged file
    await compactOutput(out, { minAgeMs: 0 });
    assert.equal((await parquetFiles(out)).length, 3);
    assert.deepEqual(await snapshot(out), before);
  });

  test('files younger than the grace period are left alone; a file written meanwhile is never deleted', async () => {
    const out = await mk();
    await manySmallFiles(out);
    assert.equal((await compactOutput(out, { minAgeMs: 60_000 })).filesBefore, 0);

    // a persist process writes while the compaction runs (between merge and delete)
    const w = await ParquetTableWriter.open(out, { staleTmpAgeMs: 60_000 });
    await compactOutput(out, {
      minAgeMs: 0,
      beforeRemove: async () => {
        await w.write({ pages: [page(100)] });
      },
    });
    await w.close();
    const urls = (await query(out, 'SELECT url FROM pages')).map((r) => String(r[0]));
    assert.ok(urls.includes(page(100).url), 'the concurrently written row is there');
    assert.equal(urls.length, 16);
  });

  test('groups small files into runs up to the target size', () => {
    const f = (p: string, bytes: number) => ({ path: p, bytes, rawBytes: bytes });
    assert.deepEqual(
      groupForMerge([f('a', 40), f('b', 40), f('c', 40), f('d', 10), f('e', 200)], { bytes: 100, rawBytes: 1000 }).map((g) => g.map((x) => x.path)),
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    );
    assert.deepEqual(groupForMerge([f('a', 1), f('b', 1), f('c', 1)], { bytes: 100, rawBytes: 100 }).map((g) => g.length), [3]);
    // small on disk but large in memory (text compresses well): the uncompressed size bounds the run
    const g = (p: string, rawBytes: number) => ({ path: p, bytes: 1, rawBytes });
    assert.deepEqual(
      groupForMerge([g('a', 60), g('b', 30), g('c', 30), g('d', 30), g('e', 80)], { bytes: 100, rawBytes: 100 }).map((x) => x.map((y) => y.path)),
      [['a', 'b'], ['c', 'd']],
    );
  });
});
