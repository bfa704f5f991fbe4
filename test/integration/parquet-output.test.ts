import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ParquetTableWriter, OutputRowError } from '../../pipeline/adapters/parquet/row-sink.js';
import { openOutputDatabase, type QueryResult } from '../../pipeline/adapters/duckdb-views.js';
import { formatResult } from '../../cli/table-format.js';
import { TABLES, type PageRow } from '../../schemas/output-tables.js';

import { T0, link, logRow, page } from '../../bench/support/output-rows.js';

async function tempDir(): Promise<string> {
  return fsp.mkdtemp(path.join(os.tmpdir(), 'parquet-output-'));
}

/** Files under `dir` and its partition directories, as relative paths. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

const col = (r: QueryResult, name: string): unknown[] => {
  const i = r.columns.indexOf(name);
  assert.ok(i >= 0, `column ${name} in ${r.columns.join(',')}`);
  return r.rows.map((row) => row[i]);
};

describe('parquet output', () => {
  let dirs: string[] = [];
  const mk = async (): Promise<string> => {
    const d = await tempDir();
    dirs.push(d);
    return d;
  };
  after(async () => {
    for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
    dirs = [];
  });

  test('empty output: views exist with the right columns and zero rows', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    await w.close();
    const db = await openOutputDatabase(out);
    try {
      for (const t of ['pages', 'links', 'fetch_log'] as const) {
        const r = await db.run(`SELECT * FROM ${t}`);
        assert.deepEqual(r.columns, [...TABLES[t].map((c) => c.name), 'version']);
        assert.equal(r.rows.length, 0);
        const raw = await db.run(`SELECT * FROM raw_${t}`);
        assert.deepEqual(raw.columns, [...TABLES[t].map((c) => c.name), 'version', '_file']);
        assert.equal(raw.rows.length, 0);
      }
      const types = await db.run(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM pages)`);
      assert.deepEqual(
        types.rows,
        [...TABLES.pages.map((c) => [c.name, c.type]), ['version', 'INTEGER']],
      );
    } finally {
      await db.close();
    }
  });

  test('write → files appear atomically, sorted by url; duplicates deduplicated in views', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    // unsorted input
    const pages = [page(3), page(1), page(2)];
    const links = [link(2, 1), link(1, 2), link(1, 1)];
    const logs = [logRow(3), logRow(1), logRow(2, { fetch_id: null, outcome: 'robots_disallowed', fetch_status: null, duration_ms: null, depth: null })];
    const w1 = await w.write({ pages, links, fetch_log: logs });
    assert.ok(w1.pages && w1.links && w1.fetch_log);
    assert.equal(w1.pages.rows, 3);
    assert.match(path.basename(w1.pages.path), /^part-\d{8}T\d{9}Z-[0-9a-f]{12}\.parquet$/);
    assert.ok(w1.pages.bytes > 0);

    // redelivery: the same rows again → second file per table
    const w2 = await w.write({ pages: [page(2), page(1)], links: [link(1, 1)], fetch_log: [logRow(1)] });
    assert.notEqual(w2.pages!.path, w1.pages!.path);
    // empty batch → nothing written
    assert.deepEqual(await w.write({ pages: [], links: [], fetch_log: [] }), {});
    await w.close();

    for (const t of ['pages', 'links', 'fetch_log']) {
      const files = await listFiles(path.join(out, t));
      assert.equal(files.length, 2, `${t}: ${files.join(',')}`);
      assert.ok(files.every((f) => f.endsWith('.parquet')));
    }

    const db = await openOutputDatabase(out);
    try {
      // sorted within each file (byte order, as DuckDB compares VARCHAR)
      const inFile = await db.run(`SELECT url FROM read_parquet('${w1.pages!.path}')`);
      const urls = col(inFile, 'url') as string[];
      assert.deepEqual(urls, [...urls].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      assert.deepEqual(urls, [page(1).url, page(2).url, page(3).url]);
      const linkFile = await db.run(`SELECT src_url, dst_url FROM read_parquet('${w1.links!.path}')`);
      assert.deepEqual(linkFile.rows, [
        [page(1).url, 'https://example.com/d1'],
        [page(1).url, 'https://example.com/d2'],
        [page(2).url, 'https://example.com/d1'],
      ]);

      assert.equal((await db.run('SELECT count(*) AS n FROM raw_pages')).rows[0]![0], 5);
      const p = await db.run('SELECT fetch_id, fetch_time, content_length, depth FROM pages ORDER BY fetch_id');
      assert.deepEqual(p.rows, [
        ['f1', new Date(T0 + 1).toISOString(), 1235, 1],
        ['f2', new Date(T0 + 2).toISOString(), 1236, 2],
        ['f3', new Date(T0 + 3).toISOString(), 1237, 3],
      ]);
      // the article fields round-trip, NULL where the page did not say
      const article = await db.run('SELECT fetch_id, text_source, author, published_at, site_name FROM pages ORDER BY fetch_id');
      assert.deepEqual(article.rows, [
        ['f1', 'main', null, null, 'Example'],
        ['f2', 'main', 'Author 2', new Date(T0 - 86_400_000).toISOString(), 'Example'],
        ['f3', 'main', null, null, 'Example'],
      ]);
      assert.equal((await db.run('SELECT count(*) FROM raw_links')).rows[0]![0], 4);
      assert.equal((await db.run('SELECT count(*) FROM links')).rows[0]![0], 3);
      assert.equal((await db.run('SELECT count(*) FROM raw_fetch_log')).rows[0]![0], 4);
      const fl = await db.run('SELECT event_id, fetch_id, fetch_status, depth FROM fetch_log ORDER BY event_id');
      assert.deepEqual(fl.rows, [
        ['e1', 'f1', 200, 0],
        ['e2', null, null, null],
        ['e3', 'f3', 200, 0],
      ]);
    } finally {
      await db.close();
    }
  });

  test('pages: at most one row per (crawl_id, url), latest fetch_time wins', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    await w.write({ pages: [page(1, { fetch_id: 'old', fetch_time: T0, title: 'old' })] });
    await w.write({ pages: [page(1, { fetch_id: 'new', fetch_time: T0 + 60_000, title: 'new' })] });
    await w.write({ pages: [page(1, { fetch_id: 'other-crawl', crawl_id: 'c2', fetch_time: T0 })] });
    await w.close();
    const db = await openOutputDatabase(out);
    try {
      const r = await db.run('SELECT crawl_id, fetch_id, title FROM pages ORDER BY crawl_id');
      assert.deepEqual(r.rows, [
        ['c1', 'new', 'new'],
        ['c2', 'other-crawl', 'Title 1'],
      ]);
    } finally {
      await db.close();
    }
  });

  test('hosts: one summary row per host from pages and fetch_log', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    await w.write({
      pages: [page(1, { url_host_name: 'a.test', content_length: 100, duration_ms: 10 }), page(2, { url_host_name: 'a.test', content_length: 300, duration_ms: 30 })],
      fetch_log: [
        logRow(1, { url_host_name: 'a.test', outcome: 'http_error' }),
        logRow(2, { url_host_name: 'a.test', outcome: 'retry' }),
        logRow(3, { url_host_name: 'b.test', outcome: 'robots_disallowed', reason: 'robots.txt unavailable for 3600 s, giving up: http 503' }),
        logRow(4, { url_host_name: 'c.test', outcome: 'robots_disallowed', reason: 'robots.txt: Disallow: /private/' }),
      ],
    });
    await w.close();
    const db = await openOutputDatabase(out);
    try {
      const r = await db.run('SELECT url_host_name, pages, errors, retries, robots_disallowed, bytes, median_latency_ms, robots_state FROM hosts ORDER BY 1');
      assert.deepEqual(r.rows, [
        ['a.test', 2, 1, 1, 0, 400, 20, 'allowed'],
        ['b.test', 0, 0, 0, 1, 0, null, 'unavailable'],
        ['c.test', 0, 0, 0, 1, 0, null, 'rules disallow some URLs'],
      ]);
    } finally {
      await db.close();
    }
  });

  test('views pick up files written after the database was opened', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    const db = await openOutputDatabase(out);
    try {
      assert.equal((await db.run('SELECT count(*) FROM pages')).rows[0]![0], 0);
      await w.write({ pages: [page(1)] });
      assert.equal((await db.run('SELECT count(*) FROM pages')).rows[0]![0], 1);
      await w.write({ pages: [page(2)] });
      assert.equal((await db.run('SELECT count(*) FROM pages')).rows[0]![0], 2);
    } finally {
      await db.close();
      await w.close();
    }
  });

  test('leftover .tmp files are ignored by readers and deleted on open', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    await w.write({ pages: [page(1)] });
    await w.close();
    const pagesDir = path.join(out, 'pages');
    // simulate a crash mid-write: a partial tmp file
    const tmp = path.join(pagesDir, 'part-20240101T000000000Z-deadbeef0000.parquet.tmp');
    await fsp.writeFile(tmp, 'PAR1 partial garbage');
    const db = await openOutputDatabase(out);
    assert.equal((await db.run('SELECT count(*) FROM pages')).rows[0]![0], 1);
    await db.close();

    const w2 = await ParquetTableWriter.open(out);
    await w2.close();
    const files = await listFiles(pagesDir);
    assert.equal(files.length, 1);
    assert.ok(files[0]!.endsWith('.parquet'));
  });

  test('unicode, quotes, NUL, empty strings and nulls survive', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    const tricky = [
      `it's "quoted", with commas; and 'single' quotes`,
      '日本語のテキスト 😀 emoji, Ünïcödé, עברית, العربية',
      'line1\nline2\r\nline3\ttab',
      'nul\u0000byte',
      '',
      '\\backslash\\ and %percent% and _underscore_',
      '\ue000 private use',
      '😀 astral emoji',
      '\uff01 fullwidth',
    ];
    const rows = tricky.map((t, i) =>
      page(i, { title: t, text: t.repeat(3), description: i % 2 ? null : t, url: `https://example.com/${t.slice(0, 12)}/${i}` }),
    );
    await w.write({ pages: rows, links: [link(0, 0, { anchor_text: tricky[0]!, rel: 'nofollow ugc' })] });
    await w.close();
    const db = await openOutputDatabase(out);
    try {
      const r = await db.run('SELECT fetch_id, title, text, description FROM pages ORDER BY fetch_id');
      assert.equal(r.rows.length, tricky.length);
      for (const [fid, title, text, desc] of r.rows as [string, string, string, string | null][]) {
        const i = Number(fid.slice(1));
        assert.equal(title, tricky[i]);
        assert.equal(text, tricky[i]!.repeat(3));
        assert.equal(desc, i % 2 ? null : tricky[i]);
      }
      const fileUrls = col(await db.run(`SELECT url FROM raw_pages ORDER BY _file`), 'url') as string[];
      const sorted = col(await db.run(`SELECT url FROM raw_pages ORDER BY url`), 'url');
      assert.deepEqual(fileUrls, sorted, 'file order equals DuckDB VARCHAR order');
      const l = await db.run('SELECT anchor_text, rel FROM links');
      assert.deepEqual(l.rows, [[tricky[0], 'nofollow ugc']]);
    } finally {
      await db.close();
    }
  });

  test('invalid rows are rejected before anything is written', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    try {
      await assert.rejects(
        w.write({ pages: [page(1), { ...page(2), depth: 1.5 }] }),
        (e: unknown) => e instanceof OutputRowError && e.table === 'pages' && e.rowIndex === 1 && e.column === 'depth',
      );
      await assert.rejects(w.write({ pages: [{ ...page(1), title: null as unknown as string }] }), OutputRowError);
      assert.deepEqual(await listFiles(path.join(out, 'pages')), []);
      // the writer is still usable afterwards
      const ok = await w.write({ pages: [page(1)] });
      assert.equal(ok.pages!.rows, 1);
    } finally {
      await w.close();
    }
  });

  test('concurrent writes are serialized and all land', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, k) => w.write({ pages: [page(k * 10), page(k * 10 + 1)], fetch_log: [logRow(k)] })),
    );
    await w.close();
    await assert.rejects(w.write({ pages: [page(1)] }), /closed/);
    assert.equal(new Set(results.map((r) => r.pages!.path)).size, 8);
    const db = await openOutputDatabase(out);
    try {
      assert.equal((await db.run('SELECT count(*) FROM pages')).rows[0]![0], 16);
      assert.equal((await db.run('SELECT count(*) FROM fetch_log')).rows[0]![0], 8);
    } finally {
      await db.close();
    }
  });

  test('writers of one process share a DuckDB instance: their writes at the same moment all land, and one closing leaves the other working', async () => {
    const out = await mk();
    const settings = { threads: 1, memoryLimit: '256MB' };
    const a = await ParquetTableWriter.open(out, settings);
    const b = await ParquetTableWriter.open(out, settings);
    // same tables, same moment: a staging table shared by both writers would mix or lose rows
    await Promise.all(
      Array.from({ length: 6 }, (_, k) => (k % 2 ? a : b).write({ pages: [page(k * 10), page(k * 10 + 1)], fetch_log: [logRow(k)] })),
    );
    await a.close();
    await b.write({ pages: [page(100)] });
    await b.close();
    const db = await openOutputDatabase(out);
    try {
      assert.equal((await db.run('SELECT count(*) FROM pages')).rows[0]![0], 13);
      assert.equal((await db.run('SELECT count(*) FROM fetch_log')).rows[0]![0], 6);
    } finally {
      await db.close();
    }
    // the instance closed with its last writer; a new writer gets a fresh one
    const c = await ParquetTableWriter.open(out, settings);
    await c.write({ pages: [page(200)] });
    await c.close();
  });

  test('2,000 pages of ~20 KB text write in reasonable time', async () => {
    const out = await mk();
    const w = await ParquetTableWriter.open(out);
    const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'crawler', 'parquet', 'ünïcode'];
    let seed = 1;
    const rnd = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const rows: PageRow[] = [];
    for (let i = 0; i < 2000; i++) {
      const parts: string[] = [];
      let len = 0;
      while (len < 20_000) {
        const wd = words[Math.floor(rnd() * words.length)]!;
        parts.push(wd);
        len += wd.length + 1;
      }
      rows.push(page(i, { text: parts.join(' ') }));
    }
    // shuffle so the writer has to sort
    for (let i = rows.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [rows[i], rows[j]] = [rows[j]!, rows[i]!];
    }
    const t0 = performance.now();
    const res = await w.write({ pages: rows, links: [], fetch_log: [] });
    const ms = performance.now() - t0;
    await w.close();
    console.log(`wrote 2000 pages (~${Math.round((2000 * 20_000) / 1e6)} MB text) in ${ms.toFixed(0)} ms → ${(res.pages!.bytes / 1e6).toFixed(1)} MB parquet`);
    assert.ok(ms < 20_000, `took ${ms} ms`);
    const db = await openOutputDatabase(out);
    try {
      const r = await db.run('SELECT count(*), min(length(text)) >= 19990 FROM pages');
      assert.deepEqual(r.rows, [[2000, true]]);
      const inFile = col(await db.run(`SELECT url FROM read_parquet('${res.pages!.path}')`), 'url');
      assert.deepEqual(inFile, Array.from({ length: 2000 }, (_, i) => page(i).url));
    } finally {
      await db.close();
    }
  });
});

describe('formatResult', () => {
  const result: QueryResult = {
    columns: ['url', 'n', 'note'],
    rows: [
      ['https://a.example/', 1, 'plain'],
      ['https://b.example/x', 1234, 'has "quotes", commas\nand a newline'],
      ['https://c.example/', null, 'x'.repeat(200)],
    ],
  };

  test('table', () => {
    const s = formatResult(result, 'table');
    const lines = s.trimEnd().split('\n');
    assert.match(lines[0]!, /^url\s+\| n\s+\| note$/);
    assert.match(lines[1]!, /^-+-\+-+-\+-+$/);
    assert.equal(lines.length, 2 + 3 + 1);
    assert.equal(lines.at(-1), '(3 rows)');
    // columns aligned: every '|' of data rows at the same offsets as the header's
    const bars = (l: string): number[] => [...l].flatMap((c, i) => (c === '|' ? [i] : []));
    for (const l of lines.slice(2, 5)) assert.deepEqual(bars(l).slice(0, 2), bars(lines[0]!));
    // numbers right-aligned, NULL shown, newline escaped, long cell truncated to 80
    assert.ok(lines[2]!.includes('|    1 |'));
    assert.ok(lines[3]!.includes('\\n'));
    assert.ok(lines[4]!.includes('NULL'));
    const lastCell = lines[4]!.split(' | ')[2]!;
    assert.equal([...lastCell].length, 80);
    assert.ok(lastCell.endsWith('…'));
    assert.equal(formatResult({ columns: ['a'], rows: [[1]] }, 'table').trimEnd().split('\n').at(-1), '(1 row)');
    assert.equal(formatResult({ columns: ['a'], rows: [] }, 'table'), 'a\n-\n(0 rows)\n');
  });

  test('csv (RFC 4180)', () => {
    const s = formatResult(result, 'csv');
    assert.equal(
      s,
      'url,n,note\r\n' +
        'https://a.example/,1,plain\r\n' +
        'https://b.example/x,1234,"has ""quotes"", commas\nand a newline"\r\n' +
        `https://c.example/,,${'x'.repeat(200)}\r\n`,
    );
  });

  test('json', () => {
    const parsed = JSON.parse(formatResult(result, 'json'));
    assert.deepEqual(parsed, [
      { url: 'https://a.example/', n: 1, note: 'plain' },
      { url: 'https://b.example/x', n: 1234, note: 'has "quotes", commas\nand a newline' },
      { url: 'https://c.example/', n: null, note: 'x'.repeat(200) },
    ]);
    assert.deepEqual(JSON.parse(formatResult({ columns: ['a'], rows: [] }, 'json')), []);
  });

  test('formats real query results (timestamps as ISO, bigint as number)', async () => {
    const out = await fsp.mkdtemp(path.join(os.tmpdir(), 'parquet-fmt-'));
    try {
      const db = await openOutputDatabase(out);
      const r = await db.run(
        `SELECT TIMESTAMP '2024-01-15 12:00:00.123' AS t, 42::BIGINT AS b, 9007199254740993::BIGINT AS big, [1, 2] AS l, NULL AS z`,
      );
      await db.close();
      assert.deepEqual(r.rows, [['2024-01-15T12:00:00.123Z', 42, '9007199254740993', [1, 2], null]]);
      assert.deepEqual(JSON.parse(formatResult(r, 'json')), [
        { t: '2024-01-15T12:00:00.123Z', b: 42, big: '9007199254740993', l: [1, 2], z: null },
      ]);
    } finally {
      await fsp.rm(out, { recursive: true, force: true });
    }
  });
});
