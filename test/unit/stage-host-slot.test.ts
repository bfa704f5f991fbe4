import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireSlot, confirmLease, decideAcquire, emptySlot, releaseSlot, type AcquireResult, type HostSlot } from '../../stages/host-slot.js';
import { MemoryKvStore, parseJsonValue } from '../../pipeline/kv-store.js';

const HOST = 'example.com';
const T = 1_000_000;
const first = { leaseMs: 60_000, firstAttempt: true };
const later = { leaseMs: 60_000, firstAttempt: false };

async function slotOf(store: MemoryKvStore): Promise<HostSlot> {
  const e = await store.get(HOST);
  assert.ok(e, 'the host has a slot');
  return parseJsonValue<HostSlot>(e.value);
}

function waitOf(r: AcquireResult): { waitMs: number; reason: string } {
  assert.equal(r.acquired, false, 'expected to wait');
  return r as { acquired: false; waitMs: number; reason: string };
}

describe('host slot: decideAcquire (pure)', () => {
  const cases: Array<{ name: string; slot: HostSlot | null; now: number; acquired: boolean; reason?: string }> = [
    { name: 'no slot yet', slot: null, now: T, acquired: true },
    { name: 'free, next_allowed_at passed', slot: { ...emptySlot(), next_allowed_at: T - 1 }, now: T, acquired: true },
    { name: 'free, next_allowed_at exactly now', slot: { ...emptySlot(), next_allowed_at: T }, now: T, acquired: true },
    { name: 'free, too early', slot: { ...emptySlot(), next_allowed_at: T + 1 }, now: T, acquired: false, reason: 'host delay' },
    { name: 'live lease', slot: { ...emptySlot(), lease_id: 'x', lease_until: T + 1 }, now: T, acquired: false, reason: 'request in flight' },
    { name: 'expired lease', slot: { ...emptySlot(), lease_id: 'x', lease_until: T }, now: T, acquired: true },
    { name: 'expired lease but host delay', slot: { ...emptySlot(), lease_id: 'x', lease_until: T - 5, next_allowed_at: T + 500 }, now: T, acquired: false, reason: 'host delay' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { next, result } = decideAcquire(c.slot, c.now, { leaseId: 'me', ...first });
      assert.equal(result.acquired, c.acquired);
      if (result.acquired) {
        assert.equal(result.slot.lease_id, 'me');
        assert.equal(result.slot.lease_until, c.now + first.leaseMs);
        assert.deepEqual(next, result.slot);
      } else {
        assert.equal(result.reason, c.reason);
        assert.ok(result.waitMs >= 10);
      }
    });
  }

  test('a non-first attempt that must wait leaves the slot unchanged', () => {
    const slot = { ...emptySlot(), lease_id: 'x', lease_until: T + 1000, reserved_until: T + 5000 };
    const { next, result } = decideAcquire(slot, T, { leaseId: 'me', ...later });
    assert.equal(next, undefined);
    assert.equal(result.acquired, false);
  });

  test('first-attempt waiters get increasing reserved slots: a backlog of N is spread out', () => {
    const N = 8;
    let slot: HostSlot = { ...emptySlot(), lease_id: 'x', lease_until: T + 60_000, delay_ms: 1000, last_duration_ms: 200, next_allowed_at: 0 };
    const waits: number[] = [];
    for (let i = 0; i < N; i++) {
      const { next, result } = decideAcquire(slot, T, { leaseId: `w${i}`, ...first });
      waits.push(waitOf(result).waitMs);
      assert.ok(next, 'a first-time waiter books a place');
      slot = next;
    }
    const spacing = 1000 + 200;
    for (let i = 1; i < N; i++) {
      const gap = waits[i]! - waits[i - 1]!;
      // one place per spacing, up to the jitter (< 20 ms) of each wait
      assert.ok(gap > spacing - 20 && gap < spacing + 20, `gap ${i}: ${gap} (waits ${waits.join(', ')})`);
    }
    assert.ok(slot.reserved_until >= T + N * spacing);
  });

  test('a waiter never waits less than until the host is allowed again', () => {
    const slot = { ...emptySlot(), next_allowed_at: T + 3000, reserved_until: T + 1000 };
    const w = waitOf(decideAcquire(slot, T, { leaseId: 'me', ...first }).result);
    assert.ok(w.waitMs >= 3000 && w.waitMs < 3020, String(w.waitMs));
    const w2 = waitOf(decideAcquire(slot, T, { leaseId: 'me', ...later }).result);
    assert.ok(w2.waitMs >= 3000, String(w2.waitMs));
  });
});

describe('host slot: acquire / confirm / release (KV)', () => {
  test('a lease excludes a second acquire', async () => {
    const store = new MemoryKvStore();
    assert.equal((await acquireSlot(store, HOST, T, { leaseId: 'a', ...first })).acquired, true);
    const second = waitOf(await acquireSlot(store, HOST, T + 10, { leaseId: 'b', ...first }));
    assert.equal(second.reason, 'request in flight');
    assert.equal((await slotOf(store)).lease_id, 'a');
    // another host is independent
    assert.equal((await acquireSlot(store, 'other.org', T + 10, { leaseId: 'c', ...first })).acquired, true);
  });

  test('next_allowed_at enforces the delay after release', async () => {
    const store = new MemoryKvStore();
    await acquireSlot(store, HOST, T, { leaseId: 'a', ...first });
    await releaseSlot(store, HOST, 'a', T + 300, 2000, 300);
    const slot = await slotOf(store);
    assert.equal(slot.lease_id, null);
    assert.equal(slot.next_allowed_at, T + 2300);
    assert.equal(slot.delay_ms, 2000);
    assert.equal(slot.last_duration_ms, 300);

    const w = waitOf(await acquireSlot(store, HOST, T + 1300, { leaseId: 'b', ...later }));
    assert.equal(w.reason, 'host delay');
    assert.ok(w.waitMs >= 1000, String(w.waitMs));
    assert.equal((await acquireSlot(store, HOST, T + 2299, { leaseId: 'b', ...later })).acquired, false);
    assert.equal((await acquireSlot(store, HOST, T + 2300, { leaseId: 'b', ...later })).acquired, true);
  });

  test('release never moves next_allowed_at backwards', async () => {
    const store = new MemoryKvStore();
    await acquireSlot(store, HOST, T, { leaseId: 'a', ...first });
    await releaseSlot(store, HOST, 'a', T + 100, 10_000, 100);
    await releaseSlot(store, HOST, 'stale', T + 200, 0, 100);
    assert.equal((await slotOf(store)).next_allowed_at, T + 10_100);
  });

  test('an expired lease can be taken over; the old holder can no longer confirm it or free the new one', async () => {
    const store = new MemoryKvStore();
    await acquireSlot(store, HOST, T, { leaseId: 'a', leaseMs: 1000, firstAttempt: true });
    assert.equal((await acquireSlot(store, HOST, T + 999, { leaseId: 'b', ...later })).acquired, false);
    const took = await acquireSlot(store, HOST, T + 1000, { leaseId: 'b', ...later });
    assert.equal(took.acquired, true);
    assert.equal((await slotOf(store)).lease_id, 'b');
    assert.equal(await confirmLease(store, HOST, 'a', T + 1001, 5000), 'lost');
    await releaseSlot(store, HOST, 'a', T + 1002, 1000, 50);
    assert.equal((await slotOf(store)).lease_id, 'b', "a stale release leaves the new holder's lease");
    assert.equal(await confirmLease(store, HOST, 'b', T + 1003, 5000), 'ours');
  });

  test('confirmLease: ours and live → extended; wrong id, expired or missing → false', async () => {
    const store = new MemoryKvStore();
    assert.equal(await confirmLease(store, HOST, 'a', T, 5000), 'lost', 'no slot');
    await acquireSlot(store, HOST, T, { leaseId: 'a', leaseMs: 1000, firstAttempt: true });
    assert.equal(await confirmLease(store, HOST, 'x', T + 1, 5000), 'lost', 'another lease id');
    assert.equal(await confirmLease(store, HOST, 'a', T + 500, 5000), 'ours');
    assert.equal((await slotOf(store)).lease_until, T + 5500, 'extended');
    assert.equal(await confirmLease(store, HOST, 'a', T + 5500, 5000), 'lost', 'expired');
    await releaseSlot(store, HOST, 'a', T + 100, 0, 0);
    assert.equal(await confirmLease(store, HOST, 'a', T + 200, 5000), 'done', 'released: its request completed');
  });

  test('first-attempt waiters through the store are spread out too', async () => {
    const store = new MemoryKvStore();
    await acquireSlot(store, HOST, T, { leaseId: 'holder', ...first });
    await releaseSlot(store, HOST, 'holder', T + 100, 1000, 100);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) waits.push(waitOf(await acquireSlot(store, HOST, T + 100, { leaseId: `w${i}`, ...first })).waitMs);
    for (let i = 1; i < waits.length; i++) assert.ok(waits[i]! > waits[i - 1]! + 1000, `waits ${waits.join(', ')}`);
    assert.ok(waits[0]! >= 1000 && waits[0]! < 1020, `the first waiter waits for the host delay only: ${waits[0]}`);
  });

  test('concurrent acquires: exactly one wins', async () => {
    const store = new MemoryKvStore();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => acquireSlot(store, HOST, T, { leaseId: `l${i}`, ...first })));
    assert.equal(results.filter((r) => r.acquired).length, 1);
  });
});
