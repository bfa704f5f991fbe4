import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb, expectedCrawl, type TestWeb } from '../../testweb/index.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { assertPolite } from '../support/politeness-audit.js';
import { E2E, crawlArgs, expectedUrls, storedPages } from '../support/e2e-web.js';
import { runCli } from '../support/crawl-cli.js';

describe('end to end: crawl run --until-idle over the local test web', () => {
  let web: TestWeb;
  let out: string;

  before(async () => {
    web = await startTestWeb({ hosts: E2E.hosts, pagesPerHost: E2E.pagesPerHost, seed: E2E.seed });
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
    const result = await runCli(['run', ...crawlArgs(web, out), '--until-idle']);
    assert.equal(result.code, 0, `crawl run failed: ${result.stderr}`);
    assert.match(result.stdout, /crawl output: /);

    const stored = await storedPages(out);
    assert.deepEqual(stored.urls, expectedUrls(web));
    assert.equal(new Set(stored.urls).size, stored.rows, 'a page stored twice');

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
          "count(*) FILTER (WHERE length(text) >= length(text_full)), count(*) FROM pages WHERE NOT noindex",
      );
      const [chromeInText, cookieInFull, withHeadings, mainNotShorter, indexed] = chrome.rows[0]!.map(Number);
      assert.equal(chromeInText, 0, 'no cookie banner or newsletter box in the main text');
      assert.equal(cookieInFull, indexed, 'the full text has the cookie banner');
      assert.equal(withHeadings, indexed, 'every page has its headings');
      assert.equal(mainNotShorter, 0, 'the main text is shorter than the full text');
      const sources = await db.run("SELECT DISTINCT source FROM links");
      assert.deepEqual(sources.rows.map((r) => r[0]), ['a'], 'the test web links with <a> only');
    } finally {
      await db.close();
    }
  });
});
