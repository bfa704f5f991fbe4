/**
 * The first pass and the per-domain budget in a real `crawl run --until-idle`: four hosts of
 * one registrable domain (the test web's site.test), each a seed, with --target-unique-domains 2
 * (out of reach: there is one domain) and --max-pages-per-domain 10. The seeds are fetched first
 * and their links held; with nothing else to serve the gate lets them go; then site.test gets
 * exactly 10 page requests and every other URL ends filtered max_pages_per_domain. The crawl
 * ends, and each URL it met has one outcome.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E } from '../support/e2e-web.js';

describe('crawl run with --target-unique-domains and --max-pages-per-domain', () => {
  let web: TestWeb;
  let dir: string;
  before(async () => {
    web = await startTestWeb({ hosts: 4, pagesPerHost: 10, seed: 5 });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-breadth-'));
  });
  after(async () => {
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the seeds first, lets held links go when nothing else is left, and stops site.test at 10 requests', async () => {
    const out = path.join(dir, 'out');
    const args = ['run', '--out', out, '--until-idle', '--min-delay-ms', '50', '--max-depth', '3', '--user-agent', E2E.userAgent];
    args.push('--target-unique-domains', '2', '--max-pages-per-domain', '10');
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    const seeds = web.model.siteHostNames.map((h) => `http://${h}/`);
    for (const seed of seeds) args.push('--seed', seed);
    const run = await runCli(args, {}, 180_000);
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const db = await openOutputDatabase(out);
    try {
      const requested = (await db.run("SELECT url FROM fetch_log WHERE fetch_status IS NOT NULL AND url NOT LIKE '%/robots.txt' ORDER BY fetch_time")).rows.map((r) => String(r[0]));
      assert.equal(requested.length, 10, `page requests: ${requested.join(' ')}`);
      // (a seed host's sitemap is read at its first grant, as in any crawl; the URLs it lists wait like links)
      const pages = requested.filter((u) => !u.endsWith('/sitemap.xml'));
      assert.deepEqual(new Set(pages.slice(0, 4)), new Set(seeds), 'the seeds went first; their links waited');
      const refused = (await db.run("SELECT count(*) FROM fetch_log WHERE outcome = 'filtered' AND reason = 'max_pages_per_domain: 10 requests to site.test granted'")).rows[0]![0];
      assert.ok(Number(refused) > 0, 'URLs past the budget end filtered');
      const repeated = (await db.run('SELECT url, count(*) FROM fetch_log GROUP BY url HAVING count(*) > 1')).rows;
      assert.deepEqual(repeated, [], 'one outcome a URL');
    } finally {
      await db.close();
    }
  });
});
