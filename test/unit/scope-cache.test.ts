import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { ScopeCache } from '../../stages/normalize/scope-cache.js';

/** a scope bucket that counts the reads it answers */
function countingStore() {
  const store = new MemoryKvStore();
  const get = store.get.bind(store);
  const reads: string[] = [];
  store.get = (key: string) => {
    reads.push(key);
    return get(key);
  };
  return { store, reads };
}

describe('normalize: the scope cache', () => {
  test('remembers at most its bound of keys; a forgotten key is read again and still in the scope', async () => {
    const { store, reads } = countingStore();
    const scope = new ScopeCache(store, 3);
    const keys = ['d.a.test', 'd.b.test', 'd.c.test', 'd.d.test', 'd.e.test'];
    await scope.addAll(keys); // put by the seeds
    assert.equal(scope.knownCount, 3);
    const other = new ScopeCache(store, 3); // another normalize process: knows none of them
    for (const k of keys) assert.equal(await other.has(k, 0), true, k);
    assert.equal(other.knownCount, 3, 'bounded however many keys it met');
    reads.length = 0;
    assert.equal(await other.has('d.a.test', 0), true, 'forgotten (asked about longest ago), still in the scope');
    assert.deepEqual(reads, ['d.a.test'], 'read from KV again');
    assert.equal(other.knownCount, 3);
  });

  test("a key asked about often stays: the one forgotten is the one asked about longest ago", async () => {
    const { store, reads } = countingStore();
    const scope = new ScopeCache(store, 2);
    await scope.addAll(['seed', 'x', 'y']);
    const asker = new ScopeCache(store, 2);
    await asker.has('seed', 0);
    for (const k of ['x', 'y', 'x', 'y']) {
      await asker.has(k, 0);
      await asker.has('seed', 0); // every link of the crawl asks for its seed's domain
    }
    assert.equal(reads.filter((k) => k === 'seed').length, 1, 'the seed key was read once');
    assert.equal(asker.knownCount, 2);
  });

  test('an answer of no is asked again after a few seconds: another process may have added the key', async () => {
    const { store, reads } = countingStore();
    const scope = new ScopeCache(store);
    assert.equal(await scope.has('d.new.test', 0), false);
    await store.put('d.new.test', new TextEncoder().encode('1'));
    assert.equal(await scope.has('d.new.test', 1_000), false, 'still no within the negative TTL');
    assert.equal(await scope.has('d.new.test', 2_500), true);
    assert.equal(reads.length, 2);
  });
});
