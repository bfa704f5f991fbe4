/**
 * Crawl traps, end to end: `crawl run --until-idle` over the five trap hosts of the test web
 * (testweb/trap-hosts.ts) together with ordinary site hosts, with budgets small enough for a
 * fast run. Judged from the output and from the test web's own request log:
 *
 *  1. the ordinary site hosts are complete: every expected page stored exactly once;
 *  2. each trap host gets no more requests than the per-host budget, and its ordinary pages
 *     (home, /about.html) are still stored;
 *  3. fetch_log names the defence that stopped each trap: the calendar's pattern budget, the
 *     pagination's and the soft-404 site's low novelty, the deep tree's repeated segments
 *     and host budget;
 *  4. the session-id host's four real pages are each fetched once, without a session id;
 *  5. the ID-routed shop and forum (testweb/id-routed-hosts.ts), whose products and topics each
 *     pass their pattern's budget, are complete: their records are named by listing pages and
 *     every one is new, which is what tells them from the traps. (At the default budget of
 *     1,000 this takes thousands of pages, minutes of crawling one host: the integration test
 *     trap-budgets.test.ts shows it without HTTP for a 5,000-product shop.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CALENDAR_TRAP_HOST,
  DEEP_TRAP_HOST,
  expectedCrawl,
  ID_ROUTED_HOSTS,
  PAGES_TRAP_HOST,
  SESSION_TRAP_HOST,
  SESSION_TRAP_PAGES,
  SOFT404_TRAP_HOST,
  startTestWeb,
  TRAP_HOSTS,
  TRAP_NORMAL_PAGES,
  type TestWeb,
} from '../../testweb/index.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { runCli } from '../support/crawl-cli.js';
import { PAGES_STORED_TWICE } from '../support/e2e-web.js';

const TOKEN = 'testcrawler';
const SITE = { hosts: 3, pagesPerHost: 20, seed: 11 };
const MAX_DEPTH = 6;
/** well above what an ordinary site host of this size queues (about 25 URLs), far below a trap's appetite */
const MAX_PAGES_PER_HOST = 60;
const MAX_URLS_PER_PATTERN = 15;
const NOVELTY_MIN_PAGES = 6;
/** records of the shop and the forum: each site's pattern passes its budget, its host stays within its own */
const ID_ROUTED = { products: 40, topics: 40 };

describe('end to end: crawl traps among ordinary hosts', () => {
  let web: TestWeb;
  let out: string;

  before(async () => {
    web = await startTestWeb({ ...SITE, traps: true, idRouted: ID_ROUTED });
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-traps-'));
  });
  after(async () => {
    await web?.close();
    rmSync(out, { recursive: true, force: true });
  });

  it('stops every trap with a named defence, under budget, and crawls the ordinary hosts completely', async () => {
    const args = ['run', '--out', out, '--until-idle', '--max-depth', String(MAX_DEPTH), '--min-delay-ms', '100', '--user-agent', `${TOKEN}/1.0 (+http://127.0.0.1/contact)`];
    args.push('--max-pages-per-host', String(MAX_PAGES_PER_HOST), '--max-urls-per-pattern', String(MAX_URLS_PER_PATTERN), '--novelty-min-pages', String(NOVELTY_MIN_PAGES));
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    const siteSeeds = web.model.siteHostNames.map((h) => `http://${h}/`);
    for (const seed of [...siteSeeds, ...web.traps!.seedUrls(), ...web.idRouted!.seedUrls()]) args.push('--seed', seed);
    const started = Date.now();
    const result = await runCli(args, {}, 120_000);
    assert.equal(result.code, 0, `crawl run failed: ${result.stderr}`);
    console.log(`crawl of ${SITE.hosts} site hosts, ${TRAP_HOSTS.length} trap hosts and ${ID_ROUTED_HOSTS.length} ID-routed hosts idle after ${((Date.now() - started) / 1000).toFixed(1)} s`);

    // robots.txt, and the sitemap every seed host is asked for (crawl run reads sitemaps), are not pages
    const requests = web.requestLog().filter((r) => !r.path.startsWith('/robots.txt') && r.path !== '/sitemap.xml');
    const requestsTo = (host: string) => requests.filter((r) => r.host === host);

    const db = await openOutputDatabase(out);
    try {
      const pages = (await db.run('SELECT url FROM pages ORDER BY url')).rows.map((r) => String(r[0]));
      // the view shows a URL once however often it was stored: count the stored fetches
      const storedTwice = (await db.run(PAGES_STORED_TWICE)).rows.map((r) => String(r[0]));
      assert.deepEqual(storedTwice, [], 'pages stored more than once');

      // 1. the ordinary hosts are complete
      const expected = expectedCrawl(web.model, { userAgentToken: TOKEN, maxDepth: MAX_DEPTH, seeds: siteSeeds, redirectHopCost: 0 });
      const sitePages = pages.filter((u) => web.model.siteHostNames.includes(new URL(u).hostname));
      assert.deepEqual(sitePages, [...expected.pages.keys()].sort());

      const reasons = async (host: string) =>
        (await db.run(`SELECT DISTINCT split_part(reason, ':', 1) FROM fetch_log WHERE url_host_name = '${host}' AND outcome = 'filtered' ORDER BY 1`)).rows.map((r) => String(r[0]));
      for (const host of TRAP_HOSTS) {
        // 2. under budget, ordinary pages kept
        const n = requestsTo(host).length;
        console.log(`${host}: ${n} requests, dropped by ${(await reasons(host)).join(', ') || 'nothing'}`);
        assert.ok(n <= MAX_PAGES_PER_HOST, `${host}: ${n} requests, budget ${MAX_PAGES_PER_HOST}`);
        for (const p of host === SESSION_TRAP_HOST ? SESSION_TRAP_PAGES : TRAP_NORMAL_PAGES) {
          assert.ok(pages.includes(`http://${host}${p}`), `${host}${p} is stored`);
        }
      }

      // 3. the defence that stopped each trap is named; the traps whose pages lead to more of
      // themselves get no more requests of their pattern than its budget
      for (const [host, trapPath] of [
        [CALENDAR_TRAP_HOST, /^\/cal\//],
        [PAGES_TRAP_HOST, /^\/list\?/],
        [SOFT404_TRAP_HOST, /^\/item\//],
      ] as const) {
        const n = requestsTo(host).filter((r) => trapPath.test(r.path)).length;
        assert.ok(n <= MAX_URLS_PER_PATTERN, `${host}: ${n} requests of its trap's pattern`);
      }
      assert.ok((await reasons(CALENDAR_TRAP_HOST)).includes('trap_pattern_budget'));
      assert.ok((await reasons(PAGES_TRAP_HOST)).includes('trap_low_novelty'));
      assert.ok((await reasons(SOFT404_TRAP_HOST)).includes('trap_low_novelty'));
      // the deep tree: its `next/next/next` by repeated segments, its ever-wider rest by the host budget
      assert.ok((await reasons(DEEP_TRAP_HOST)).includes('trap_repeated_segments'));
      assert.ok((await reasons(DEEP_TRAP_HOST)).includes('trap_host_budget'));
      const why = await db.run(`SELECT reason FROM fetch_log WHERE url_host_name = '${CALENDAR_TRAP_HOST}' AND reason LIKE 'trap_pattern_budget:%' LIMIT 1`);
      assert.match(String(why.rows[0]![0]), /^trap_pattern_budget: pattern calendar\.trap\.test\/cal\/<n>\/<n>\/<n> produced 15 URLs$/);

      // 4. session ids stripped: each real page fetched once, never with a session id
      const sessionPaths = requestsTo(SESSION_TRAP_HOST).map((r) => r.path);
      assert.deepEqual(sessionPaths.slice().sort(), SESSION_TRAP_PAGES.slice().sort());
      assert.ok(!sessionPaths.some((p) => /sessionid|phpsessid/i.test(p)));

      // 5. the shop and the forum are complete, nothing of theirs filtered, each page fetched once
      const idRoutedPages = pages.filter((u) => ID_ROUTED_HOSTS.includes(new URL(u).hostname));
      assert.deepEqual(idRoutedPages, web.idRouted!.expectedUrls().sort());
      for (const host of ID_ROUTED_HOSTS) assert.deepEqual(await reasons(host), [], `${host}: nothing filtered`);
      for (const url of idRoutedPages) {
        const { hostname, pathname, search } = new URL(url);
        assert.equal(requestsTo(hostname).filter((r) => r.path === `${pathname}${search}`).length, 1, `${url}: fetched once`);
      }
      console.log(`${ID_ROUTED_HOSTS.join(', ')}: ${idRoutedPages.length} pages, ${ID_ROUTED.products} products and ${ID_ROUTED.topics} topics past a pattern budget of ${MAX_URLS_PER_PATTERN}`);
    } finally {
      await db.close();
    }
  });
});
