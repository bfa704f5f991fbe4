/**
 * `crawl run` reads its seed hosts' sitemaps: a site whose 30 pages are linked only from its
 * sitemaps (robots.txt `Sitemap:` → an index → a gzip and a plain sitemap) and a site whose
 * robots.txt names none (its /sitemap.xml is read) are crawled whole, politely, while the URLs
 * the sitemaps may not speak for (another host, another site, outside the sitemap's directory,
 * disallowed by robots.txt) are never requested and each has a row saying why. Resuming the
 * crawl does not read the sitemaps again; `--no-sitemaps` crawls only what links reach.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb, SITEMAP_FOREIGN_HOST, SITEMAP_NEIGHBOUR_HOST, type SitemapHosts, type TestWeb } from '../../testweb/index.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E, queryOutput, storedPages } from '../support/e2e-web.js';
import { assertRequestLogPolite } from '../support/politeness-audit.js';

describe('crawl run reads the sitemaps of its seed hosts', () => {
  let web: TestWeb;
  let site: SitemapHosts;
  let dir: string;
  before(async () => {
    web = await startTestWeb({ hosts: 1, pagesPerHost: 4, seed: E2E.seed, sitemapHosts: true });
    site = web.sitemapHosts!;
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-sitemaps-'));
  });
  after(async () => {
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `crawl run --until-idle` of the two sites' home pages, delays off */
  async function crawl(out: string, extra: string[] = []): Promise<void> {
    const args = ['run', '--out', out, '--until-idle', '--min-delay-ms', '0', '--user-agent', E2E.userAgent, ...extra];
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    for (const seed of site.seedUrls()) args.push('--seed', seed);
    const run = await runCli(args, { NATS_URL: '' }, 120_000);
    assert.equal(run.code, 0, run.stderr.slice(-2000));
  }

  it('crawls the pages only the sitemaps lead to, and nothing a sitemap may not list', async () => {
    const out = path.join(dir, 'on');
    await crawl(out);

    assert.deepEqual((await storedPages(out)).urls, site.expectedPages(), 'the pages linked from nowhere but the sitemaps are stored');
    const log = web.requestLog();
    assertRequestLogPolite(log, { token: E2E.token, minDelayMs: 0, perIpCap: 4 });
    const requested = new Set(log.map((r) => `http://${r.host}${r.path}`));
    for (const sitemap of site.sitemapUrls()) assert.ok(requested.has(sitemap), `${sitemap} was read`);
    for (const { url, why } of site.refusedListings()) assert.ok(!requested.has(url), `${url} (${why}) was requested`);
    assert.deepEqual(log.filter((r) => r.host === SITEMAP_NEIGHBOUR_HOST || r.host === SITEMAP_FOREIGN_HOST).map((r) => r.host + r.path), [], 'another host is never asked');

    const rows = new Map((await queryOutput(out, 'SELECT url, outcome, reason FROM fetch_log')).map((r) => [String(r[0]), { outcome: String(r[1]), reason: String(r[2]) }]));
    for (const sitemap of site.sitemapUrls()) {
      assert.equal(rows.get(sitemap)?.outcome, 'fetched', sitemap);
      assert.match(rows.get(sitemap)!.reason, /^sitemap \((index|urlset)\): \d+ (sitemaps|URLs) followed/, sitemap);
    }
    const expectedReason = {
      'other host': /^sitemap: not on the sitemap's site \(scheme, host and port\) \(listed by http:\/\/www\.sitemaponly\.test\//,
      'another site': /^sitemap: not on the sitemap's site \(scheme, host and port\) \(listed by http:\/\/www\.sitemaponly\.test\//,
      'outside the sitemap directory': /^sitemap: outside the sitemap's path prefix \(listed by http:\/\/www\.sitemaponly\.test\/pages\/sitemap\.xml\)$/,
      'robots.txt': /^robots\.txt: /,
    };
    for (const { url, why } of site.refusedListings()) {
      const row = rows.get(url);
      assert.ok(row, `${url} (${why}) has a fetch_log row`);
      assert.equal(row.outcome, why === 'robots.txt' ? 'robots_disallowed' : 'filtered', url);
      assert.match(row.reason, expectedReason[why], url);
    }
  });

  it('a resumed crawl does not read the sitemaps again', async () => {
    web.clearLog();
    await crawl(path.join(dir, 'on'));
    assert.deepEqual(web.requestLog().map((r) => r.host + r.path), [], 'the seeds and everything after them were seen');
  });

  it('--no-sitemaps crawls only what links reach', async () => {
    web.clearLog();
    const out = path.join(dir, 'off');
    await crawl(out, ['--no-sitemaps']);
    const linked = site.expectedPages().filter((u) => !site.sitemapOnlyPages().includes(u));
    assert.deepEqual((await storedPages(out)).urls, linked);
    assert.deepEqual(web.requestLog().filter((r) => r.path.includes('sitemap')).map((r) => r.host + r.path), []);
  });
});
