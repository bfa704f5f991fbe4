// The test web over TLS, the parts a test can check without a server: how its pages link to
// themselves when served over HTTPS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { httpsLinks } from '../../testweb/index.js';

test('over TLS the web links to its own hosts by https://, and leaves everything else as it was', () => {
  const cases: Array<[string, string]> = [
    ['<a href="http://h01.site.test/docs/?a=1">', '<a href="https://h01.site.test/docs/?a=1">'],
    ['<a href="HTTP://H01.SITE.TEST:80/x#f">', '<a href="https://H01.SITE.TEST/x#f">'],
    ["<a href='http://p1.polite.test'>", "<a href='https://p1.polite.test'>"],
    ['Sitemap: http://f0.fresh.test/sitemap-index.xml\n', 'Sitemap: https://f0.fresh.test/sitemap-index.xml\n'],
    ['<loc>http://b001.bench.test/p/3.html</loc>', '<loc>https://b001.bench.test/p/3.html</loc>'],
    ['http://h01.site.test:8080/x', 'https://h01.site.test:8080/x'],
    // the outside, namespaces, and links that are already relative or https stay
    ['<a href="http://external.example/page">', '<a href="http://external.example/page">'],
    ['<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'],
    ['<html xmlns="http://www.w3.org/1999/xhtml">', '<html xmlns="http://www.w3.org/1999/xhtml">'],
    ['<a href="//h02.site.test/x">', '<a href="//h02.site.test/x">'],
    ['<a href="https://h02.site.test/x">', '<a href="https://h02.site.test/x">'],
    ['<a href="http://h02.site.testing/x">', '<a href="http://h02.site.testing/x">'],
  ];
  for (const [given, served] of cases) assert.equal(httpsLinks(given), served, given);
});
