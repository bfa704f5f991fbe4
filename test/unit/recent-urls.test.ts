import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RecentUrls } from '../../stages/normalize/recent-urls.js';
import { handleNormalize, type NormalizeInput } from '../../stages/normalize/handle.js';
import { createFakeContext, stageInput } from '../support/fake-context.js';
import { decodeCandidates } from '../../schemas/index.js';

describe('normalize: URLs recently forwarded are not forwarded again', () => {
  test('RecentUrls remembers at least the last capacity/2 URLs and stays bounded', () => {
    const recent = new RecentUrls(10);
    for (let i = 0; i < 100; i++) recent.add(`u${i}`);
    for (let i = 95; i < 100; i++) assert.ok(recent.has(`u${i}`), `u${i} remembered`);
    assert.equal(recent.has('u0'), false, 'the oldest are forgotten');
  });

  test('a link found on two pages becomes one candidate', async () => {
    const ctx = createFakeContext();
    await handleNormalize(stageInput({ kind: 'seed', seed: { url: 'http://a.example.com/' } }, { subject: 'crawl.seeds' }), ctx);
    const links = (source: string) =>
      stageInput<NormalizeInput>(
        { kind: 'links', links: { v: 1, source_url: source, depth: 1, via: 'link', links: [{ url: 'http://a.example.com/nav' }, { url: `${source}x` }] } },
        { subject: 'crawl.links.0' },
      );
    const first = await handleNormalize(links('http://a.example.com/p1/'), ctx);
    if (first.kind === 'emit') await first.afterPublish?.([]); // published
    const second = await handleNormalize(links('http://a.example.com/p2/'), ctx);
    const urls = (o: Awaited<ReturnType<typeof handleNormalize>>) =>
      o.kind === 'emit' ? o.messages.filter((m) => m.subject.startsWith('crawl.normalized')).flatMap((m) => decodeCandidates(m.data)).length : -1;
    assert.equal(urls(first), 2);
    assert.equal(urls(second), 1, 'the shared nav link is not sent again');
  });
});
