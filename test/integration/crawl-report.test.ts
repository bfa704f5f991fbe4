/**
 * The report's figures from outputs written by the persist stage's Parquet writer, read back
 * through DuckDB's views: each number is what a query over the views (the hosts view, the docs'
 * status histogram, a count) gives, redelivered rows count once, and an empty or one-page
 * output makes a report with plain text and no NaN.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ParquetTableWriter } from '../../pipeline/adapters/parquet/row-sink.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { crawlReport, readReportFigures } from '../../app/report/index.js';
import { T0, capture, logRow, page } from '../../bench/support/output-rows.js';
import type { FetchLogRow, PageRow } from '../../schemas/output-tables.js';
import { runCli } from '../support/crawl-cli.js';
import { existsSync } from 'node:fs';

const dirs: string[] = [];
async function tempOut(): Promise<string> {
  const d = await fsp.mkdtemp(path.join(os.tmpdir(), 'crawl-report-'));
  dirs.push(d);
  return d;
}
after(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

const SECOND = 1000;
const HOSTS = ['www.a.test', 'blog.a.test', 'b.test', 'c.example.co.uk'];
const domainOf = (host: string) => (host.endsWith('.co.uk') ? host.split('.').slice(-3).join('.') : host.split('.').slice(-2).join('.'));

/** A crawl of 90 s: 40 pages over four hosts of three registrable domains, and what failed on the way. */
function crawlRows(): { pages: PageRow[]; log: FetchLogRow[] } {
  const pages: PageRow[] = [];
  const log: FetchLogRow[] = [];
  for (let i = 0; i < 40; i++) {
    const host = HOSTS[i % HOSTS.length]!;
    const t = T0 + Math.floor(i * 2.2 * SECOND);
    pages.push(page(i, { url: `http://${host}/p${i}`, url_host_name: host, url_host_registered_domain: domainOf(host), fetch_time: t, content_length: 1000 * (i + 1) }));
    log.push(logRow(i, { url: `http://${host}/p${i}`, url_host_name: host, fetch_time: t }));
  }
  const fail = (i: number, host: string, over: Partial<FetchLogRow>): FetchLogRow =>
    logRow(100 + i, { fetch_id: `x${i}`, url: `http://${host}/x${i}`, url_host_name: host, fetch_time: T0 + (30 + i) * SECOND, ...over });
  log.push(
    fail(0, 'b.test', { outcome: 'http_error', reason: 'http 404', fetch_status: 404 }),
    fail(1, 'b.test', { outcome: 'http_error', reason: 'http 404', fetch_status: 404 }),
    fail(2, 'b.test', { outcome: 'http_error', reason: 'http 503: Retry-After 2000 ms honoured', fetch_status: 503 }),
    fail(3, 'www.a.test', { outcome: 'network_error', reason: 'timeout: fetching http://www.a.test/x3: total timeout after 3000 ms', fetch_status: null }),
    fail(4, 'www.a.test', { outcome: 'retry', reason: 'reset: retry 1 of 3; reset: backing off 200 ms', fetch_status: null }),
    fail(5, 'c.example.co.uk', { outcome: 'retry', reason: 'http 503: retry 1 of 3', fetch_status: 503 }),
    fail(6, 'dead.test', { outcome: 'network_error', reason: 'dns: getaddrinfo ENOTFOUND dead.test', fetch_status: null }),
    fail(7, 'www.a.test', { outcome: 'robots_disallowed', reason: 'robots.txt: Disallow: /private/', fetch_status: null }),
    fail(8, 'b.test', { outcome: 'filtered', reason: 'max_pages', fetch_status: null }),
    fail(9, 'b.test', { outcome: 'redirect', reason: 'redirect to http://b.test/p2', fetch_status: 301, fetch_time: T0 + 90 * SECOND }),
  );
  return { pages, log };
}

async function writeCrawl(out: string): Promise<void> {
  const { pages, log } = crawlRows();
  const w = await ParquetTableWriter.open(out);
  try {
    await w.write({ pages: pages.slice(0, 25), fetch_log: log.slice(0, 30) });
    // a redelivered batch: the same rows again in another file, which the views show once
    await w.write({ pages: pages.slice(20), fetch_log: log.slice(25), captures: [capture(1), capture(2, { warc_record_length: 1500 })] });
    // a second crawl id in the same output
    await w.write({ pages: [page(500, { crawl_id: 'c2', url: 'http://other.test/', url_host_name: 'other.test', url_host_registered_domain: 'other.test', fetch_time: T0 + 3_600_000 })] });
  } finally {
    await w.close();
  }
}

async function sql(out: string, query: string): Promise<unknown[][]> {
  const db = await openOutputDatabase(out);
  try {
    return (await db.run(query)).rows;
  } finally {
    await db.close();
  }
}

describe('crawl report figures', () => {
  it("equal what SQL over the views gives, for one crawl id and for the whole output", async () => {
    const out = await tempOut();
    await writeCrawl(out);
    const db = await openOutputDatabase(out);
    try {
      const f = await readReportFigures(db, { crawlId: 'c1' });
      const q = async (s: string) => (await db.run(s)).rows;
      const one = async (s: string) => Number((await q(s))[0]![0]);
      assert.deepEqual(f.crawlIds, ['c1']);
      assert.equal(f.pages, 40);
      assert.equal(f.pages, await one(`SELECT count(*) FROM pages WHERE crawl_id = 'c1'`));
      assert.equal(f.hostsWithPages, 4);
      assert.equal(f.domains, await one(`SELECT count(DISTINCT url_host_registered_domain) FROM pages WHERE crawl_id = 'c1'`));
      assert.equal(f.domains, 3);
      assert.equal(f.hostsSeen, 5, 'the four hosts with pages and dead.test');
      assert.equal(f.bytesStored, await one(`SELECT sum(content_length) FROM pages WHERE crawl_id = 'c1'`));
      assert.equal(f.warcBytes, 900 + 1500);
      // errors are the hosts view's errors (http_error, network_error, refused)
      assert.equal(f.errors, await one(`SELECT sum(errors) FROM hosts WHERE url_host_name <> 'other.test'`));
      assert.equal(f.errors, 5);
      assert.deepEqual(
        f.errorHosts.map((h) => [h.host, h.errors, h.pages]),
        (await q(`SELECT url_host_name, errors, pages FROM hosts WHERE errors > 0 ORDER BY errors DESC, url_host_name`)).map((r) => [r[0], Number(r[1]), Number(r[2])]),
      );
      assert.deepEqual(
        f.outcomes.map((c) => [c.label, c.count]),
        (await q(`SELECT outcome, count(*) FROM fetch_log WHERE crawl_id = 'c1' GROUP BY 1 ORDER BY 2 DESC, 1`)).map((r) => [r[0], Number(r[1])]),
      );
      assert.deepEqual(
        f.errorReasons.map((r) => [r.label, r.outcome, r.count]),
        [['http 404', 'http_error', 2], ['dns', 'network_error', 1], ['http 503', 'http_error', 1], ['timeout', 'network_error', 1]],
      );
      // the docs' status histogram, by class; plus the failed requests that got no status
      const histogram = await q(`SELECT fetch_status, count(*) AS responses FROM fetch_log WHERE fetch_status IS NOT NULL GROUP BY 1 ORDER BY 1`);
      const byClass = new Map<string, number>();
      for (const [status, n] of histogram) byClass.set(`${Math.floor(Number(status) / 100)}xx`, (byClass.get(`${Math.floor(Number(status) / 100)}xx`) ?? 0) + Number(n));
      byClass.set('no response', 3);
      assert.deepEqual(f.statusClasses.map((c) => [c.label, c.count]), [...byClass]);
      assert.equal(f.requests, 40 + 3 + 2 + 2 + 1, 'fetched, http_error, network_error, retry, redirect');
      assert.equal(f.failedRequests, 7);
      // the time axis: 90 s in buckets of 2 s; every page, domain and byte is on it once
      const t = f.timeline!;
      assert.equal(f.durationMs, 90 * SECOND);
      assert.equal(t.bucketMs, 2 * SECOND);
      assert.equal(t.pages.length, 46);
      assert.equal(t.pages.reduce((a, b) => a + b, 0), f.pages);
      assert.equal(t.failedRequests.reduce((a, b) => a + b, 0), f.failedRequests);
      assert.equal(t.domainsCovered.at(-1), f.domains);
      assert.deepEqual(t.domainsCovered.slice(0, 4), [1, 1, 2, 3], 'a.test at 0 s (blog.a.test at 2.2 s is the same domain), b.test at 4.4 s, example.co.uk at 6.6 s');
      assert.equal(t.bytesStored.at(-1), f.bytesStored);

      const all = await readReportFigures(db);
      assert.deepEqual(all.crawlIds, ['c1', 'c2']);
      assert.equal(all.pages, await one('SELECT count(*) FROM pages'));
      assert.equal(all.pages, 41);
      assert.equal(all.durationMs, 3_600_000);
      assert.equal(all.timeline!.bucketMs, 60 * SECOND);
      assert.equal(all.timeline!.pages.reduce((a, b) => a + b, 0), 41);
    } finally {
      await db.close();
    }
  });

  it('the report shows those figures as text beside its charts', async () => {
    const out = await tempOut();
    await writeCrawl(out);
    const { html, figures } = await crawlReport(out, { crawlId: 'c1', now: new Date(T0) });
    assert.equal(figures.pages, 40);
    assert.match(html, /<dt>Pages stored<\/dt><dd><span class="big">40<\/span>/);
    assert.match(html, /<dt>Errors<\/dt><dd><span class="big">5<\/span>/);
    assert.match(html, /<th scope="row">http 404<\/th><td>http_error<\/td><td class="num">2<\/td>/);
    assert.equal((html.match(/<svg class="chart"/g) ?? []).length, 7);
    assert.doesNotMatch(html, /NaN|undefined|Infinity/);
    // the numbers in the page are the ones SQL gives
    assert.equal(Number((await sql(out, `SELECT count(*) FROM fetch_log WHERE crawl_id = 'c1' AND outcome = 'fetched'`))[0]![0]), 40);
    assert.match(html, /<th scope="row">fetched<\/th><td class="num">40<\/td>/);
  });

  it('an empty output and a one-page output make a report that says so, with no NaN', async () => {
    const empty = await tempOut();
    await (await ParquetTableWriter.open(empty)).close();
    const e = await crawlReport(empty, { now: new Date(T0) });
    assert.equal(e.figures.pages, 0);
    assert.equal(e.figures.timeline, null);
    assert.match(e.html, /This output has no pages and no outcomes yet/);
    assert.equal((e.html.match(/<svg/g) ?? []).length, 0);
    assert.equal((e.html.match(/<p class="empty">/g) ?? []).length, 7, 'each chart says why it is not drawn');
    assert.doesNotMatch(e.html, /NaN|undefined|Infinity/);

    const tiny = await tempOut();
    const w = await ParquetTableWriter.open(tiny);
    await w.write({ pages: [page(1)], fetch_log: [logRow(1)] });
    await w.close();
    const t = await crawlReport(tiny, { now: new Date(T0) });
    assert.equal(t.figures.pages, 1);
    assert.equal(t.figures.durationMs, 0);
    assert.deepEqual(t.figures.timeline?.pages, [1]);
    assert.match(t.html, /<span class="big">0 ms<\/span>/);
    assert.match(t.html, /1 pages\/s on average/);
    assert.doesNotMatch(t.html, /NaN|undefined|Infinity/);
    assert.match(t.html, /No URL ended in an error\./);
  });

  it('crawl report writes report.html in --out, or --file; a bad argument is one line and exit code 2, and writes nothing', async () => {
    const out = await tempOut();
    await writeCrawl(out);
    const ok = await runCli(['report', '--out', out, '--crawl-id', 'c1']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, `wrote ${path.join(out, 'report.html')} (${ok.stdout.match(/\(([^)]+)\)/)![1]}): 40 pages, 4 hosts, 3 registrable domains, 5 errors in 1 min 30 s\n`);
    assert.match(await fsp.readFile(path.join(out, 'report.html'), 'utf8'), /^<!doctype html>[\s\S]*<\/html>\n$/);
    const elsewhere = path.join(await tempOut(), 'r.html');
    assert.equal((await runCli(['report', '--out', out, '--file', elsewhere])).code, 0);
    assert.ok(existsSync(elsewhere));

    const cases: Array<[string[], RegExp]> = [
      [['--out', path.join(out, 'missing')], /^crawl: no crawl output at .*missing \(use --out DIR\)\n$/],
      [['--out', out, '--crawl-id', 'nope', '--file', path.join(out, 'nope.html')], /^crawl: no rows of crawl id "nope" in /],
      [['--out', out, '--file', path.join(out, 'no-such-dir', 'r.html')], /^crawl: --file .*r\.html: no directory /],
      [['--out', 's3://bucket/prefix'], /^crawl: --out s3:\/\/bucket\/prefix is in object storage: give --file PATH for the report\n$/],
      [['--out', 'ftp://x/y'], /^crawl: --out must be a directory or an s3:\/\/bucket\/prefix URL/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(['report', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    assert.ok(!existsSync(path.join(out, 'nope.html')));
    // a bucket is read through DuckDB's httpfs, as crawl sql reads it: where it is missing the
    // command says what to install (the endpoint is loopback, so nothing leaves the machine)
    const s3 = await runCli(['report', '--out', 's3://bucket/prefix', '--file', path.join(out, 's3.html')], {
      AWS_ENDPOINT_URL: 'http://127.0.0.1:1',
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'y',
    });
    assert.equal(s3.code, 1, s3.stderr);
    assert.match(s3.stderr, /needs DuckDB's httpfs extension[\s\S]*crawl report --install-httpfs|crawl: reading s3:\/\/bucket\/prefix: /);
  });
});
