// The ID-routed shop and forum of the test web, over real HTTP on loopback: thousands of
// pages under one URL pattern each, every one reachable from the listings and different
// from every other, and nothing else answering.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FORUM_HOST, getFromTestWeb, ID_ROUTED_DEFAULTS, IdRoutedHosts, productId, SHOP_HOST, startTestWeb, topicId, type TestWeb } from '../../testweb/index.js';
import { urlPattern } from '../../stages/shared/traps/url-pattern.js';

const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
const textOf = (html: string) => html.replace(/<a [^>]*>[^<]*<\/a>/g, ' ').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();

describe('test web: ID-routed hosts', () => {
  let web: TestWeb;
  before(async () => {
    web = await startTestWeb({ hosts: 1, idRouted: { products: 120, topics: 210 } });
  });
  after(async () => web?.close());
  const get = (host: string, path: string) => getFromTestWeb(web.port, host, path);

  test('served only when enabled, mapped by one --resolve rule, robots.txt allowing all', async () => {
    assert.ok(web.resolveRules.includes(`*.ids.test=127.0.0.1:${web.port}`));
    assert.deepEqual(web.idRouted!.options, { products: 120, topics: 210 });
    assert.deepEqual(new IdRoutedHosts(true).options, ID_ROUTED_DEFAULTS);
    assert.equal((await get(SHOP_HOST, '/robots.txt')).body, 'User-agent: *\nAllow: /\n');
    const plain = await startTestWeb({ hosts: 1 });
    try {
      assert.equal((await getFromTestWeb(plain.port, SHOP_HOST, '/')).status, 421);
    } finally {
      await plain.close();
    }
  });

  test('a crawl that follows the links from each home page finds exactly the expected pages, all different', async () => {
    const found = new Set<string>();
    const texts = new Set<string>();
    const queue = web.idRouted!.seedUrls();
    while (queue.length > 0) {
      const url = queue.shift()!;
      if (found.has(url)) continue;
      found.add(url);
      const { host, pathname, search } = new URL(url);
      const r = await get(host, `${pathname}${search}`);
      assert.equal(r.status, 200, url);
      texts.add(textOf(r.body));
      for (const h of hrefs(r.body)) queue.push(new URL(h, url).href);
    }
    assert.deepEqual([...found].sort(), web.idRouted!.expectedUrls().sort());
    assert.equal(texts.size, found.size, 'no two pages with the same text');
    assert.equal(web.idRouted!.productUrls().length, 120);
    assert.equal(web.idRouted!.topicUrls().length, 210);
    assert.ok(found.has(`http://${FORUM_HOST}/viewforum.php?f=1&start=50`), 'a forum of more than 50 topics has a second page');
  });

  test('records share one URL pattern per site, with text enough to be fingerprinted, and small', async () => {
    const products = new Set(web.idRouted!.productUrls().map(urlPattern));
    const topics = new Set(web.idRouted!.topicUrls().map(urlPattern));
    assert.deepEqual([...products], [`${SHOP_HOST}/product/<n>`]);
    assert.deepEqual([...topics], [`${FORUM_HOST}/viewtopic.php?t=<n>`]);
    for (const [host, path] of [
      [SHOP_HOST, `/product/${productId(17)}`],
      [FORUM_HOST, `/viewtopic.php?t=${topicId(17)}`],
    ] as const) {
      const r = await get(host, path);
      assert.ok(textOf(r.body).split(' ').length >= 40, `${path}: text of 40 words or more`);
      assert.ok(r.body.length < 1500, `${path}: ${r.body.length} bytes`);
    }
  });

  test('the product links related products, its category and home; the topic similar topics and its forum', async () => {
    const product = hrefs((await get(SHOP_HOST, `/product/${productId(0)}`)).body);
    assert.equal(product.filter((h) => h.startsWith('/product/')).length, 4);
    assert.deepEqual(product.slice(-2), ['/category/1', '/']);
    const topic = hrefs((await get(FORUM_HOST, `/viewtopic.php?t=${topicId(5)}`)).body);
    assert.equal(topic.filter((h) => h.startsWith('/viewtopic.php?t=')).length, 3);
    assert.equal(topic.at(-1), '/viewforum.php?f=2');
  });

  test('no other id, path or query answers', async () => {
    for (const [host, path] of [
      [SHOP_HOST, `/product/${productId(0) + 1}`],
      [SHOP_HOST, `/product/${productId(120)}`],
      [SHOP_HOST, `/product/0${productId(0)}`],
      [SHOP_HOST, '/category/3'],
      [SHOP_HOST, '/category/1?page=2'],
      [FORUM_HOST, `/viewtopic.php?t=${topicId(210)}`],
      [FORUM_HOST, `/viewtopic.php?t=${topicId(1)}&x=1`],
      [FORUM_HOST, '/viewforum.php?f=5'],
      [FORUM_HOST, '/viewforum.php?f=1&start=25'],
      [FORUM_HOST, '/viewforum.php?f=1&start=0'],
    ] as const) {
      assert.equal((await get(host, path)).status, 404, `${host}${path}`);
    }
  });
});
