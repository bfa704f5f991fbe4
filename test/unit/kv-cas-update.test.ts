import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CAS_CACHE_BYTES, casUpdate, jsonValue } from '../../pipeline/kv-store.js';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { type KvEntry } from '../../ports/kv.js';

/** A MemoryKvStore that counts its reads, to see which updates skipped theirs. */
class CountingStore extends MemoryKvStore {
  reads = 0;
  writes = 0;
  override async get(key: string): Promise<KvEntry | null> {
    this.reads += 1;
    return super.get(key);
  }
  override async update(key: string, value: Uint8Array, revision: number): Promise<number> {
    this.writes += 1;
    return super.update(key, value, revision);
  }
  override async create(key: string, value: Uint8Array): Promise<number> {
    this.writes += 1;
    return super.create(key, value);
  }
}

const increment = (n: number | null) => ({ value: (n ?? 0) + 1, result: (n ?? 0) + 1 });

describe('casUpdate', () => {
  test('a new key is created without a read, then updated on the remembered revision', async () => {
    const store = new CountingStore();
    for (let i = 1; i <= 5; i++) assert.equal(await casUpdate(store, 'host-a', increment), i);
    assert.equal(store.reads, 0);
    assert.equal(store.writes, 5);
  });

  test('a key that exists but this process never saw: the create fails, then it is read and updated', async () => {
    const store = new CountingStore();
    await store.put('k', jsonValue(7)); // another process's
    assert.equal(await casUpdate(store, 'k', increment), 8);
    assert.equal(store.reads, 1);
    assert.equal(store.writes, 2); // the failed create, the update
    // seen now: its next update after it is forgotten reads first instead of guessing again
    await store.put('k', jsonValue(20));
    assert.equal(await casUpdate(store, 'k', increment), 21);
  });

  test('a guess that the key is new never decides to leave it: that is decided on a read', async () => {
    const store = new CountingStore();
    await store.put('k', jsonValue(5));
    // on null this change leaves the value; on the real value it writes
    const result = await casUpdate<number, string>(store, 'k', (n) => (n === null ? { result: 'left' } : { value: n + 1, result: 'written' }));
    assert.equal(result, 'written');
    assert.deepEqual(JSON.parse(new TextDecoder().decode((await store.get('k'))!.value)), 6);
  });

  test('where other processes create most keys, guessing stops (but for an occasional try)', async () => {
    const store = new CountingStore();
    for (let i = 0; i < 200; i++) await store.put(`k${i}`, jsonValue(0));
    for (let i = 0; i < 200; i++) await casUpdate(store, `k${i}`, increment);
    // a failed guess costs 3 operations instead of 2; once more than half the recent ones
    // failed, only one key in 16 is guessed
    const failedCreates = store.writes - 200;
    assert.ok(failedCreates <= 1 + 200 / 16, `${failedCreates} failed creates for 200 keys that existed`);
    assert.ok(failedCreates >= 200 / 16 - 1, `${failedCreates}: the occasional guess goes on`);
    for (let i = 0; i < 200; i++) assert.deepEqual(JSON.parse(new TextDecoder().decode((await store.get(`k${i}`))!.value)), 1);
  });

  test('a key another writer changed fails the remembered revision once and is read afresh', async () => {
    const store = new CountingStore();
    await casUpdate(store, 'k', increment);
    await store.put('k', jsonValue(41)); // someone else's write
    assert.equal(await casUpdate(store, 'k', increment), 42);
    assert.equal(store.reads, 1);
  });

  test('a decision to leave the value is made on a fresh read, never on the remembered one', async () => {
    const store = new CountingStore();
    await casUpdate(store, 'k', increment);
    await store.put('k', jsonValue(10));
    // the remembered value (1) would say "leave it"; the fresh one (10) says write
    const result = await casUpdate<number, string>(store, 'k', (n) => (n === 1 ? { result: 'left' } : { value: 0, result: 'reset' }));
    assert.equal(result, 'reset');
    assert.deepEqual(JSON.parse(new TextDecoder().decode((await store.get('k'))!.value)), 0);
  });

  test('concurrent updates of one key in one process all land', async () => {
    const store = new CountingStore();
    await Promise.all(Array.from({ length: 50 }, () => casUpdate(store, 'k', increment)));
    assert.equal(await casUpdate(store, 'k', increment), 51);
  });

  test('updates queued behind a write in flight are applied in call order and written together', async () => {
    const store = new CountingStore();
    const results = await Promise.all(Array.from({ length: 50 }, () => casUpdate(store, 'k', increment)));
    // each saw the value the one before it left, as if run one after another
    assert.deepEqual(results, Array.from({ length: 50 }, (_, i) => i + 1));
    assert.ok(store.writes <= 3, `50 queued updates took ${store.writes} writes`);
    assert.equal(JSON.parse(new TextDecoder().decode((await store.get('k'))!.value)), 50);
  });

  test('a change that throws rejects its own call only; the changes queued with it land', async () => {
    const store = new CountingStore();
    const calls = [
      casUpdate(store, 'k', increment),
      casUpdate<number, number>(store, 'k', () => {
        throw new Error('bad change');
      }),
      casUpdate(store, 'k', increment),
    ];
    const [a, b, c] = await Promise.allSettled(calls);
    assert.deepEqual(a, { status: 'fulfilled', value: 1 });
    assert.equal(b!.status, 'rejected');
    assert.match(String((b as PromiseRejectedResult).reason), /bad change/);
    assert.deepEqual(c, { status: 'fulfilled', value: 2 });
  });

  test('updates written together re-run on a fresh read when another writer changed the key', async () => {
    const store = new CountingStore();
    await casUpdate(store, 'k', increment); // remembered: 1
    await store.put('k', jsonValue(100)); // someone else's write
    const results = await Promise.all([casUpdate(store, 'k', increment), casUpdate(store, 'k', increment), casUpdate(store, 'k', increment)]);
    assert.deepEqual(results, [101, 102, 103]);
    assert.equal(JSON.parse(new TextDecoder().decode((await store.get('k'))!.value)), 103);
  });

  test('remembered entries stay within the byte budget (least recently used forgotten)', async () => {
    const store = new CountingStore();
    const big = 'x'.repeat(64 * 1024);
    const keys = Math.ceil((2 * CAS_CACHE_BYTES) / big.length);
    for (let i = 0; i < keys; i++) await casUpdate(store, `k${i}`, () => ({ value: big, result: undefined }));
    const readsBefore = store.reads;
    await casUpdate(store, 'k0', () => ({ value: big + '!', result: undefined })); // long forgotten: read again
    assert.equal(store.reads, readsBefore + 1);
    await casUpdate(store, `k${keys - 1}`, () => ({ value: big + '!', result: undefined })); // recent: no read
    assert.equal(store.reads, readsBefore + 1);
  });

  test('a key in steady use stays remembered however many other keys pass through', async () => {
    const store = new CountingStore();
    const big = 'x'.repeat(64 * 1024);
    const others = Math.ceil((4 * CAS_CACHE_BYTES) / big.length);
    await casUpdate(store, 'hot', increment);
    const readsBefore = store.reads;
    for (let i = 0; i < others; i++) {
      await casUpdate(store, `k${i}`, () => ({ value: big, result: undefined }));
      // a host's slot: updated again every few other keys
      if (i % 16 === 0) await casUpdate(store, 'hot', increment);
    }
    // the other keys were new (written without a read); the hot key was never read again
    assert.equal(store.reads, readsBefore);
    assert.equal(JSON.parse(new TextDecoder().decode((await store.get('hot'))!.value)), 1 + Math.ceil(others / 16));
  });
});
