import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ParquetTableWriter } from '../../pipeline/adapters/parquet/row-sink.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import type { CaptureRow } from '../../schemas/output-tables.js';
import { T0, page } from '../../bench/support/output-rows.js';

function capture(i: number, over: Partial<CaptureRow> = {}): CaptureRow {
  return {
    url_surtkey: `com,example)/p${i}`,
    url: `https://example.com/p${String(i).padStart(5, '0')}`,
    url_host_name: 'example.com',
    url_host_tld: 'com',
    url_host_registered_domain: 'example.com',
    url_protocol: 'https',
    url_port: null,
    url_path: `/p${i}`,
    url_query: null,
    fetch_time: T0 + i,
    fetch_status: 200,
    fetch_redirect: null,
    content_digest: `sha1:${i}`,
    content_mime_type: 'text/html',
    content_mime_detected: 'text/html',
    content_charset: 'utf-8',
    // the archive writes captures before extract knows the language
    content_languages: null,
    content_truncated: null,
    warc_filename: 'warc/a.warc.gz',
    warc_record_offset: i * 1000,
    warc_record_length: 900,
    subset: 'warc',
    capture_id: `f${i}:1`,
    fetch_id: `f${i}`,
    warc_record_id: `<urn:uuid:${i}>`,
    warc_type: 'response',
    fetch_duration_ms: 10,
    remote_ip: '127.0.0.1',
    fetch_protocol: 'http/1.1',
    failure_reason: null,
    crawl_id: 'c1',
    ...over,
  };
}

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
