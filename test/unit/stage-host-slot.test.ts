import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { confirmLease, confirmLeaseOf, decideAcquire, undoAcquire, effectiveCursor, emptySlot, readSlot, readyAt, releaseSlot, renewLease, type HostSlot } from '../../stages/shared/politeness/host-slot.js';
import { backoffMs, nextPacing, parseRetryAfter, type PacingSettings } from '../../stages/shared/politeness/host-pacing.js';
import { acquireIp, decideIpAcquire, releaseIp } from '../../stages/shared/politeness/ip-slot.js';
import { withReads } from '../../pipeline/kv-store.js';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { createFakeContext } from '../support/fake-context.js';
import { confirmTurn, keepTurn, type HostLease } from '../../stages/shared/politeness/host-turn.js';

const HOST = 'example.com';
const T = 1_000_000;
const slot = (over: Partial<HostSlot>): HostSlot => ({ ...emptySlot(HOST), ...over });
const PACING: PacingSettings = { adaptiveDelayFactor: 2, backoffBaseMs: 1000, maxBackoffMs: 60_000, pauseAfterFailures: 4, pauseMs: 300_000 };
const noJitter = () => 0.5;

describe('host slot: decideAcquire (pure)', () => {
  const cases: Array<{ name: string; slot: HostSlot | null; seq: number; acquired: boolean; reason?: string }> = [
    { name: 'no slot yet (robots.txt)', slot: null, seq: 0, acquired: true },
    { name: 'queued URL at the head', slot: slot({ cursor: 2 }), seq: 3, acquired: true },
    { name: 'free, next_allowed_at exactly now', slot: slot({ next_allowed_at: T }), seq: 0, acquired: true },
    { name: 'too early', slot: slot({ next_allowed_at: T + 1 }), seq: 0, acquired: false, reason: 'host delay' },
    { name: 'live lease', slot: slot({ lease_id: 'x', lease_until: T + 1 }), seq: 0, acquired: false, reason: 'request in flight' },
    { name: 'expired lease', slot: slot({ lease_id: 'x', lease_until: T, lease_confirmed: true }), seq: 0, acquired: true },
    { name: 'paused', slot: slot({ paused_until: T + 10, failures: 5 }), seq: 0, acquired: false, reason: 'paused after 5 failures' },
    { name: 'URL already handed out', slot: slot({ cursor: 4 }), seq: 4, acquired: false, reason: 'already handed out' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { next, result } = decideAcquire(c.slot, HOST, T, { leaseId: 'me', leaseMs: 60_000, seq: c.seq });
      assert.equal(result.acquired, c.acquired);
      if (result.acquired) {
        assert.equal(next!.lease_id, 'me');
        assert.equal(next!.lease_until, T + 60_000);
        if (c.seq > 0) assert.equal(next!.cursor, c.seq, 'the cursor moves past the granted URL in the same write');
      } else {
        assert.equal(result.reason, c.reason);
        assert.equal(next, undefined, 'a wait changes nothing');
      }
    });
  }

  test('readyAt: the latest of next allowed, pause end and live lease end', () => {
    assert.equal(readyAt(slot({ next_allowed_at: T - 1 }), T), 0);
    assert.equal(readyAt(slot({ next_allowed_at: T + 5, paused_until: T + 9 }), T), T + 9);
    assert.equal(readyAt(slot({ lease_id: 'x', lease_until: T + 7, next_allowed_at: T + 3 }), T), T + 7);
  });

  test('readyAt: a confirmed lease that lapsed unreleased (its fetcher died) paces the host from its end', () => {
    const dead = slot({ lease_id: 'x', lease_until: T - 100, lease_confirmed: true, delay_ms: 1000, next_allowed_at: T - 5000 });
    assert.equal(readyAt(dead, T), T + 900, 'the host delay runs from the end of the lease');
    assert.equal(readyAt({ ...dead, lease_confirmed: false }, T), 0, 'an unconfirmed grant made no request');
    assert.equal(readyAt({ ...dead, lease_id: null }, T), 0, 'a released lease paces from its release');
    const { result } = decideAcquire(dead, HOST, T, { leaseId: 'me', leaseMs: 60_000, seq: 0 });
    assert.deepEqual(result, { acquired: false, retryAt: T + 900, reason: 'host delay' });
  });

  test('effectiveCursor rewinds only for a lapsed lease no fetcher confirmed', () => {
    const lapsed = slot({ cursor: 9, lease_id: 'x', lease_seq: 9, lease_until: T - 1, lease_confirmed: false });
    assert.equal(effectiveCursor(lapsed, T), 8);
    assert.equal(effectiveCursor({ ...lapsed, lease_confirmed: true }, T), 9);
    assert.equal(effectiveCursor({ ...lapsed, lease_until: T + 1 }, T), 9);
    assert.equal(effectiveCursor({ ...lapsed, lease_seq: 0 }, T), 9);
  });

  test("a grant in another lane keeps a lapsed unconfirmed grant's URL at the head of its own lane", () => {
    // lane 'h' had its URL 9 granted, never confirmed (the gate died before publishing); lane '' is served next
    const lapsed = slot({ cursor: 4, cursors: { h: 9 }, lease_id: 'x', lease_seq: 9, lease_lane: 'h', lease_until: T - 1, lease_confirmed: false });
    const { next, result } = decideAcquire(lapsed, HOST, T, { leaseId: 'me', leaseMs: 60_000, seq: 5, lane: '' });
    assert.equal(result.acquired, true);
    assert.equal(next!.cursor, 5);
    assert.equal(effectiveCursor(next!, T, 'h'), 8, 'URL 9 of lane h is served again, not skipped');
    // the same URL granted again moves its lane past it as before
    const again = decideAcquire(lapsed, HOST, T, { leaseId: 'me', leaseMs: 60_000, seq: 9, lane: 'h' }).next!;
    assert.equal(effectiveCursor(again, T, 'h'), 9);
  });
});

/** A store where the gate granted the host to `leaseId` for the URL at `seq`. */
async function leasedTo(leaseId: string, seq: number): Promise<MemoryKvStore> {
  const store = new MemoryKvStore();
  const { next } = decideAcquire(null, HOST, T, { leaseId, leaseMs: 1000, seq });
  await store.create(HOST, new TextEncoder().encode(JSON.stringify(next)));
  return store;
}

describe('host slot: lease life cycle in KV', () => {
  test('confirm extends and marks the lease; release frees it, records it done and moves the cursor', async () => {
    const store = await leasedTo('L1', 3);
    assert.equal(await confirmLease(store, HOST, 'L1', T + 10, 5000), 'ours');
    assert.equal(await confirmLease(store, HOST, 'L1', T + 20, 5000), 'resumed', 'a second confirm: a request may already have been made');
    assert.equal(await confirmLease(store, HOST, 'other', T + 10, 5000), 'lost');
    const released = await releaseSlot(store, HOST, 'L1', T + 100, { kind: 'ok', durationMs: 90, baseDelayMs: 500 }, PACING);
    assert.equal(released.lease_id, null);
    assert.equal(released.cursor, 3);
    assert.equal(released.next_allowed_at, T + 100 + 500);
    assert.equal(await confirmLease(store, HOST, 'L1', T + 200, 5000), 'done', 'a redelivered grant is recognised');
    assert.equal(await confirmLease(store, HOST, 'L1', T + 5000, 5000), 'done');
  });

  test('a confirmed lease that lapsed is still its grant\'s ("resumed") until another grant takes the host; an unconfirmed one is lost', async () => {
    const store = await leasedTo('L1', 3);
    assert.equal(await confirmLease(store, HOST, 'L1', T + 10, 500), 'ours');
    assert.equal(await confirmLease(store, HOST, 'L1', T + 30_000, 500), 'resumed', 'its fetcher died: the request counts as unrecorded');
    const unconfirmed = await leasedTo('L2', 3);
    assert.equal(await confirmLease(unconfirmed, HOST, 'L2', T + 30_000, 500), 'lost');
  });

  test('a grant whose publish seemed to fail but landed: the give-back leaves a confirmed lease alone', async () => {
    const store = await leasedTo('L1', 3);
    assert.equal(await confirmLease(store, HOST, 'L1', T + 10, 5000), 'ours');
    await undoAcquire(store, HOST, 'L1', 3);
    const after = (await readSlot(store, HOST))!;
    assert.equal(after.lease_id, 'L1', 'the fetch under way keeps its lease');
    assert.equal(after.cursor, 3, 'its URL is not put back in the queue');
    const unconfirmed = await leasedTo('L2', 3);
    await undoAcquire(unconfirmed, HOST, 'L2', 3);
    assert.equal((await readSlot(unconfirmed, HOST))!.cursor, 2, 'an unconfirmed grant is given back');
  });

  test('the gate holding a completed lease again (its URL served twice): the grant is done and the host is freed', async () => {
    const store = await leasedTo('L1', 3);
    assert.equal(await confirmLease(store, HOST, 'L1', T + 10, 5000), 'ours');
    await releaseSlot(store, HOST, 'L1', T + 100, { kind: 'ok', durationMs: 90, baseDelayMs: 500 }, PACING);
    // the same URL taken again under the same lease id, as after a rewind
    const slotNow = (await readSlot(store, HOST))!;
    await store.put(HOST, new TextEncoder().encode(JSON.stringify({ ...slotNow, lease_id: 'L1', lease_until: T + 70_000, lease_seq: 3, lease_confirmed: false })));
    assert.deepEqual(await confirmLeaseOf(store, HOST, 'L1', T + 1000, 5000), { check: 'done', seq: 3 });
    const freed = (await readSlot(store, HOST))!;
    assert.equal(freed.lease_id, null, 'no request is waited for');
    assert.equal(readyAt(freed, T + 1000), 0);
    assert.equal(freed.cursor, 3, 'the queue stays past the URL');
  });

  test('renewLease extends only a lease that is still ours and live', async () => {
    const store = await leasedTo('L1', 3);
    assert.equal(await confirmLease(store, HOST, 'L1', T + 10, 500), 'ours');
    assert.equal(await renewLease(store, HOST, 'L1', T + 400, T + 900), true);
    assert.equal((await readSlot(store, HOST))!.lease_until, T + 900);
    assert.equal(await renewLease(store, HOST, 'L1', T + 500, T + 700), true, 'a renewal never shortens');
    assert.equal((await readSlot(store, HOST))!.lease_until, T + 900);
    assert.equal(await renewLease(store, HOST, 'other', T + 500, T + 2000), false);
    assert.equal(await renewLease(store, HOST, 'L1', T + 900, T + 2000), false, 'a lapsed lease is not brought back');
    await releaseSlot(store, HOST, 'L1', T + 800, { kind: 'ok', durationMs: 90, baseDelayMs: 500 }, PACING);
    assert.equal(await renewLease(store, HOST, 'L1', T + 850, T + 2000), false, 'a released lease is not renewed');
  });
});

/**
 * A replicated bucket as a fetcher may see it: direct gets answered by a replica that has not
 * applied the gate's last write yet (`lagging` holds what it answers), reads from the leader
 * (`getLatest`) and every write by the real store.
 */
const withLaggingReplica = (store: MemoryKvStore, lagging: MemoryKvStore) =>
  withReads(
    store,
    (key) => lagging.get(key),
    (key) => store.get(key),
  );

describe('host slot: a replica that lags', () => {
  test('a grant read against a slot from before its lease is confirmed by the leader, not dropped as lost', async () => {
    const before = new MemoryKvStore();
    await before.create(HOST, new TextEncoder().encode(JSON.stringify(emptySlot(HOST))));
    const store = await leasedTo('L1', 3);
    assert.equal(await confirmLease(withLaggingReplica(store, before), HOST, 'L1', T + 10, 5000), 'ours');
    assert.equal(await confirmLease(withLaggingReplica(store, before), HOST, 'other', T + 20, 5000), 'lost', 'a lease that is not ours is still lost');
  });

  test('a leader this user may not read (permissions from before the check): the replica\'s answer stands', async () => {
    const before = new MemoryKvStore();
    await before.create(HOST, new TextEncoder().encode(JSON.stringify(emptySlot(HOST))));
    const store = await leasedTo('L1', 3);
    const denied = withReads(store, (key) => before.get(key), () => Promise.reject(new Error('Permissions Violation for Publish to "$JS.API.STREAM.MSG.GET.KV_crawl-hosts"')));
    assert.equal(await confirmLease(denied, HOST, 'L1', T + 10, 5000), 'lost');
  });
});

describe('host pacing (pure)', () => {
  const cases: Array<{ name: string; failures: number; fb: Parameters<typeof nextPacing>[1]; delay: number; failuresAfter: number; paused: boolean; decision: RegExp }> = [
    { name: 'fast healthy answer: the base delay', failures: 0, fb: { kind: 'ok', durationMs: 100, baseDelayMs: 1000 }, delay: 1000, failuresAfter: 0, paused: false, decision: /^$/ },
    { name: 'slow answer: factor x response time', failures: 0, fb: { kind: 'ok', durationMs: 2000, baseDelayMs: 1000 }, delay: 4000, failuresAfter: 0, paused: false, decision: /slow server \(2000 ms\): delay 4000 ms/ },
    { name: '429 with Retry-After: that long', failures: 0, fb: { kind: 'throttled', status: 429, retryAfterMs: 7000, durationMs: 5, baseDelayMs: 1000 }, delay: 7000, failuresAfter: 1, paused: false, decision: /Retry-After 7000 ms honoured/ },
    { name: 'Retry-After above the maximum is clamped and says so', failures: 0, fb: { kind: 'throttled', status: 503, retryAfterMs: 999_000, durationMs: 5, baseDelayMs: 1000 }, delay: 60_000, failuresAfter: 1, paused: false, decision: /clamped to 60000 ms/ },
    { name: '503 without Retry-After: backoff', failures: 0, fb: { kind: 'throttled', status: 503, retryAfterMs: null, durationMs: 5, baseDelayMs: 100 }, delay: 1000, failuresAfter: 1, paused: false, decision: /backing off 1000 ms \(1 failures in a row\)/ },
    { name: 'third 5xx in a row: 4x the base', failures: 2, fb: { kind: 'server_error', status: 500, durationMs: 5, baseDelayMs: 100 }, delay: 4000, failuresAfter: 3, paused: false, decision: /http 500: backing off 4000 ms/ },
    { name: 'fourth failure: paused, then one probe', failures: 3, fb: { kind: 'network_error', code: 'timeout', durationMs: 5, baseDelayMs: 100 }, delay: 300_000, failuresAfter: 4, paused: true, decision: /timeout: 4 failures in a row, host paused 300000 ms, then one probe/ },
    { name: 'success after failures: recovery is gradual', failures: 3, fb: { kind: 'ok', durationMs: 5, baseDelayMs: 100 }, delay: 2000, failuresAfter: 2, paused: false, decision: /recovering: 2 failures left/ },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const p = nextPacing({ failures: c.failures, paused_until: 0 }, c.fb, T, PACING, noJitter);
      assert.equal(p.next_allowed_at - T, c.delay);
      assert.equal(p.failures, c.failuresAfter);
      assert.equal(p.paused_until > 0, c.paused);
      assert.match(p.last_decision, c.decision);
    });
  }

  test('backoff doubles per failure, stays within ±20 % jitter and under the maximum', () => {
    for (let f = 1; f <= 10; f++) {
      const exact = Math.min(60_000, 1000 * 2 ** (f - 1));
      for (const r of [0, 0.5, 0.999]) {
        const b = backoffMs(f, PACING, () => r);
        assert.ok(b >= exact * 0.8 - 1 && b <= Math.min(60_000, exact * 1.2 + 1), `failure ${f}: ${b} vs ${exact}`);
      }
    }
  });

  test('Retry-After: seconds or an HTTP date; garbage is ignored', () => {
    assert.equal(parseRetryAfter('120', T), 120_000);
    assert.equal(parseRetryAfter(new Date(T + 30_000).toUTCString(), T), 30_000);
    assert.equal(parseRetryAfter(new Date(T - 30_000).toUTCString(), T), 0);
    assert.equal(parseRetryAfter('soon', T), null);
    assert.equal(parseRetryAfter(undefined, T), null);
  });
});

describe('per-IP slot', () => {
  test('decideIpAcquire: cap, expired leases free their place, a lease id is never counted twice', () => {
    const full = { ip: '198.51.100.1', leases: [{ id: 'a', until: T + 10 }, { id: 'b', until: T + 20 }] };
    assert.deepEqual(decideIpAcquire(full, full.ip, T, 'c', T + 100, 2).result, { acquired: false, retryAt: T + 10 });
    assert.equal(decideIpAcquire(full, full.ip, T + 15, 'c', T + 100, 2).result.acquired, true);
    assert.equal(decideIpAcquire(full, full.ip, T, 'a', T + 100, 2).result.acquired, true);
  });

  test('acquire and release in KV', async () => {
    const store = new MemoryKvStore();
    assert.deepEqual(await acquireIp(store, '198.51.100.1', T, 'a', T + 1000, 1), { acquired: true });
    assert.equal((await acquireIp(store, '198.51.100.1', T, 'b', T + 1000, 1)).acquired, false);
    await releaseIp(store, '198.51.100.1', 'a', T + 5);
    assert.deepEqual(await acquireIp(store, '198.51.100.1', T + 6, 'b', T + 1000, 1), { acquired: true });
  });
});

describe('host slot: a release that does not complete the lease', () => {
  test('frees the host and paces it, but a redelivered grant finds the lease lost (back to the gate), not done', async () => {
    const store = await leasedTo('L1', 3);
    assert.equal(await confirmLease(store, HOST, 'L1', T + 10, 5000), 'ours');
    const throttled = { kind: 'throttled', status: 429, retryAfterMs: 2000, durationMs: 90, baseDelayMs: 500 } as const;
    const released = await releaseSlot(store, HOST, 'L1', T + 100, throttled, PACING, Math.random, false);
    assert.equal(released.lease_id, null);
    assert.equal(released.next_allowed_at, T + 100 + 2000);
    assert.deepEqual(released.done_leases, []);
    assert.equal(await confirmLease(store, HOST, 'L1', T + 1100, 5000), 'lost');
  });
});

describe('host turn: a confirmed turn kept alive while its request runs', () => {
  test('keepTurn renews the lease a third of the way before it lapses, up to `latest`, and stops when told', async () => {
    const ctx = createFakeContext({ now: T });
    const lease: HostLease = { host: HOST, leaseId: 'L1', ip: null };
    const { next } = decideAcquire(null, HOST, T, { leaseId: 'L1', leaseMs: 1000, seq: 3 });
    await ctx.kv.hosts.create(HOST, new TextEncoder().encode(JSON.stringify(next)));
    assert.equal(await confirmTurn(ctx, 'fetch', lease, 300), 'ours');
    const until = async () => (await readSlot(ctx.kv.hosts, HOST))!.lease_until;
    assert.equal(await until(), T + 300);

    const kept = keepTurn(ctx, lease, 300, T + 900);
    ctx.clock.advance(200);
    await sleep(250);
    assert.equal(await until(), T + 500, 'renewed to a lease ahead of now');
    ctx.clock.advance(200);
    await sleep(250);
    assert.equal(await until(), T + 700);
    ctx.clock.advance(250);
    await sleep(250);
    assert.equal(await until(), T + 900, 'never past `latest`: a handling that never ends cannot hold the host');
    kept.stop();

    // stopped: a fetcher that dies now holds the host until the lease lapses, and no longer
    const again = keepTurn(ctx, lease, 300, T + 5000);
    again.stop();
    ctx.clock.advance(100);
    await sleep(250);
    assert.equal(await until(), T + 900, 'no renewal after stop()');
  });
});
