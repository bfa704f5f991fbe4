// The gate's in-process cache of robots.txt rules holds a bounded number of hosts however
// many the crawl has seen, keeps the hosts in use, and reads an idle host's rules from the
// bucket again when it comes back.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { RobotsCache } from '../../stages/shared/robots/robots-cache.js';
import type { RobotsRecord } from '../../stages/shared/robots/robots-rules.js';

class CountingStore extends MemoryKvStore {
  gets = 0;
  override async get(key: string) {
    this.gets += 1;
    return super.get(key);
  }
}

const rules = (host: string, now: number): RobotsRecord => ({ kind: 'rules', body: `User-agent: *\nDisallow: /${host}/\n`, status: 200, fetchedAt: now, reason: 'http 200' });

test('robots cache: bounded over 7,000 hosts, the busy host kept, an idle host read from the bucket again with its own rules', async () => {
  const store = new CountingStore();
  const cache = new RobotsCache(store, 'testbot', { maxTtlMs: 86_400_000, errorRetryMs: 60_000 });
  const now = Date.now();
  const hosts = Array.from({ length: 7_000 }, (_, i) => `h${i}.example`);
  await cache.put('busy.example', rules('busy', now));
  let maxSize = 0;
  for (const host of hosts) {
    await cache.put(host, rules(host, now));
    maxSize = Math.max(maxSize, cache.size);
    // the busy host is looked up all along: never read from the bucket again
    const gets = store.gets;
    assert.ok((await cache.get('busy.example', now)) !== null);
    assert.equal(store.gets, gets, 'the busy host came from memory');
  }
  assert.ok(maxSize <= RobotsCache.LOCAL_MAX, `held ${maxSize} hosts at most, LOCAL_MAX ${RobotsCache.LOCAL_MAX}`);
  assert.ok(maxSize >= RobotsCache.LOCAL_MAX / 2, 'and kept a useful number');
  const gets = store.gets;
  const first = await cache.get(hosts[0]!, now);
  assert.equal(store.gets, gets + 1, 'the first host, long idle, was read from the bucket');
  assert.equal(first!.record.body, 'User-agent: *\nDisallow: /h0.example/\n');
});
