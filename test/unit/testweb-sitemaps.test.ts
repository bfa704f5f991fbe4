// The sitemap-only site of the test web (*.sitemaponly.test): its sitemaps, read with the
// crawler's own parser, lead to exactly the pages it says only sitemaps lead to, and list
// exactly the URLs it says a crawler must refuse, each refused for the reason it names.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DROP_REASONS, parseSitemap } from '../../stages/extract/sitemap/index.js';
import { compileRobots } from '../../stages/shared/robots/robots-rules.js';
import { runTestWebCli, SitemapHosts, SITEMAP_FALLBACK_HOST, SITEMAP_ONLY_HOST } from '../../testweb/index.js';

const site = new SitemapHosts(1);
const hostOf = (url: string) => new URL(url).hostname;
const pathOf = (url: string) => new URL(url).pathname;
const get = (url: string) => site.respond(hostOf(url), 'GET', pathOf(url));
const read = (url: string) => {
  const r = get(url);
  assert.equal(r.status, 200, url);
  return parseSitemap({ body: typeof r.body === 'string' ? new TextEncoder().encode(r.body) : r.body, contentType: r.type, url, now: Date.now() });
};
/** the host's robots.txt as the crawler compiles it */
const robotsOf = (host: string) => compileRobots({ kind: 'rules', body: String(site.respond(host, 'GET', '/robots.txt').body), fetchedAt: 0, status: 200, reason: 'http 200' }, 'testcrawler');
const linksOf = (url: string) => [...String(get(url).body).matchAll(/href="([^"]+)"/g)].map((m) => new URL(m[1]!, url).toString());

describe('testweb: the sitemap-only site', () => {
  test('links alone reach the two home pages and /about.html, nothing else', () => {
    const reached = new Set<string>();
    const queue = site.seedUrls();
    while (queue.length > 0) {
      const url = queue.shift()!;
      if (reached.has(url)) continue;
      reached.add(url);
      queue.push(...linksOf(url));
    }
    assert.deepEqual([...reached].sort(), site.expectedPages().filter((u) => !site.sitemapOnlyPages().includes(u)));
  });

  test("robots.txt names the index on one host and no sitemap on the other, whose /sitemap.xml is there", () => {
    assert.deepEqual(robotsOf(SITEMAP_ONLY_HOST).sitemaps, [site.sitemapUrls()[0]]);
    assert.deepEqual(robotsOf(SITEMAP_FALLBACK_HOST).sitemaps, []);
    assert.equal(site.sitemapUrls()[3], `http://${SITEMAP_FALLBACK_HOST}/sitemap.xml`);
  });

  test('the index lists the gzip and the plain sitemap, and one on another host the parser refuses', () => {
    const [index, gzip, plain] = site.sitemapUrls();
    const r = read(index!);
    assert.equal(r.kind, 'index');
    assert.deepEqual(r.entries.map((e) => e.url), [gzip, plain]);
    assert.deepEqual(r.dropped.map((d) => d.reason), [DROP_REASONS.otherSite]);
    assert.equal(get(gzip!).type, 'application/gzip');
    assert.equal((get(gzip!).body as Buffer)[0], 0x1f, 'gzip bytes');
  });

  test('the sitemaps lead to every page only they lead to; what they list beyond that is exactly the refused listings, each for its reason', () => {
    const listed = new Set<string>();
    const refused = new Map<string, string>();
    for (const url of site.sitemapUrls().slice(1)) {
      const r = read(url);
      assert.equal(r.kind, 'urlset', url);
      for (const e of r.entries) listed.add(e.url);
      for (const d of r.dropped) refused.set(d.url, d.reason);
    }
    refused.set(read(site.sitemapUrls()[0]!).dropped[0]!.url, DROP_REASONS.otherSite);
    for (const url of listed) if (!robotsOf(hostOf(url)).verdict(url).allowed) refused.set(url, 'robots.txt');
    assert.deepEqual([...listed].filter((u) => !refused.has(u)).sort(), site.sitemapOnlyPages());
    const reasonFor = { 'other host': DROP_REASONS.otherSite, 'another site': DROP_REASONS.otherSite, 'outside the sitemap directory': DROP_REASONS.outsidePrefix, 'robots.txt': 'robots.txt' };
    assert.deepEqual(
      [...refused].sort(),
      site.refusedListings().map(({ url, why }) => [url, reasonFor[why]]).sort(),
    );
    // each refused URL exists: a crawler that fetched it would be seen in the request log, not just get a 404
    for (const { url } of site.refusedListings()) assert.equal(get(url).status, 200, url);
  });

  test('crawl testweb --sitemap-hosts says so and prints the --resolve rules', async () => {
    const lines: string[] = [];
    const ac = new AbortController();
    const running = runTestWebCli({ hosts: 1, port: 0, seed: 1, sitemapHosts: true, out: (l) => lines.push(l), signal: ac.signal });
    while (lines.length < 2) await new Promise((r) => setTimeout(r, 5));
    assert.match(lines[0]!, /4 sitemap-only hosts \(\*\.sitemaponly\.test\)\)$/);
    assert.match(lines[1]!, /--resolve \*\.sitemaponly\.test=127\.0\.0\.1:\d+ --resolve \*\.sitemap-elsewhere\.test=127\.0\.0\.1:\d+/);
    ac.abort();
    await running;
  });
});
