import { expectedCrawl, type TestWeb } from '../../testweb/index.js';
import assert from 'node:assert/strict';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { runCli } from './crawl-cli.js';

/** The test web and crawl settings the end-to-end tests share. */
export const E2E = {
  hosts: 12,
  /**
   * hosts of the test web for the tests whose subject is a mechanism (a kill, stages in many
   * processes, a bucket, metrics) rather than the web's variety: hosts 0..6 have every robots
   * kind (a 1 s Crawl-delay among them) and every per-host habit but the absolute base href
   * and the German pages; the full web adds those and a 2 s Crawl-delay host (host 9), whose
   * 25 requests alone make a crawl last 50 s
   */
  smallHosts: 7,
  pagesPerHost: 20,
  seed: 11,
  maxDepth: 6,
  minDelayMs: 200,
  token: 'testcrawler',
  userAgent: 'testcrawler/1.0 (+http://127.0.0.1/crawler-contact)',
};

export function crawlArgs(web: TestWeb, out: string): string[] {
  const args = ['--out', out, '--max-depth', String(E2E.maxDepth), '--min-delay-ms', String(E2E.minDelayMs), '--user-agent', E2E.userAgent];
  for (const rule of web.resolveRules) args.push('--resolve', rule);
  for (const host of web.model.siteHostNames) args.push('--seed', `http://${host}/`);
  return args;
}

/**
 * Flags for a crawl whose test checks what it stored, not its pacing: 50 ms between requests
 * to a host, whatever a robots.txt Crawl-delay (up to 2 s on some test-web hosts, so a host of
 * 20 URLs alone would take 40 s) or a slow answer on a loaded machine would make it.
 */
export const FAST_PACING = ['--min-delay-ms', '50', '--max-crawl-delay-ms', '50', '--adaptive-delay-factor', '0'];

/**
 * A short `crawl run --until-idle` of every site host (depth 4, FAST_PACING), as the recrawl,
 * replay, export and report checks need it: under one crawl id, with extra flags (last, so
 * they can set another depth).
 */
export async function runShortCrawl(web: TestWeb, out: string, crawlId: string, extra: string[] = []): Promise<void> {
  const args = ['run', '--out', out, '--until-idle', '--crawl-id', crawlId, ...FAST_PACING, '--max-depth', '4', '--user-agent', E2E.userAgent, ...extra];
  for (const rule of web.resolveRules) args.push('--resolve', rule);
  for (const host of web.model.siteHostNames) args.push('--seed', `http://${host}/`);
  const run = await runCli(args, {}, 180_000);
  assert.equal(run.code, 0, run.stderr.slice(-2000));
}

export function expectedUrls(web: TestWeb): string[] {
  const expected = expectedCrawl(web.model, {
    userAgentToken: E2E.token,
    maxDepth: E2E.maxDepth,
    seeds: web.model.siteHostNames.map((h) => `http://${h}/`),
    // the crawler gives a redirect target the depth of the redirecting URL
    redirectHopCost: 0,
  });
  return [...expected.pages.keys()].sort();
}

/**
 * The URLs of which more than one fetch was stored, with how many: the `pages` view keeps one
 * row per crawl and URL whatever the files hold, so "each page once" is counted on the raw rows.
 * A fetch is its fetch_id and fetch_time: a URL's fetch id is the same each time it is admitted,
 * and a redelivered message writes the same fetch (same time) into another file, which is one
 * page stored once; a second fetch of the page has a time of its own.
 */
export const PAGES_STORED_TWICE =
  'SELECT url, count(*) AS fetches FROM (SELECT DISTINCT crawl_id, url, fetch_id, fetch_time FROM raw_pages) GROUP BY crawl_id, url HAVING count(*) > 1 ORDER BY url';

/** The pages of a crawl's output: `urls` as the `pages` view shows them (sorted), and `storedTwice` (PAGES_STORED_TWICE). */
export async function storedPages(out: string): Promise<{ urls: string[]; rows: number; storedTwice: string[] }> {
  const db = await openOutputDatabase(out);
  try {
    const res = await db.run('SELECT url FROM pages ORDER BY url');
    const twice = await db.run(PAGES_STORED_TWICE);
    return {
      urls: res.rows.map((r) => String(r[0])),
      rows: res.rows.length,
      storedTwice: twice.rows.map((r) => `${String(r[0])} (${Number(r[1])} fetches)`),
    };
  } finally {
    await db.close();
  }
}


/** The rows of one query over the output's views (a DuckDB opened and closed for it). */
export async function queryOutput(out: string, sql: string): Promise<unknown[][]> {
  const db = await openOutputDatabase(out);
  try {
    return (await db.run(sql)).rows;
  } finally {
    await db.close();
  }
}
