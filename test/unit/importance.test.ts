import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainInlinks, importanceWeight, registrableDomainOfUrl } from '../../stages/shared/importance/domain-inlinks.js';
import { DomainImportance, domainImportanceOf } from '../../stages/politeness-gate/domain-importance.js';
import { ReadyHosts, type ReadyKey } from '../../stages/politeness-gate/ready-hosts.js';
import { HostScheduler } from '../../stages/politeness-gate/host-scheduler.js';
import { startHostScheduler } from '../../stages/politeness-gate/index.js';
import type { ServedTurn } from '../../stages/politeness-gate/serve-host.js';
import { handleSeenFilter } from '../../stages/seen-filter/handle.js';
import { PartitionSeenSet } from '../../stages/seen-filter/partition-seen-set.js';
import { decodeAdmittedBatch, type AdmittedUrl, type CandidateUrl } from '../../schemas/index.js';
import { createFakeContext, emitted, stageInput, type FakeContext } from '../support/fake-context.js';
import { RevisitPolicy } from '../../schemas/index.js';
import { importanceSpeedup, nextRevisit, MAX_IMPORTANCE_SPEEDUP } from '../../stages/shared/revisits/revisit-policy.js';

describe('importance estimate: in-links per registrable domain', () => {
  test('counts links from other domains, repeats included, and not a domain linking itself', () => {
    const inlinks = new DomainInlinks();
    inlinks.saw('http://www.a.test/', 'b.test');
    inlinks.saw('http://www.a.test/', 'b.test'); // the same page again (a repeat the seen set drops): another in-link
    inlinks.saw('http://news.c.test/x', 'b.test');
    inlinks.saw('http://shop.b.test/', 'b.test'); // within b.test
    inlinks.saw('http://b.test/', 'a.test');
    assert.equal(inlinks.count('b.test'), 3);
    assert.equal(inlinks.count('a.test'), 1);
    assert.equal(inlinks.count('never.test'), 0);
  });

  test('is bounded: past its size the domain linked to longest ago is forgotten', () => {
    const inlinks = new DomainInlinks(2);
    inlinks.saw('http://s.test/', 'a.test');
    inlinks.saw('http://s.test/', 'b.test');
    inlinks.saw('http://s.test/', 'a.test');
    inlinks.saw('http://s.test/', 'c.test'); // b.test was linked to longest ago
    assert.deepEqual(['a.test', 'b.test', 'c.test'].map((d) => inlinks.count(d)), [2, 0, 1]);
    assert.equal(inlinks.size, 2);
  });

  test("a source URL's domain is normalize's registrable domain (public suffixes, private ones, IPs)", () => {
    assert.equal(registrableDomainOfUrl('https://news.bbc.co.uk/a?b'), 'bbc.co.uk');
    assert.equal(registrableDomainOfUrl('https://alice.github.io/'), 'alice.github.io');
    assert.equal(registrableDomainOfUrl('http://d00042.test:8080/p1.html'), 'd00042.test');
    assert.equal(registrableDomainOfUrl('http://127.0.0.1:8080/'), '127.0.0.1');
  });

  test('the weight grows by halves: 1 for no in-links, about 11 for 1,000', () => {
    assert.equal(importanceWeight(0), 1);
    assert.equal(importanceWeight(1), 2);
    assert.equal(importanceWeight(3), 3);
    assert.ok(Math.abs(importanceWeight(1000) - 10.97) < 0.01);
  });
});

describe('seen-filter: each admitted URL carries its domain in-link count', () => {
  const keysOf = async (kv: FakeContext['kv']['hosts']) => {
    const keys: string[] = [];
    for await (const k of kv.keys()) keys.push(k);
    return keys;
  };
  const link = (source: string, url: string): CandidateUrl => {
    const host = new URL(url).hostname;
    return { v: 1, url, host, domain: host.split('.').slice(-2).join('.'), depth: 1, source_url: source, via: 'link' };
  };
  const sets = new WeakMap<FakeContext, PartitionSeenSet>();
  const run = (ctx: FakeContext, links: CandidateUrl[], streamSeq: number) => {
    let set = sets.get(ctx);
    if (!set) sets.set(ctx, (set = PartitionSeenSet.empty(10_000, 0)));
    return handleSeenFilter(stageInput(links, { streamSeq, subject: 'crawl.normalized.0' }), ctx, set);
  };
  const admitted = (out: Awaited<ReturnType<typeof run>>): AdmittedUrl[] =>
    emitted(out)
      .filter((e) => e.subject.startsWith('crawl.frontier'))
      .flatMap((e) => decodeAdmittedBatch(e.data));

  test("a page's links are all counted before its new URLs are stamped; a repeat still counts", async () => {
    const ctx = createFakeContext();
    const first = admitted(await run(ctx, [link('http://www.a.test/', 'http://b.test/1'), link('http://www.a.test/', 'http://b.test/2'), link('http://www.a.test/', 'http://www.a.test/p')], 1));
    assert.deepEqual(
      first.map((a) => [a.url, a.importance]),
      [
        ['http://b.test/1', 2],
        ['http://b.test/2', 2],
        ['http://www.a.test/p', undefined], // linked from its own domain only
      ],
    );
    // another domain's page links b.test/1 again (dropped as seen, counted) and a new b.test page
    const second = admitted(await run(ctx, [link('http://c.test/', 'http://b.test/1'), link('http://c.test/', 'http://b.test/3')], 2));
    assert.deepEqual(
      second.map((a) => [a.url, a.importance]),
      [['http://b.test/3', 4]],
    );
  });

  test("the gates hear a domain's count at each power of two (its key in the importance bucket), and the hosts bucket hears nothing", async () => {
    const ctx = createFakeContext();
    const written: number[] = [];
    for (let i = 1; i <= 9; i++) {
      await run(ctx, [link(`http://s${i}.test/`, `http://b.test/${i}`)], i);
      const e = await ctx.kv.importance.get('b.test');
      const n = e ? (JSON.parse(new TextDecoder().decode(e.value)) as { inlinks: number }).inlinks : 0;
      if (written.at(-1) !== n) written.push(n);
    }
    assert.deepEqual(written, [1, 2, 4, 8], 'written at 1, 2, 4 and 8 links, not between');
    assert.deepEqual(await keysOf(ctx.kv.hosts), [], "no write reaches the gates' watch of the host slots");
  });
});

describe("gate: a due host's turn weighs breadth by its domain's importance", () => {
  const note = (domain: string, inlinks: number) => new TextEncoder().encode(JSON.stringify({ domain, inlinks }));
  const key = (domainGrants: number, inlinks: number, depth = 1, at = 0): ReadyKey => ({ rank: 1, domainGrants, weight: importanceWeight(inlinks), depth, at });
  const order = (keys: Record<string, ReadyKey>): string[] => {
    const ready = new ReadyHosts((host) => keys[host]!, () => true, 30_000);
    for (const host of Object.keys(keys)) ready.add(host, 0, 0);
    const out: string[] = [];
    for (let t = ready.take(0); t; t = ready.take(0)) out.push(t.host);
    return out;
  };

  test('among domains never crawled, the most linked first; a crawled domain after a new one unless it is much more linked', () => {
    assert.deepEqual(
      order({
        unlinked: key(0, 0), // score 1
        cited: key(0, 7), // 1/4
        famous: key(0, 1023), // 1/11
        'famous-crawled': key(5, 1023), // 6/11: still before an unlinked new domain
        'cited-crawled': key(4, 7), // 5/4: after it
      }),
      ['famous', 'cited', 'famous-crawled', 'unlinked', 'cited-crawled'],
    );
  });

  test('high-priority work still goes first, and with equal scores the shallower URL', () => {
    assert.deepEqual(order({ deep: key(0, 0, 3), high: { ...key(9, 0), rank: 0 }, shallow: key(0, 0, 1), linked: key(0, 1, 5) }), ['high', 'linked', 'shallow', 'deep']);
  });

  test('the intake keeps the highest figure per domain, and knows the domain of a host not yet served', () => {
    const board = new DomainImportance();
    board.note('www.b.test', 'b.test', 3);
    board.note('shop.b.test', 'b.test', 1); // an older stamp does not lower it
    board.note('c.test', 'c.test', undefined);
    assert.equal(board.of('shop.b.test'), 3);
    assert.equal(board.of('other.b.test', 'b.test'), 3);
    assert.equal(board.of('c.test'), 0);
    assert.equal(board.of('unknown.test'), 0);
    board.noteDomain('c.test', 16); // the seen-filters' count, heard from the importance bucket
    board.noteDomain('b.test', 2);
    assert.deepEqual([board.of('c.test'), board.of('www.b.test')], [16, 3]);
  });

  test("a gate hears the seen-filters' counts through its watch of the importance bucket", async () => {
    const ctx = createFakeContext();
    await ctx.kv.importance.put('a.test', note('a.test', 4)); // written before the gate started
    const bg = await startHostScheduler(ctx, 4);
    try {
      await ctx.kv.importance.put('b.test', note('b.test', 32));
      const board = domainImportanceOf(ctx.kv.importance);
      for (let i = 0; i < 50 && board.of('www.b.test', 'b.test') === 0; i++) await sleep(20);
      assert.deepEqual([board.of('www.a.test', 'a.test'), board.of('www.b.test', 'b.test')], [4, 32]);
    } finally {
      await bg.stop();
    }
  });

  test('a gate that may not watch the importance bucket still starts, and hears the counts once it may', async () => {
    const ctx = createFakeContext();
    const watch = ctx.kv.importance.watch.bind(ctx.kv.importance);
    let refusals = 1;
    ctx.kv.importance.watch = async () => {
      if (refusals-- > 0) throw new Error('Permissions Violation for Publish to "$JS.API.CONSUMER.CREATE.KV_crawl-importance"');
      return watch();
    };
    const bg = await startHostScheduler(ctx, 4);
    try {
      await ctx.kv.importance.put('b.test', note('b.test', 8));
      const board = domainImportanceOf(ctx.kv.importance);
      for (let i = 0; i < 200 && board.of('www.b.test', 'b.test') === 0; i++) await sleep(20);
      assert.equal(board.of('www.b.test', 'b.test'), 8, 'heard from the watch opened on the retry');
    } finally {
      await bg.stop();
    }
  });

  test('with --no-importance, a gate does not watch the importance bucket', async () => {
    const ctx = createFakeContext({ settings: { importance: false } });
    const bg = await startHostScheduler(ctx, 4);
    try {
      await ctx.kv.importance.put('b.test', note('b.test', 32));
      await sleep(100);
      assert.equal(domainImportanceOf(ctx.kv.importance).of('www.b.test', 'b.test'), 0);
    } finally {
      await bg.stop();
    }
  });

  /** a timetable with one turn at a time, the first held open so that the others come due together */
  async function firstTurnsInOrder(settings: { importance: boolean }): Promise<string[]> {
    const ctx = createFakeContext({ settings });
    const turns: string[] = [];
    const open: Array<() => void> = [];
    const serve = async (_ctx: unknown, host: string): Promise<ServedTurn> => {
      turns.push(host);
      await new Promise<void>((resolve) => open.push(resolve));
      return { next: { kind: 'granted' }, level: 'n', domain: host, depth: 1 };
    };
    const scheduler = new HostScheduler(ctx, 1, serve);
    scheduler.start();
    try {
      scheduler.notify('hold.test');
      await sleep(30);
      // what the intake heard of these hosts' URLs (their domain's in-links)
      const board = domainImportanceOf(ctx.kv.importance);
      board.note('a.test', 'a.test', 0);
      board.note('b.test', 'b.test', 40);
      board.note('c.test', 'c.test', 2);
      // due one after the other (a first), so that with equal scores the one due longest goes first
      ['a.test', 'b.test', 'c.test'].forEach((h, i) => scheduler.notify(h, ctx.clock.now() + 1 + i));
      ctx.clock.advance(10);
      await sleep(30);
      for (let i = 0; i < 10 && open.length > 0; i++) {
        open.shift()!();
        await sleep(30);
      }
      return turns.slice(1);
    } finally {
      await scheduler.stop();
    }
  }

  test("hosts never served yet are ranked by what the intake heard of their domain's in-links", async () => {
    assert.deepEqual(await firstTurnsInOrder({ importance: true }), ['b.test', 'c.test', 'a.test']);
  });

  test('with --no-importance, by breadth alone (here: equal, so the one due longest first)', async () => {
    assert.deepEqual(await firstTurnsInOrder({ importance: false }), ['a.test', 'b.test', 'c.test']);
  });
});

describe('revisits: an important page comes due sooner, bounded', () => {
  const policy = RevisitPolicy.parse({ strategy: 'multiplicative', initial: '100s', min: '30s', max: '1000s', increase: 0.5, decrease: 0.5 });
  const page = { kind: 'page', digest: 'd1', simhash: '0000000000000000' } as const;

  test('the speedup grows with in-links, 1 for none, at most 4', () => {
    assert.equal(importanceSpeedup(undefined), 1);
    assert.equal(importanceSpeedup(0), 1);
    assert.equal(importanceSpeedup(7), 2);
    assert.ok(importanceSpeedup(1000) > 3.3 && importanceSpeedup(1000) < 3.32);
    assert.equal(importanceSpeedup(1e12), MAX_IMPORTANCE_SPEEDUP);
  });

  test("due sooner, never before the policy's min; the interval kept is the change rate's, so it does not compound", () => {
    const plain = nextRevisit(policy, undefined, page, 0)!;
    const linked = nextRevisit(policy, undefined, page, 0, { importance: 7 })!;
    const famous = nextRevisit(policy, undefined, page, 0, { importance: 1e9 })!;
    assert.deepEqual([plain.due_at, linked.due_at, famous.due_at], [100_000, 50_000, 30_000]);
    assert.equal(linked.interval_ms, 100_000);
    // unchanged at the next check: grows from 100 s (x1.5), then due in half of it again
    const next = nextRevisit(policy, linked, { kind: 'page', digest: 'd1', simhash: '0000000000000000' }, 50_000, { importance: 7 })!;
    assert.equal(next.interval_ms, 150_000);
    assert.equal(next.due_at, 50_000 + 75_000);
  });
});
