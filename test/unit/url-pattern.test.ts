import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { urlPattern } from '../../stages/shared/traps/url-pattern.js';

describe('crawl traps: URL patterns', () => {
  const cases: Array<[url: string, pattern: string]> = [
    ['http://cal.test/cal/2026/11/22?view=day', 'cal.test/cal/<n>/<n>/<n>?view=<w>'],
    ['http://cal.test/events/2026-11-22', 'cal.test/events/<date>'],
    ['http://cal.test/events/20261122.html', 'cal.test/events/<date>.html'],
    ['http://shop.test/list?page=17', 'shop.test/list?page=<n>'],
    ['http://shop.test/list?page=17&sort=new', 'shop.test/list?page=<n>&sort=<w>'],
    ['http://shop.test/item-8812.html', 'shop.test/item-<n>.html'],
    ['http://shop.test/p/550e8400-e29b-41d4-a716-446655440000', 'shop.test/p/<uuid>'],
    ['http://shop.test/f/3fa9b2c1d4e5/raw', 'shop.test/f/<hex>/raw'],
    ['http://shop.test/t/aZ3kP9qL2mN8xY7w', 'shop.test/t/<id>'],
    ['http://shop.test/?ref=aZ3kP9qL2mN8xY7w', 'shop.test/?ref=<id>'],
    ['http://shop.test/?d=2026-11-22', 'shop.test/?d=<date>'],
    ['http://shop.test/v2/api', 'shop.test/v<n>/api'],
    ['http://shop.test:8080/x/1', 'shop.test:8080/x/<n>'],
    ['http://shop.test/?flag', 'shop.test/?flag'],
    // words are the site's structure: they stay
    ['http://blog.test/blog/2021/03/used-season-until.html', 'blog.test/blog/<n>/<n>/used-season-until.html'],
    ['http://blog.test/about/team', 'blog.test/about/team'],
    ['http://blog.test/', 'blog.test/'],
  ];
  for (const [url, pattern] of cases) {
    test(url, () => assert.equal(urlPattern(url), pattern));
  }

  test('URLs a trap generates share one pattern; pages of a site do not', () => {
    const calendar = ['2026/11/22', '2026/11/23', '2027/01/01', '1999/12/31'].map((d) => urlPattern(`http://cal.test/cal/${d}`));
    assert.equal(new Set(calendar).size, 1);
    const site = ['/about.html', '/docs/guide/install', '/blog/', '/contact.html'].map((p) => urlPattern(`http://site.test${p}`));
    assert.equal(new Set(site).size, site.length);
  });

  test('hosts are told apart', () => {
    assert.notEqual(urlPattern('http://a.test/x/1'), urlPattern('http://b.test/x/1'));
  });

  test('a string that is not a URL is its own pattern (never throws)', () => {
    assert.equal(urlPattern('not a url'), 'not a url');
  });
});
