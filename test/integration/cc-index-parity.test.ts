import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ParquetTableWriter } from '../../pipeline/adapters/parquet/row-sink.js';
import { openOutputDatabase, type OutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { hostParts } from '../../stages/archive/host-parts.js';
import type { CaptureRow, PageRow } from '../../schemas/output-tables.js';
import { capture, page } from '../../bench/support/output-rows.js';

/** test/fixtures/cc-index, from dist/test/integration */
const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/cc-index');

interface SchemaField {
  name: string;
  type: string;
  nullable: boolean;
}

/** cc-index's Spark types, and the DuckDB types that hold the same values. */
const TYPES: Record<string, readonly string[]> = {
  string: ['VARCHAR'],
  short: ['SMALLINT'],
  // offsets and lengths are 64-bit here: a WARC file can pass 2 GiB
  integer: ['INTEGER', 'BIGINT'],
  timestamp: ['TIMESTAMP'],
};

/** cc-index columns the crawl does not know, and why. */
const NOT_KNOWN: Record<string, string> = {
  warc_segment: 'the archive writes no segments: WARC files sit in one folder per crawl',
};

/** cc-index columns that are never NULL there but can be here, and why. */
const NULLABLE_HERE: Record<string, string> = {
  fetch_status: 'a capture of a network failure (a metadata record) has no status',
};

const CRAWLS = ['CC-MAIN-2018-05', 'CC-MAIN-2018-17', 'CC-MAIN-2018-39'];
const HOSTS = ['www.bbc.co.uk', 'news.example.com', 'myblog.blogspot.com', 'www.nrk.no'];
/** count-language-tld.sql keeps combinations seen 1,000 times or more */
const PER_CRAWL = 2_800;

let out: string;
let db: OutputDatabase;

function rowsFor(crawl: string): { pages: PageRow[]; captures: CaptureRow[] } {
  const pages: PageRow[] = [];
  const captures: CaptureRow[] = [];
  for (let i = 0; i < PER_CRAWL; i++) {
    const host = HOSTS[i % HOSTS.length]!;
    const id = `${crawl}-f${i}`;
    const url = `https://${host}/p${i}${i % 10 === 0 ? '.pdf' : ''}`;
    const pdf = i % 10 === 0;
    const failed = i % 7 === 0;
    captures.push(
      capture(i, {
        url,
        url_host_name: host,
        ...hostParts(host),
        url_path: `/p${i}`,
        url_surtkey: `${host.split('.').reverse().join(',')})/p${i}`,
        fetch_status: failed ? 404 : 200,
        subset: failed ? 'crawldiagnostics' : 'warc',
        content_mime_type: pdf ? 'application/pdf' : 'text/html',
        content_mime_detected: pdf ? 'application/pdf' : 'text/html',
        warc_record_length: 1000 + (i % 3),
        capture_id: `${id}:1`,
        fetch_id: id,
        crawl_id: crawl,
      }),
    );
    if (!failed && !pdf) pages.push(page(i, { fetch_id: id, url, url_host_name: host, crawl_id: crawl, content_languages: host.endsWith('.no') ? 'nb' : host.endsWith('.uk') ? 'en-GB' : 'en' }));
  }
  return { pages, captures };
}

before(async () => {
  out = await fsp.mkdtemp(path.join(os.tmpdir(), 'cc-index-parity-'));
  const w = await ParquetTableWriter.open(out);
  for (const crawl of CRAWLS) await w.write(rowsFor(crawl));
  await w.close();
  db = await openOutputDatabase(out);
  // the examples are written for Athena's table "ccindex"."ccindex"
  await db.run('CREATE SCHEMA ccindex');
  await db.run('CREATE VIEW ccindex.ccindex AS SELECT * FROM main.captures');
});

after(async () => {
  await db?.close();
  if (out) await fsp.rm(out, { recursive: true, force: true });
});

test("captures has every column of cc-index's flat schema the crawl knows, with its type", async () => {
  const schema = JSON.parse(await fsp.readFile(path.join(FIXTURES, 'cc-index-schema-flat.json'), 'utf8')) as { fields: SchemaField[] };
  const described = await db.run('SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM captures)');
  const ours = new Map(described.rows.map((r) => [String(r[0]), String(r[1])]));
  const missing: string[] = [];
  for (const f of schema.fields) {
    if (NOT_KNOWN[f.name] !== undefined) {
      assert.ok(!ours.has(f.name), `${f.name} is listed as not known but exists`);
      continue;
    }
    const type = ours.get(f.name);
    if (type === undefined) {
      missing.push(f.name);
      continue;
    }
    assert.ok(TYPES[f.type]?.includes(type), `${f.name}: cc-index ${f.type}, captures ${type}`);
  }
  assert.deepEqual(missing, [], 'cc-index columns missing from captures');
  for (const name of Object.keys(NULLABLE_HERE)) assert.ok(schema.fields.find((f) => f.name === name)?.nullable === false);
});

test("captures' host, language and crawl columns mean what cc-index's do", async () => {
  const r = await db.run(
    `SELECT url_host_name, url_host_tld, url_host_2nd_last_part, url_host_3rd_last_part, url_host_4th_last_part,
            url_host_registry_suffix, url_host_registered_domain, url_host_private_suffix, url_host_private_domain, url_host_name_reversed,
            any_value(content_languages), any_value(crawl)
     FROM captures WHERE crawl = 'CC-MAIN-2018-05' AND subset = 'warc' AND content_mime_type = 'text/html'
     GROUP BY ALL ORDER BY 1`,
  );
  assert.deepEqual(r.rows, [
    ['myblog.blogspot.com', 'com', 'blogspot', 'myblog', null, 'com', 'blogspot.com', 'blogspot.com', 'myblog.blogspot.com', 'com.blogspot.myblog', 'eng', 'CC-MAIN-2018-05'],
    ['news.example.com', 'com', 'example', 'news', null, 'com', 'example.com', 'com', 'example.com', 'com.example.news', 'eng', 'CC-MAIN-2018-05'],
    ['www.bbc.co.uk', 'uk', 'co', 'bbc', 'www', 'co.uk', 'bbc.co.uk', 'co.uk', 'bbc.co.uk', 'uk.co.bbc.www', 'eng', 'CC-MAIN-2018-05'],
    ['www.nrk.no', 'no', 'nrk', 'www', null, 'no', 'nrk.no', 'no', 'nrk.no', 'no.nrk.www', 'nob', 'CC-MAIN-2018-05'],
  ]);
});

const example = (name: string): Promise<string> => fsp.readFile(path.join(FIXTURES, 'examples', `${name}.sql`), 'utf8');

/** What the example queries should find, counted from the rows written. */
function expected(): { byTld: Array<[string, number, number, number]>; notFound: number; pdfs: number; nrk: number; eng: Array<[string, number]> } {
  const { pages, captures } = rowsFor(CRAWLS[0]!);
  const warc = captures.filter((c) => c.subset === 'warc');
  const tlds = [...new Set(warc.map((c) => c.url_host_tld!))];
  const byTld = tlds
    .map((t): [string, number, number, number] => {
      const rows = warc.filter((c) => c.url_host_tld === t);
      return [t, rows.length, new Set(rows.map((c) => c.url_host_name)).size, new Set(rows.map((c) => c.url_host_registered_domain)).size];
    })
    .sort((a, b) => b[1] - a[1]);
  const english = new Map<string, number>();
  for (const p of pages) if (!p.url_host_name.endsWith('.no')) english.set(hostParts(p.url_host_name).url_host_tld!, (english.get(hostParts(p.url_host_name).url_host_tld!) ?? 0) + 1);
  return {
    byTld,
    notFound: captures.filter((c) => c.fetch_status === 404).length,
    pdfs: warc.filter((c) => c.content_mime_type === 'application/pdf').length,
    nrk: warc.filter((c) => c.url_host_registered_domain === 'nrk.no').length,
    eng: [...english].filter(([, n]) => n >= 1000),
  };
}

test("cc-index-table's example queries run unchanged on captures", async () => {
  const want = expected();
  const byTld = await db.run(await example('count-by-tld-page-host-domain'));
  assert.deepEqual(byTld.columns, ['n_pages', 'tld', 'n_hosts', 'n_domains']);
  // ORDER BY n_pages DESC: ties (uk, no) in either order
  const counts = byTld.rows.map((r) => Number(r[0]));
  assert.deepEqual(counts, [...counts].sort((a, b) => b - a));
  const byName = (a: unknown[], b: unknown[]): number => String(a[0]).localeCompare(String(b[0]));
  assert.deepEqual(byTld.rows.map((r) => [r[1], r[0], r[2], r[3]]).sort(byName), [...want.byTld].sort(byName));

  const statuses = await db.run(await example('count-fetch-status'));
  assert.deepEqual(statuses.rows, [[want.notFound, 404]]);

  const pdfs = await db.run(await example('get-records-of-mime-type'));
  assert.deepEqual(pdfs.columns, ['url', 'content_mime_type', 'content_mime_detected', 'warc_filename', 'warc_record_offset', 'warc_record_length']);
  assert.equal(pdfs.rows.length, want.pdfs);
  assert.ok(pdfs.rows.every((r) => String(r[0]).endsWith('.pdf')));

  const norwegian = await db.run(await example('count-domains-of-tld'));
  assert.deepEqual(norwegian.rows, [[want.nrk, 'nrk.no']]);

  // HAVING COUNT(*) >= 1000 (crawl CC-MAIN-2018-39)
  const languages = await db.run(await example('count-language-tld'));
  assert.ok(want.eng.length > 0);
  assert.deepEqual(languages.rows.map((r) => [r[2], r[0]]), want.eng.map(([tld, n]) => [tld, n]));
  assert.ok(languages.rows.every((r) => r[1] === 'eng'));
});
