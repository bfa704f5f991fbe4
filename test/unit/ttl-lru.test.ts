import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TtlLru } from '../../pipeline/adapters/ttl-lru.js';

test('the least recently used entry leaves first when the map is full; a read makes an entry recent', () => {
  const clock = { now: 0 };
  const lru = new TtlLru<string>(3, () => clock.now);
  for (const k of ['a', 'b', 'c']) lru.set(k, k.toUpperCase(), 1000);
  assert.equal(lru.get('a'), 'A');
  lru.set('d', 'D', 1000); // b is now the least recently used
  assert.equal(lru.size, 3);
  assert.equal(lru.get('b'), undefined);
  assert.deepEqual(['a', 'c', 'd'].map((k) => lru.get(k)), ['A', 'C', 'D']);
  lru.set('c', 'C2', 1000); // a write replaces, never adds a second entry
  assert.equal(lru.size, 3);
  assert.equal(lru.get('c'), 'C2');
});

test('an expired entry is not returned and leaves when read; a sweep drops the rest', () => {
  const clock = { now: 0 };
  const lru = new TtlLru<number>(100, () => clock.now, 60_000);
  for (let i = 0; i < 50; i++) lru.set(`k${i}`, i, i < 40 ? 10_000 : 200_000);
  clock.now = 10_000; // the first 40 end now: `until` is exclusive
  assert.equal(lru.get('k0'), undefined);
  assert.equal(lru.size, 49, 'read and dropped');
  assert.equal(lru.get('k45'), 45);
  lru.set('new', 1, 300_000); // no sweep yet: the last was at 0, a minute has not passed
  assert.equal(lru.size, 50);
  clock.now = 60_000;
  lru.set('newer', 2, 300_000);
  assert.equal(lru.size, 12, 'the 39 expired entries left at the sweep');
});

test('a cache without room is a mistake said at once', () => {
  assert.throws(() => new TtlLru(0, () => 0), /at least one entry/);
});
