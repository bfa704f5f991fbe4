// The scorer alone, without a crawl: `npm test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stageTestContext } from 'jetstream-crawler';
import { topicScorer } from './scorer.js';

const page = (links) => ({ message: { url: 'http://t.test/', depth: 0, links }, seq: 1, subject: 'crawl.extracted.0', deliveryCount: 1 });
const link = (url, anchor) => ({ url, anchor, rel: '' });

test('queues links that match in anchor text or URL, best first, up to the budget', async () => {
  const scorer = topicScorer({ topic: 'astronomy', budget: 2 });
  const out = await scorer.handle(page([link('http://t.test/cooking', 'Bread'), link('http://t.test/astronomy/a', 'A'), link('http://t.test/guide', 'Astronomy guide'), link('http://t.test/astronomy/b', 'Astronomy B')]), stageTestContext());
  assert.deepEqual(out.urls.map((u) => [u.url, u.priority]), [['http://t.test/astronomy/b', 'high'], ['http://t.test/guide', 'high']]);
  assert.equal(out.rows.length, 4);
  const later = await scorer.handle(page([link('http://t.test/astronomy/c', 'C')]), stageTestContext());
  assert.deepEqual(later.urls, [], 'the budget is spent');
});
