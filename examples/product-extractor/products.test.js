// The stage alone, without a crawl: `npm test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stageTestContext } from 'jetstream-crawler';
import products from './products.js';

const page = (html) => ({ message: { url: 'http://shop.test/p', charset: 'utf-8', body: new TextEncoder().encode(html) }, seq: 1, subject: 'crawl.fetched.0', deliveryCount: 1 });

test('a JSON-LD Product', async () => {
  const ld = { '@context': 'https://schema.org', '@type': 'Product', name: 'Lamp', offers: { '@type': 'Offer', price: '19.90', priceCurrency: 'EUR', availability: 'https://schema.org/InStock' } };
  const out = await products.handle(page(`<script type="application/ld+json">${JSON.stringify(ld)}</script>`), stageTestContext());
  assert.deepEqual(out.rows, [{ name: 'Lamp', price: 19.9, currency: 'EUR', availability: 'InStock' }]);
});

test('a microdata Product, and no row for a page without one', async () => {
  const html = '<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Mug</span><div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><meta itemprop="price" content="7"><meta itemprop="priceCurrency" content="USD"><link itemprop="availability" href="https://schema.org/OutOfStock"></div></div>';
  assert.deepEqual((await products.handle(page(html), stageTestContext())).rows, [{ name: 'Mug', price: 7, currency: 'USD', availability: 'OutOfStock' }]);
  assert.deepEqual((await products.handle(page('<p>no product</p>'), stageTestContext())).rows, []);
});
