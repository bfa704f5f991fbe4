import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb, expectedCrawl, DIRECTIVE_PAGES, DIRECTIVES_HOST, DIRECTIVES_SEED_URL, leafOf, textMarkerOf, type TestWeb } from '../../testweb/index.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { assertPolite } from '../support/politeness-audit.js';
import { E2E, crawlArgs, expectedUrls, storedPages } from '../support/e2e-web.js';
import { runCli } from '../support/crawl-cli.js';
import { partitionedGlob } from '../../pipeline/adapters/output-layout.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';
import { auditArchive } from '../support/archive-checks.js';
import { warcFiles } from '../support/warc-reader.js';

/** small, so that the crawl's WARC files rotate */
const WARC_MAX = 256 * 1024;
/**
 * The user agent of this crawl: Google's form, so the robots.txt groups of TestCrawler (and
 * the politeness audit, for E2E.token) hold only if the token is taken after "compatible;"
 */
const COMPATIBLE_UA = 'Mozilla/5.0 (compatible; TestCrawler/1.0; +http://127.0.0.1/crawler-contact)';
/** the site hosts' pages: the host of robots directives is crawled beside them and checked on its own */
const SITE_PAGES = "url_host_name LIKE '%.site.test'";

describe('end to end: crawl run --until-idle over the local test web, then its WARC archive and captures index', () => {
  let web: TestWeb;
  let out: string;

  before(async () => {
    web = await startTestWeb({ hosts: E2E.hosts, pagesPerHost: E2E.pagesPerHost, seed: E2E.seed, directives: true });
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-e2e-'));
  });
  after(async () => {
    await web?.close();
    rmSync(out, { recursive: true, force: true });
  });

  it('the depth limit covers the whole test web, so crawl order cannot change the expected set', () => {
    const deep = expectedCrawl(web.model, {
      userAgentToken: E2E.token,
      maxDepth: 50,
      seeds: web.model.siteHostNames.map((h) => `http://${h}/`),
      redirectHopCost: 0,
    });
    assert.deepEqual(expectedUrls(web), [...deep.pages.keys()].sort());
  });

  it('stores every reachable page exactly once, politely, and answers SQL', async () => {
    const args = [...crawlArgs(web, out), '--user-agent', COMPATIBLE_UA, '--seed', DIRECTIVES_SEED_URL];
    const result = await runCli(['run', ...args, '--warc-max-bytes', String(WARC_MAX), '--until-idle']);
    assert.equal(result.code, 0, `crawl run failed: ${result.stderr}`);
    assert.match(result.stdout, /crawl output: /);

    const stored = await storedPages(out);
    assert.deepEqual(stored.urls.filter((u) => !u.startsWith(DIRECTIVES_SEED_URL)), expectedUrls(web));
    assert.deepEqual(stored.storedTwice, [], 'pages stored more than once');

    const audit = assertPolite(web.requestLog(), web.model, E2E.token, E2E.minDelayMs);
    console.log(`politeness audit: ${audit.requests} requests, tightest margin over the required gap ${audit.tightestMarginMs.toFixed(0)} ms`);

    const db = await openOutputDatabase(out);
    try {
      const outcomes = await db.run("SELECT outcome, count(*) FROM fetch_log GROUP BY 1 ORDER BY 1");
      const byOutcome = Object.fromEntries(outcomes.rows.map((r) => [r[0], Number(r[1])]));
      assert.equal(byOutcome['fetched'], stored.rows);
      assert.ok(byOutcome['robots_disallowed'] > 0, 'robots blocks are recorded');
      assert.ok(byOutcome['http_error'] > 0, '404s are recorded');
      assert.ok(byOutcome['redirect'] > 0, 'redirects are recorded');
      const texts = await db.run("SELECT count(*) FROM pages WHERE title = '' AND NOT noindex");
      assert.equal(Number(texts.rows[0]![0]), 0, 'every page has a title');
      const dupes = await db.run('SELECT count(*) FROM pages WHERE near_duplicate_of IS NOT NULL');
      assert.ok(Number(dupes.rows[0]![0]) > 0, 'the near-duplicate pages of the test web are marked');
      const links = await db.run('SELECT count(*) FROM links');
      assert.ok(Number(links.rows[0]![0]) > stored.rows, 'links are stored');
      // main text: the article without the page chrome (in all three layouts, div soup too);
      // the full text keeps it
      const chrome = await db.run(
        "SELECT count(*) FILTER (WHERE text LIKE '%We use cookies%' OR text LIKE '%unsubscribe at any time%'), " +
          "count(*) FILTER (WHERE text_full LIKE '%We use cookies%'), count(*) FILTER (WHERE headings IS NOT NULL), " +
          `count(*) FILTER (WHERE length(text) >= length(text_full)), count(*) FROM pages WHERE NOT noindex AND ${SITE_PAGES}`,
      );
      const [chromeInText, cookieInFull, withHeadings, mainNotShorter, indexed] = chrome.rows[0]!.map(Number);
      assert.equal(chromeInText, 0, 'no cookie banner or newsletter box in the main text');
      assert.equal(cookieInFull, indexed, 'the full text has the cookie banner');
      assert.equal(withHeadings, indexed, 'every page has its headings');
      assert.equal(mainNotShorter, 0, 'the main text is shorter than the full text');
      // the main text is never empty where the page has text; the article fields come through to the view
      const article = await db.run(
        "SELECT count(*) FILTER (WHERE text_source = 'main'), count(*) FILTER (WHERE text = '' AND length(text_full) > 500), " +
          `count(*) FILTER (WHERE author IS NOT NULL), count(*) FILTER (WHERE author LIKE 'By %') FROM pages WHERE NOT noindex AND ${SITE_PAGES}`,
      );
      const [fromMain, emptyMain, withAuthor, authorWithBy] = article.rows[0]!.map(Number);
      assert.equal(fromMain, indexed, 'every page has a main text of its own');
      assert.equal(emptyMain, 0, 'no empty main text beside a full text');
      assert.ok(withAuthor > 0, 'pages whose byline is marked up have an author');
      assert.equal(authorWithBy, 0, 'the author is the name, without "By"');
      const sources = await db.run("SELECT DISTINCT source FROM links");
      assert.deepEqual(sources.rows.map((r) => r[0]), ['a'], 'the test web links with <a> only');
    } finally {
      await db.close();
    }
  });

  it('honours X-Robots-Tag and meta robots addressed to it (text not kept for noindex, links not followed for nofollow), not those of another bot', async () => {
    const db = await openOutputDatabase(out);
    try {
      const rows = await db.run(
        `SELECT url, noindex, nofollow, text_full, robots_directives FROM pages WHERE url_host_name = '${DIRECTIVES_HOST}'`,
      );
      const pages = new Map(rows.rows.map(([url, ...rest]) => [String(url), rest as [boolean, boolean, string, string | null]]));
      const links = await db.run(`SELECT src_url, dst_url FROM links WHERE src_url LIKE '${DIRECTIVES_SEED_URL}%'`);
      const linked = new Set(links.rows.map(([src, dst]) => `${src} ${dst}`));
      const log = web.requestLog().filter((r) => r.host === DIRECTIVES_HOST);
      const requested = new Set(log.map((r) => r.path));
      console.log(`${DIRECTIVES_HOST}: ${log.length} requests in ${Math.round(log.at(-1)!.end - log[0]!.start)} ms of the crawl`);
      const pdfReasons = await db.run(`SELECT url, reason FROM fetch_log WHERE url LIKE '${DIRECTIVES_SEED_URL}%.pdf'`);
      const reasonOf = new Map(pdfReasons.rows.map(([url, reason]) => [String(url), String(reason)]));
      for (const p of DIRECTIVE_PAGES) {
        const url = `${DIRECTIVES_SEED_URL}${p.path.slice(1)}`;
        const leaf = `${DIRECTIVES_SEED_URL}${leafOf(p.path).slice(1)}`;
        assert.equal(requested.has(leafOf(p.path)), !p.nofollow, `${p.path}: its link ${p.nofollow ? 'not ' : ''}followed`);
        assert.equal(pages.has(leaf), !p.nofollow, `${p.path}: its leaf ${p.nofollow ? 'not ' : ''}stored`);
        if (p.pdf) {
          assert.match(reasonOf.get(url) ?? '', p.nofollow ? /1 links harvested, not followed \(X-Robots-Tag: nofollow\)$/ : /1 links harvested$/, `${p.path}: fetch_log`);
          continue;
        }
        const row = pages.get(url);
        assert.ok(row, `${p.path} is stored`);
        const [noindex, nofollow, textFull, directives] = row;
        assert.deepEqual({ noindex, nofollow }, { noindex: p.noindex, nofollow: p.nofollow }, `${p.path}: the combined verdict`);
        assert.equal(textFull.includes(`${textMarkerOf(p.path)},`), !p.noindex, `${p.path}: text ${p.noindex ? 'not ' : ''}kept`);
        assert.ok(linked.has(`${url} ${leaf}`), `${p.path}: its link is recorded either way`);
        // every page here either restricts us or addresses only another bot, whose rules are not recorded
        assert.equal(directives !== null, p.noindex || p.nofollow, `${p.path}: robots_directives ${directives}`);
      }
      assert.equal(pages.get(`${DIRECTIVES_SEED_URL}xrt-two-headers.html`)![3], 'x-robots-tag: nofollow', 'of two headers, only the rule after our token');
      assert.equal(pages.get(`${DIRECTIVES_SEED_URL}combined.html`)![3], 'x-robots-tag: noindex; meta robots: index, follow');
    } finally {
      await db.close();
    }
  });

  it('every WARC file reads to its end with warcio, and every captures row leads to its record', async () => {
    const audit = await auditArchive(out);
    console.log(`archive: ${audit.files} WARC files, ${audit.records} records, ${audit.captures} captures ${JSON.stringify(audit.bySubset)}`);
    assert.ok(audit.files > 1, 'files are rotated at --warc-max-bytes');
    for (const f of warcFiles(out)) assert.ok(statSync(f).size <= WARC_MAX + 64 * 1024, `${f} is far past the rotation size`);
    assert.equal(audit.bySubset['robotstxt'], web.model.siteHostNames.length + 1, 'one robots.txt capture per host (the site hosts and the directives host)');
    assert.ok((audit.bySubset['crawldiagnostics'] ?? 0) > 0, 'redirects and errors are archived');
  });

  it('each stored page has exactly one capture, with the same payload digest; each response outcome too', async () => {
    const db = await openOutputDatabase(out);
    try {
      const pages = await db.run(
        `SELECT p.url, p.content_digest, count(c.capture_id), min(c.content_digest), min(c.subset)
         FROM pages p LEFT JOIN captures c ON c.fetch_id = p.fetch_id GROUP BY ALL`,
      );
      assert.equal(pages.rows.length, (await storedPages(out)).rows);
      for (const [url, digest, n, captured, subset] of pages.rows) {
        assert.equal(Number(n), 1, `${url}: captures`);
        assert.equal(captured, digest, `${url}: captures.content_digest = pages.content_digest`);
        assert.equal(subset, 'warc');
      }
      // every response the crawl log records (redirects, 404s, ...) was archived with its status
      const missing = await db.run(
        `SELECT f.url, f.outcome, f.fetch_status FROM fetch_log f
         WHERE f.fetch_status IS NOT NULL AND f.fetch_id IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM captures c WHERE c.fetch_id = f.fetch_id AND c.fetch_status = f.fetch_status)`,
      );
      assert.deepEqual(missing.rows, []);
      const sorted = await db.run(
        `SELECT _file, url_surtkey FROM (
           SELECT _file, url_surtkey, lag(url_surtkey) OVER (PARTITION BY _file ORDER BY file_row_number) AS prev
           FROM read_parquet('${partitionedGlob(out, 'captures')}', filename = '_file', file_row_number = true))
         WHERE prev > url_surtkey`,
      );
      assert.deepEqual(sorted.rows, [], 'rows are sorted by url_surtkey within each file');
    } finally {
      await db.close();
    }
  });

  it('crawl get prints the stored record; --payload the body; --fetch-id finds the same', async () => {
    const url = `http://${web.model.siteHostNames[0]}/`;
    const got = await runCli(['get', '--out', out, url]);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /^WARC\/1\.1\r\nWARC-Type: response\r\n/);
    assert.ok(got.stdout.includes(`\r\nWARC-Target-URI: ${url}\r\n`));
    const db = await openOutputDatabase(out);
    let digest: string;
    let fetchId: string;
    try {
      const r = await db.run(`SELECT content_digest, fetch_id FROM pages WHERE url = '${url}'`);
      [digest, fetchId] = r.rows[0] as [string, string];
    } finally {
      await db.close();
    }
    const body = await runCliBytes(['get', '--out', out, '--payload', url]);
    assert.equal(contentDigest(body), digest, 'the payload is the page body, byte for byte');
    const byId = await runCli(['get', '--out', out, '--fetch-id', fetchId]);
    assert.equal(byId.stdout, got.stdout);
    const none = await runCli(['get', '--out', out, 'http://nowhere.test/']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no capture of http:\/\/nowhere\.test\//);
    const neither = await runCli(['get', '--out', out]);
    assert.equal(neither.code, 2);
    assert.match(neither.stderr, /give a URL or --fetch-id ID/);
  });
});

/** stdout as bytes (runCli collects text) */
async function runCliBytes(args: string[]): Promise<Buffer> {
  const { spawn } = await import('node:child_process');
  const { CLI } = await import('../support/crawl-cli.js');
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0);
  return Buffer.concat(chunks);
}
