/**
 * What a crawl's archive gives the tools its users already have, through the CLI on a crawl of
 * the test web: `crawl index` rebuilds each WARC file's CDXJ index byte for byte; `crawl
 * export wacz` leaves out a file still being written; `crawl export wet|wat` writes Common Crawl's text and metadata files, read here with warcio.js:
 * one record per stored page, the WET text the page's main text, each record pointing at
 * the response it was made from.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { cdxjPathOf } from '../../pipeline/adapters/warc/cdxj-file.js';
import { OPEN_SUFFIX } from '../../pipeline/adapters/warc/file-sink.js';
import { unzipSync } from 'fflate';
import { runCli } from '../support/crawl-cli.js';
import { E2E, queryOutput, runShortCrawl } from '../support/e2e-web.js';
import { readWarcFile, warcFiles } from '../support/warc-reader.js';
import { iso6393OfTag } from '../../stages/shared/language-codes.js';

describe('end to end: the archive indexed and exported as CDXJ, WET and WAT', () => {
  let web: TestWeb;
  let dir: string;
  let out: string;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'archive-exports-'));
    out = path.join(dir, 'out');
    web = await startTestWeb({ hosts: 2, pagesPerHost: 12, seed: E2E.seed });
    // small WARC files: several of them, so the exports cross file boundaries
    await runShortCrawl(web, out, 'exports', ['--max-depth', '2', '--no-compact', '--warc-max-bytes', String(96 * 1024)]);
  });
  after(async () => {
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('crawl index rebuilds every file’s index as the archive wrote it', async () => {
    const files = warcFiles(out);
    assert.ok(files.length > 1, `several WARC files: ${files.length}`);
    const written = files.map((f) => readFileSync(cdxjPathOf(f), 'utf8'));
    for (const f of files) rmSync(cdxjPathOf(f));
    const run = await runCli(['index', '--out', out]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^indexed ${files.length} WARC files: \\d+ records, \\d+ index lines`));
    assert.deepEqual(files.map((f) => readFileSync(cdxjPathOf(f), 'utf8')), written);
    // --missing: only a file without an index is read
    rmSync(cdxjPathOf(files[0]!));
    const missing = await runCli(['index', '--out', out, '--missing']);
    assert.equal(missing.code, 0, missing.stderr);
    assert.match(missing.stdout, /^indexed 1 WARC file: /);
    assert.equal(readFileSync(cdxjPathOf(files[0]!), 'utf8'), written[0]);
  });

  it('WET: a conversion record per stored page, its text the page’s main text, referring to the page’s response', async () => {
    const to = path.join(dir, 'crawl.warc.wet.gz');
    const run = await runCli(['export', 'wet', '--out', out, '--to', to]);
    assert.equal(run.code, 0, run.stderr);
    const [info, ...records] = await readWarcFile(to);
    assert.equal(info!.type, 'warcinfo');
    const pages = (await queryOutput(
      out,
      `SELECT p.url, p.text, c.warc_record_id FROM pages p JOIN captures c ON c.fetch_id = p.fetch_id AND c.warc_type IN ('response', 'revisit') AND c.fetch_status = 200 WHERE p.fetch_status = 200`,
    )) as Array<[string, string, string]>;
    assert.equal(records.length, pages.length, 'one record per stored page');
    const byUrl = new Map(pages.map(([url, text, id]) => [url, { text, id }]));
    for (const r of records) {
      assert.equal(r.type, 'conversion');
      assert.equal(r.headers.get('content-type'), 'text/plain');
      const page = byUrl.get(r.uri!)!;
      assert.ok(page, `${r.uri} is a stored page`);
      assert.equal(Buffer.from(r.payload).toString('utf8'), page.text, `${r.uri}: the main text`);
      assert.equal(r.headers.get('warc-refers-to'), page.id);
    }
    assert.match(records[0]!.headers.get('warc-identified-content-language') ?? '', /^[a-z]{3}/);
  });

  it('WAT: a metadata record per stored page, CC’s JSON envelope of its response: WARC and HTTP headers, title, links', async () => {
    const to = path.join(dir, 'crawl.warc.wat.gz');
    const run = await runCli(['export', 'wat', '--out', out, '--to', to]);
    assert.equal(run.code, 0, run.stderr);
    const [info, ...records] = await readWarcFile(to);
    assert.equal(info!.type, 'warcinfo');
    const stored = await queryOutput(out, 'SELECT count(*) FROM pages WHERE fetch_status = 200');
    assert.equal(records.length, Number(stored[0]![0]));
    const warcs = new Map<string, Awaited<ReturnType<typeof readWarcFile>>>();
    for (const f of warcFiles(out)) warcs.set(path.basename(f), await readWarcFile(f));
    for (const r of records) {
      assert.equal(r.type, 'metadata');
      assert.equal(r.headers.get('content-type'), 'application/json');
      type Envelope = { Container: { Filename: string; Offset: string }; Envelope: { 'WARC-Header-Metadata': Record<string, string>; 'Payload-Metadata': { 'HTTP-Response-Metadata': { 'Response-Message': { Status: string }; Headers: Record<string, string>; 'HTML-Metadata': { Head: { Title: string }; Links: Array<{ path: string; url: string }> } } } } };
      const wat = JSON.parse(Buffer.from(r.payload).toString('utf8')) as Envelope;
      // the container names the response record the envelope describes, by file and offset
      const response = warcs.get(wat.Container.Filename)?.find((x) => x.offset === Number(wat.Container.Offset));
      assert.ok(response, `${r.uri}: a record at ${wat.Container.Filename}@${wat.Container.Offset}`);
      assert.equal(response.id, r.headers.get('warc-refers-to'));
      assert.equal(wat.Envelope['WARC-Header-Metadata']['WARC-Target-URI'], r.uri);
      const http = wat.Envelope['Payload-Metadata']['HTTP-Response-Metadata'];
      assert.equal(http['Response-Message'].Status, '200');
      assert.match(http.Headers['content-type'] ?? '', /^text\/html/);
      assert.ok(http['HTML-Metadata'].Head.Title.length > 0);
      for (const l of http['HTML-Metadata'].Links) assert.equal(l.path, 'A@/href');
    }
    const links = records.reduce((n, r) => n + (JSON.parse(Buffer.from(r.payload).toString('utf8')) as { Envelope: { 'Payload-Metadata': { 'HTTP-Response-Metadata': { 'HTML-Metadata': { Links: unknown[] } } } } }).Envelope['Payload-Metadata']['HTTP-Response-Metadata']['HTML-Metadata'].Links.length, 0);
    const stored2 = await queryOutput(out, 'SELECT count(*) FROM links l JOIN pages p ON p.fetch_id = l.fetch_id WHERE p.fetch_status = 200');
    assert.equal(links, Number(stored2[0]![0]), 'every stored link of the pages');
  });

  it('a WACZ leaves out a WARC file still being written, and the pages whose records are in it', async () => {
    const files = warcFiles(out);
    const open = files[files.length - 1]!;
    // a live writer (this process) is writing it: neither sealed nor packaged
    writeFileSync(open + OPEN_SUFFIX, JSON.stringify({ pid: process.pid, hostname: os.hostname(), started: Date.now() }));
    try {
      const to = path.join(dir, 'partial.wacz');
      const run = await runCli(['export', 'wacz', '--out', out, '--to', to]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /1 WARC file\(s\) still being written are left out/);
      const zip = unzipSync(readFileSync(to));
      const archived = Object.keys(zip).filter((n) => n.startsWith('archive/')).map((n) => path.basename(n));
      assert.deepEqual(archived.sort(), files.slice(0, -1).map((f) => path.basename(f)).sort());
      const listed = Buffer.from(zip['pages/pages.jsonl']!).toString().trimEnd().split('\n').slice(1).map((l) => (JSON.parse(l) as { id: string }).id);
      const inOpen = (await queryOutput(out, `SELECT fetch_id FROM captures WHERE warc_filename = 'warc/${path.basename(open)}'`)).map((r) => String(r[0]));
      assert.ok(inOpen.length > 0);
      assert.deepEqual(listed.filter((id) => inOpen.includes(id)), [], 'no page of the open file is listed');
      assert.ok(listed.length > 0);
    } finally {
      rmSync(open + OPEN_SUFFIX);
    }
  });

  it('a host with no pages is a clear error, and leaves no file', async () => {
    const noHost = await runCli(['export', 'wat', '--out', out, '--host', 'nowhere.test', '--to', path.join(dir, 'none.wat.gz')]);
    assert.equal(noHost.code, 2);
    assert.match(noHost.stderr, /no stored pages of nowhere\.test/);
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('none')), []);
  });
  it("captures carry cc-index's host, language and crawl columns with cc-index's meaning", async () => {
    const rows = await queryOutput(
      out,
      `SELECT c.url_host_name, c.url_host_tld, c.url_host_2nd_last_part, c.url_host_name_reversed, c.url_host_registry_suffix,
              c.url_host_registered_domain, c.crawl, c.warc_type, c.content_languages, p.content_languages
       FROM captures c LEFT JOIN pages p ON p.fetch_id = c.fetch_id WHERE c.subset = 'warc'`,
    );
    assert.ok(rows.length > 10, `${rows.length} captures`);
    const withLanguage = rows.filter((r) => r[9] !== null && r[7] === 'response');
    assert.ok(withLanguage.length > 0 && withLanguage.every((r) => r[8] !== null), 'responses of pages with a language have one');
    for (const [host, tld, second, reversed, suffix, domain, crawl, type, languages, pageLanguage] of rows) {
      const labels = String(host).split('.').reverse();
      assert.equal(tld, labels[0]);
      assert.equal(second, labels[1] ?? null);
      assert.equal(reversed, labels.join('.'));
      // the test web's .test names are under no listed public suffix: cc-index has no suffix or domain for them
      assert.deepEqual([suffix, domain], [null, null]);
      assert.equal(crawl, 'exports');
      if (type === 'response' && pageLanguage !== null) assert.equal(languages, iso6393OfTag(String(pageLanguage)), String(host));
    }
  });
});
