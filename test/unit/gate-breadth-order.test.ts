import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { HostScheduler, MAX_DEFER_MS } from '../../stages/politeness-gate/host-scheduler.js';
import type { ServedTurn } from '../../stages/politeness-gate/serve-host.js';
import { DomainTally } from '../../stages/politeness-gate/domain-tally.js';
import { ReadyHosts } from '../../stages/politeness-gate/ready-hosts.js';
import { BinaryHeap } from '../../stages/politeness-gate/binary-heap.js';
import { createFakeContext } from '../support/fake-context.js';

/** a.test's hosts are a1.a.test, a2.a.test…: the domain is what follows the first label */
const domainOf = (host: string) => host.slice(host.indexOf('.') + 1);
const settle = () => sleep(30);

/**
 * A gate timetable serving one host at a time; each turn grants one request for the host's
 * next URL (at `depthOf(host)`), and stays open until the test ends it (`release`).
 */
function oneTurnAtATime(depthOf: (host: string) => number = () => 1) {
  const ctx = createFakeContext();
  const turns: string[] = [];
  const open: Array<() => void> = [];
  const serve = async (_ctx: unknown, host: string): Promise<ServedTurn> => {
    turns.push(host);
    await new Promise<void>((resolve) => open.push(resolve));
    return { next: { kind: 'granted' }, level: 'n', domain: domainOf(host), depth: depthOf(host) };
  };
  const scheduler = new HostScheduler(ctx, 1, serve);
  scheduler.start();
  /** ends the open turns one by one, letting the next start, until none is left */
  const drain = async () => {
    for (let i = 0; i < 100 && open.length > 0; i++) {
      open.shift()!();
      await settle();
    }
  };
  return { ctx, scheduler, turns, drain };
}

describe('gate timetable: which due host goes first when turns are the limit', () => {
  test('the host of the domain granted fewest requests goes first (seed 003: breadth across domains)', async () => {
    const { scheduler, turns, drain } = oneTurnAtATime();
    try {
      // first round: each host's turn tells the timetable its domain; a.test gets 3 grants, b.test 1
      for (const h of ['a1.a.test', 'a2.a.test', 'a3.a.test', 'b1.b.test', 'c1.c.test']) scheduler.notify(h);
      await settle();
      await drain();
      assert.equal(turns.length, 5);
      assert.equal(scheduler.domains.count('a.test'), 3);
      turns.length = 0;
      // c.test is granted once more, so b.test and c.test stand at 1 and 2
      scheduler.domains.granted('c.test');
      for (const h of ['a1.a.test', 'a2.a.test', 'c1.c.test', 'b1.b.test']) scheduler.notify(h);
      await settle();
      await drain();
      // all four came due at once and were ranked: a.test's hosts in the order they came due
      assert.deepEqual(turns, ['b1.b.test', 'c1.c.test', 'a1.a.test', 'a2.a.test']);
    } finally {
      await scheduler.stop();
    }
  });

  test('within one domain, the host whose next URL is shallower goes first', async () => {
    const depth: Record<string, number> = { 'x.d.test': 3, 'y.d.test': 1, 'z.d.test': 2, 'w.d.test': 0 };
    const { scheduler, turns, drain } = oneTurnAtATime((h) => depth[h]!);
    try {
      for (const h of Object.keys(depth)) scheduler.notify(h);
      await settle();
      await drain();
      turns.length = 0;
      for (const h of ['w.d.test', 'x.d.test', 'z.d.test', 'y.d.test']) scheduler.notify(h);
      await settle();
      await drain();
      assert.deepEqual(turns, ['w.d.test', 'y.d.test', 'z.d.test', 'x.d.test']);
    } finally {
      await scheduler.stop();
    }
  });

  test(`a much-crawled domain is slowed, never starved: a host kept waiting ${MAX_DEFER_MS / 1000} s goes before better-ranked ones`, async () => {
    const { ctx, scheduler, turns, drain } = oneTurnAtATime();
    try {
      scheduler.notify('big.big.test');
      await settle();
      await drain();
      for (let i = 0; i < 50; i++) scheduler.domains.granted('big.test');
      turns.length = 0;
      scheduler.notify('hold.h.test'); // takes the only turn and keeps it
      await settle();
      scheduler.notify('big.big.test');
      await settle();
      ctx.clock.advance(MAX_DEFER_MS + 1);
      for (const h of ['n1.n1.test', 'n2.n2.test']) scheduler.notify(h);
      await settle();
      await drain();
      assert.deepEqual(turns, ['hold.h.test', 'big.big.test', 'n1.n1.test', 'n2.n2.test']);
    } finally {
      await scheduler.stop();
    }
  });
});

describe('domain tally', () => {
  test('counts grants per domain and forgets the one granted to longest ago past its bound', () => {
    const tally = new DomainTally(2);
    tally.granted('a.test');
    tally.granted('b.test');
    tally.granted('a.test');
    tally.granted('c.test'); // b.test was granted to longest ago
    assert.equal(tally.count('a.test'), 2);
    assert.equal(tally.count('b.test'), 0);
    assert.equal(tally.count('c.test'), 1);
    assert.equal(tally.size, 2);
  });
});

describe('due hosts waiting for a turn: memory follows the hosts, not how often they came due', () => {
  test('entries made stale by a host coming due again are dropped once they outnumber the current ones', () => {
    const currentAt = new Map<string, number>();
    const ready = new ReadyHosts(
      (_host, at) => ({ rank: 1, domainGrants: 0, weight: 1, depth: 0, at }),
      (host, at) => currentAt.get(host) === at,
      MAX_DEFER_MS,
    );
    const hosts = Array.from({ length: 100 }, (_, i) => `h${i}.test`);
    let peak = 0;
    for (let round = 1; round <= 500; round++) {
      for (const host of hosts) {
        currentAt.set(host, round);
        ready.add(host, round, 0);
        peak = Math.max(peak, ready.size);
      }
    }
    // 50,000 arrivals of 100 hosts: without dropping, 50,000 entries
    assert.ok(peak <= 2 * hosts.length + 1024 + 1, `at most ${peak} entries held`);
    const served: string[] = [];
    for (let t = ready.take(0); t; t = ready.take(0)) {
      assert.equal(t.at, currentAt.get(t.host), 'only a current entry is served');
      served.push(t.host);
    }
    assert.deepEqual(served.sort(), [...hosts].sort(), 'each waiting host is served once');
  });

  test('a heap keeps its order when entries are dropped from it', () => {
    const heap = new BinaryHeap<number>((a, b) => a < b);
    const values = Array.from({ length: 1000 }, (_, i) => (i * 7919) % 1000);
    for (const v of values) heap.push(v);
    heap.retain((v) => v % 3 !== 0);
    const popped: number[] = [];
    for (let v = heap.pop(); v !== undefined; v = heap.pop()) popped.push(v);
    assert.deepEqual(popped, values.filter((v) => v % 3 !== 0).sort((a, b) => a - b));
  });
});
