import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ParquetTableWriter } from '../../pipeline/adapters/parquet/row-sink.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { capture, page } from '../../bench/support/output-rows.js';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

test("captures.content_languages holds the page's language as cc-index does: ISO 639-3", async () => {
  const out = await fsp.mkdtemp(path.join(os.tmpdir(), 'captures-languages-'));
  dirs.push(out);
  const w = await ParquetTableWriter.open(out);
  await w.write({
    pages: [page(1, { content_languages: 'en-GB' }), page(2, { content_languages: 'zh-hant' }), page(3, { content_languages: 'ceb' }), page(4, { content_languages: null })],
    captures: [
      capture(1),
      capture(2),
      capture(3),
      capture(4),
      // no page behind these: nothing to say
      capture(5, { subset: 'crawldiagnostics', fetch_status: 404 }),
      capture(6, { subset: 'robotstxt', capture_id: 'robots:1', fetch_id: null, url_path: '/robots.txt' }),
    ],
  });
  await w.close();
  const db = await openOutputDatabase(out);
  try {
    const r = await db.run('SELECT capture_id, content_languages FROM captures ORDER BY capture_id');
    assert.deepEqual(r.rows, [
      ['f1:1', 'eng'],
      ['f2:1', 'zho'],
      ['f3:1', 'ceb'],
      ['f4:1', null],
      ['f5:1', null],
      ['robots:1', null],
    ]);
    // the page keeps the tag its markup (or the detector) gave
    const p = await db.run(`SELECT content_languages FROM pages WHERE fetch_id = 'f1'`);
    assert.deepEqual(p.rows, [['en-GB']]);
  } finally {
    await db.close();
  }
});
