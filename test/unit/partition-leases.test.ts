import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { LeaseTable, planLeases, type Lease } from '../../pipeline/partition-leases.js';

const NOW = 1_000_000;
const held = (owner: string): Lease => ({ owner });
/** members a and b live; c lapsed (still in the record, its expiry passed) */
const alive = (...ids: string[]) => Object.fromEntries(ids.map((id) => [id, NOW + 5000]));

describe('partition lease plan', () => {
  test('alone: takes every free partition', () => {
    const plan = planLeases({ self: 'a', now: NOW, partitions: 4, members: alive('a'), leases: [null, null, null, null], held: new Set() });
    assert.deepEqual(plan.acquire.sort(), [0, 1, 2, 3]);
    assert.deepEqual(plan.release, []);
  });

  test('with a second member: gives up the partitions above its share', () => {
    const plan = planLeases({ self: 'a', now: NOW, partitions: 4, members: alive('a', 'b'), leases: [held('a'), held('a'), held('a'), held('a')], held: new Set([0, 1, 2, 3]) });
    assert.deepEqual(plan, { acquire: [], release: [2, 3] });
  });

  test('never takes a lease of another live member; takes those of a lapsed or gone one up to its share', () => {
    const members = { ...alive('a', 'b'), c: NOW - 1 };
    const plan = planLeases({ self: 'b', now: NOW, partitions: 4, members, leases: [held('a'), held('c'), held('a'), held('gone')], held: new Set() });
    assert.deepEqual(plan.acquire.sort(), [1, 3]);
  });

  test('a released lease (no owner) is free', () => {
    const plan = planLeases({ self: 'b', now: NOW, partitions: 2, members: alive('b'), leases: [{ owner: '' }, held('b')], held: new Set([1]) });
    assert.deepEqual(plan.acquire, [0]);
  });

  test('uneven split: 5 partitions over 2 members is 3 + 2 at most', () => {
    const plan = planLeases({ self: 'b', now: NOW, partitions: 5, members: alive('a', 'b'), leases: [held('a'), held('a'), null, null, null], held: new Set() });
    assert.equal(plan.acquire.length, 3);
  });
});

describe('lease table (compare-and-set)', () => {
  test('two processes racing for one partition: one wins', async () => {
    const kv = new MemoryKvStore();
    const a = new LeaseTable(kv, 'seen-filter', 'a', 1000);
    const b = new LeaseTable(kv, 'seen-filter', 'b', 1000);
    const read = await a.read(0);
    assert.ok(await a.acquire(0, read.revision));
    assert.equal(await b.acquire(0, read.revision), null, 'b read before a wrote: conflict');
    assert.deepEqual((await b.read(0)).lease, { owner: 'a' });
  });

  test('members: a heartbeat counts live members, a lapsed one drops out, leaving removes at once', async () => {
    const kv = new MemoryKvStore();
    const a = new LeaseTable(kv, 'seen-filter', 'a', 1000);
    const b = new LeaseTable(kv, 'seen-filter', 'b', 1000);
    const count = async (t: LeaseTable, now: number, leaving = false) => {
      const beat = await t.heartbeat(now, leaving);
      assert.equal(beat.evicted, false);
      return beat.evicted ? NaN : Object.keys(beat.members).length;
    };
    assert.equal(await count(a, NOW), 1);
    assert.equal(await count(b, NOW), 2);
    assert.equal(await count(b, NOW + 500), 2);
    assert.equal(await count(b, NOW + 500, true), 1, 'b left');
    assert.equal(await count(a, NOW + 600), 1);
  });

  test('one write a round renews a process however many partitions it holds', async () => {
    const kv = new MemoryKvStore();
    const a = new LeaseTable(kv, 'seen-filter', 'a', 1000);
    await a.heartbeat(NOW);
    for (let p = 0; p < 16; p++) assert.ok(await a.acquire(p, null));
    let writes = 0;
    let reads = 0;
    const update = kv.update.bind(kv);
    const get = kv.get.bind(kv);
    kv.update = (...args) => (writes++, update(...args));
    kv.get = (...args) => (reads++, get(...args));
    for (let round = 1; round <= 10; round++) await a.heartbeat(NOW + round * 300);
    assert.equal(writes, 10, 'one write a round');
    assert.equal(reads, 0, 'and no read while nobody else writes the record');
  });

  test('a lapsed process is removed by the next one to see it, before that one takes its partitions; it learns so at its next heartbeat', async () => {
    const kv = new MemoryKvStore();
    const a = new LeaseTable(kv, 'seen-filter', 'a', 1000);
    const b = new LeaseTable(kv, 'seen-filter', 'b', 1000);
    await a.heartbeat(NOW);
    const heldByA = await a.acquire(0, null);
    assert.ok(heldByA);
    await b.heartbeat(NOW);
    // a stalls past its lease time; b's round removes it, then finds partition 0 free
    const beat = await b.heartbeat(NOW + 1500);
    assert.ok(!beat.evicted);
    assert.deepEqual(Object.keys(beat.members), ['b']);
    const read = await b.read(0);
    const plan = planLeases({ self: 'b', now: NOW + 1500, partitions: 1, members: beat.members, leases: [read.lease], held: new Set() });
    assert.deepEqual(plan.acquire, [0]);
    assert.ok(await b.acquire(0, read.revision));
    // a wakes up: its renewal finds itself gone, so it stops serving what it held
    assert.deepEqual(await a.heartbeat(NOW + 1600), { evicted: true });
    // and a give-up of the lease it had lost changes nothing
    await a.release(0, heldByA);
    assert.deepEqual((await b.read(0)).lease, { owner: 'b' });
  });

  test('a process that renews in time is not removed, whoever writes the record in between', async () => {
    const kv = new MemoryKvStore();
    const a = new LeaseTable(kv, 'seen-filter', 'a', 1000);
    const b = new LeaseTable(kv, 'seen-filter', 'b', 1000);
    await a.heartbeat(NOW);
    await b.heartbeat(NOW + 100);
    const beat = await a.heartbeat(NOW + 400); // its cached revision is stale: it reads and writes again
    assert.ok(!beat.evicted);
    assert.deepEqual(Object.keys(beat.members).sort(), ['a', 'b']);
  });
});
