import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { LeaseTable, planLeases, type Lease } from '../../pipeline/partition-leases.js';

const NOW = 1_000_000;
const live = (owner: string): Lease => ({ owner, expires_at: NOW + 5000 });
const lapsed = (owner: string): Lease => ({ owner, expires_at: NOW - 1 });

describe('partition lease plan', () => {
  test('alone: takes every free partition', () => {
    const plan = planLeases({ self: 'a', now: NOW, partitions: 4, members: 1, leases: [null, null, null, null], held: new Set() });
    assert.deepEqual(plan.acquire.sort(), [0, 1, 2, 3]);
    assert.deepEqual(plan.release, []);
  });

  test('with a second member: gives up the partitions above its share', () => {
    const plan = planLeases({ self: 'a', now: NOW, partitions: 4, members: 2, leases: [live('a'), live('a'), live('a'), live('a')], held: new Set([0, 1, 2, 3]) });
    assert.deepEqual(plan, { acquire: [], release: [2, 3] });
  });

  test('never takes a live lease of another process; takes lapsed ones (a dead owner) up to its share', () => {
    const plan = planLeases({ self: 'b', now: NOW, partitions: 4, members: 2, leases: [live('a'), lapsed('c'), live('a'), lapsed('c')], held: new Set() });
    assert.deepEqual(plan.acquire.sort(), [1, 3]);
  });

  test('a released lease (no owner) is free', () => {
    const plan = planLeases({ self: 'b', now: NOW, partitions: 2, members: 1, leases: [{ owner: '', expires_at: NOW + 9999 }, live('b')], held: new Set([1]) });
    assert.deepEqual(plan.acquire, [0]);
  });

  test('uneven split: 5 partitions over 2 members is 3 + 2 at most', () => {
    const plan = planLeases({ self: 'b', now: NOW, partitions: 5, members: 2, leases: [live('a'), live('a'), null, null, null], held: new Set() });
    assert.equal(plan.acquire.length, 3);
  });
});

describe('lease table (compare-and-set)', () => {
  test('two processes racing for one partition: one wins; the loser cannot renew what it does not hold', async () => {
    const kv = new MemoryKvStore();
    const a = new LeaseTable(kv, 'seen-filter', 'a', 1000);
    const b = new LeaseTable(kv, 'seen-filter', 'b', 1000);
    const read = await a.read(0);
    const heldByA = await a.acquire(0, read.revision, NOW);
    assert.ok(heldByA);
    assert.equal(await b.acquire(0, read.revision, NOW), null, 'b read before a wrote: conflict');
    const renewed = await a.renew(0, heldByA, NOW + 500);
    assert.ok(renewed);
    assert.equal(renewed.expiresAt, NOW + 1500);
    // a lapses (stops renewing); b takes over; a's next renewal fails: a must stop serving
    const current = await b.read(0);
    assert.ok(current.lease!.expires_at <= NOW + 2000);
    const heldByB = await b.acquire(0, current.revision, NOW + 2000);
    assert.ok(heldByB);
    assert.equal(await a.renew(0, renewed, NOW + 2001), null);
  });

  test('members: a heartbeat counts live members, a lapsed one drops out, leaving removes at once', async () => {
    const kv = new MemoryKvStore();
    const a = new LeaseTable(kv, 'seen-filter', 'a', 1000);
    const b = new LeaseTable(kv, 'seen-filter', 'b', 1000);
    assert.equal(await a.heartbeat(NOW), 1);
    assert.equal(await b.heartbeat(NOW), 2);
    assert.equal(await a.heartbeat(NOW + 1500), 1, "b's membership lapsed");
    assert.equal(await b.heartbeat(NOW + 1500), 2);
    assert.equal(await b.heartbeat(NOW + 1500, true), 1);
  });
});
