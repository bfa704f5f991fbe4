import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CAS_CACHE_BYTES, casUpdate, jsonValue, MemoryKvStore } from '../../pipeline/kv-store.js';
import { type KvEntry } from '../../ports/kv.js';

/** A MemoryKvStore that counts its reads, to see which updates skipped theirs. */
class CountingStore extends MemoryKvStore {
  reads = 0;
  override async get(key: string): Promise<KvEntry | null> {
    this.reads += 1;
    return super.get(key);
  }
}

const increment = (n: number | null) => ({ value: (n ?? 0) + 1, result: (n ?? 0) + 1 });

describe('casUpdate', () => {
  test('an uncontended key is read once, then updated on the remembered revision', async () => {
    const store = new CountingStore();
    for (let i = 1; i <= 5; i++) assert.equal(await casUpdate(store, 'host-a', increment), i);
    assert.equal(store.reads, 1);
  });

  test('a key another writer changed fails the remembered revision once and is read afresh', async () => {
    const store = new CountingStore();
    await casUpdate(store, 'k', increment);
    await store.put('k', jsonValue(41)); // someone else's write
    assert.equal(await casUpdate(store, 'k', increment), 42);
    assert.equal(store.reads, 2);
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
});
