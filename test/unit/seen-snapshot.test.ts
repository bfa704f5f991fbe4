import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { PartitionSeenSet } from '../../stages/seen-filter/partition-seen-set.js';
import { exactKeyOf } from '../../stages/seen-filter/exact-key.js';
import { decodeSnapshot, encodeSnapshot, SnapshotError } from '../../stages/seen-filter/snapshot-codec.js';
import { SnapshotStore } from '../../stages/seen-filter/snapshot-store.js';
import { KvConflictError } from '../../ports/kv.js';

function filled(n: number, planned = 2048): PartitionSeenSet {
  const set = PartitionSeenSet.empty(planned, 10);
  for (let i = 0; i < n; i++) set.check(`https://example.com/${i}`, exactKeyOf('t', `https://example.com/${i}`), 100 + i);
  set.decide(100, 'admitted');
  set.decide(101, 'over_limit');
  set.settle(101); // 100 and 101 acked: 102... stay unsettled
  return set;
}

describe('seen-set snapshot codec', () => {
  test('round trip: same URLs seen, same slices, same unsettled messages and decisions', () => {
    const set = filled(5000); // more than planned (with headroom): two slices
    assert.equal(set.filter.slices.length, 2);
    const back = decodeSnapshot(encodeSnapshot(3, set), 3);
    assert.equal(back.settledSeq, 101);
    assert.equal(back.filter.count, set.filter.count);
    assert.deepEqual(back.filter.slices.map((s) => [s.capacity, s.hashes, s.bits.length]), set.filter.slices.map((s) => [s.capacity, s.hashes, s.bits.length]));
    // a Bloom hit, which the exact record confirms (the recent keys are not in a snapshot)
    for (let i = 0; i < 5000; i += 13) assert.equal(back.check(`https://example.com/${i}`, exactKeyOf('t', `https://example.com/${i}`), 99_999).kind, 'unconfirmed');
    assert.deepEqual([...back.unsettledEntries()].sort((a, b) => a.key - b.key), [...set.unsettledEntries()].sort((a, b) => a.key - b.key));
    assert.deepEqual(back.check('https://example.com/2', exactKeyOf('t', 'https://example.com/2'), 102), { kind: 'again', decision: 'unknown' });
    assert.equal(back.confirmsHits, true);
  });

  test('a set begun without the exact record stays so: its Bloom hits are taken as seen', () => {
    const old = new PartitionSeenSet(PartitionSeenSet.empty(1000, 0).filter, 0, false);
    old.check('https://example.com/a', exactKeyOf('t', 'https://example.com/a'), 1);
    const back = decodeSnapshot(encodeSnapshot(0, old), 0);
    assert.equal(back.confirmsHits, false);
    assert.deepEqual(back.check('https://example.com/a', exactKeyOf('t', 'https://example.com/a'), 2), { kind: 'seen', by: 'bloom' });
  });

  test('a damaged, truncated or foreign snapshot is a clear error, never a silently smaller set', () => {
    const data = encodeSnapshot(3, filled(100));
    const flipped = data.slice();
    flipped[100] ^= 1;
    assert.throws(() => decodeSnapshot(flipped, 3), (e: Error) => e instanceof SnapshotError && /checksum mismatch/.test(e.message));
    assert.throws(() => decodeSnapshot(data.subarray(0, data.length - 50), 3), /checksum mismatch/);
    assert.throws(() => decodeSnapshot(data, 4), /holds partition 3, expected 4/);
    assert.throws(() => decodeSnapshot(new Uint8Array(10), 3), /too short/);
  });
});

describe('seen-set snapshot store (KV chunks)', () => {
  test('a snapshot larger than a chunk is saved and loaded whole; the previous generation is deleted', async () => {
    const kv = new MemoryKvStore();
    const store = new SnapshotStore(kv, 'crawl-a');
    const big = new Uint8Array(1_300_000).map((_, i) => i % 251);
    const first = await store.save(2, big, null, 1);
    assert.equal(first.manifest.chunks, 3);
    const loaded = await store.load(2);
    assert.deepEqual(loaded?.data, big);
    const second = await store.save(2, new Uint8Array([1, 2, 3]), first, 2);
    assert.deepEqual((await store.load(2))?.data, new Uint8Array([1, 2, 3]));
    const keys: string[] = [];
    for await (const k of kv.keys()) keys.push(k);
    assert.equal(keys.length, 2, `manifest and one chunk: ${keys.join(' ')}`);
    assert.equal(second.manifest.generation, 2);
  });

  test('a writer whose view is stale (it lost the lease) cannot replace a newer snapshot', async () => {
    const kv = new MemoryKvStore();
    const store = new SnapshotStore(kv, 'crawl-a');
    const base = await store.save(0, new Uint8Array([1]), null, 1);
    await store.save(0, new Uint8Array([2]), base, 2); // the new owner
    await assert.rejects(store.save(0, new Uint8Array([3]), base, 3), KvConflictError);
    assert.deepEqual((await store.load(0))?.data, new Uint8Array([2]));
  });

  test('snapshots are per crawl id: a new crawl finds none', async () => {
    const kv = new MemoryKvStore();
    await new SnapshotStore(kv, 'crawl-a').save(0, new Uint8Array([1]), null, 1);
    assert.equal(await new SnapshotStore(kv, 'crawl-b').load(0), null);
  });
});
