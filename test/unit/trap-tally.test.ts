import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJsonValue } from '../../pipeline/kv-store.js';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import {
  addPage,
  checkQueued,
  countNewUrls,
  decideNewUrl,
  judgeQueued,
  MAX_PATTERNS_PER_HOST,
  notePage,
  patternKey,
  tallyKey,
  type NewUrl,
  type TrapLimits,
  type TrapTally,
} from '../../stages/shared/traps/trap-tally.js';

const HOST = 'trap.example';
const OWNER = { crawl: 'c1', host: HOST };
const P = 'trap.example/cal/<n>/<n>/<n>';
const OFF: TrapLimits = { maxPagesPerHost: 0, maxUrlsPerPattern: 0, noveltyMinPages: 0, noveltyDuplicateShare: 0.8 };
/** a URL found on a page of its own pattern (the next day of a calendar day), and one found elsewhere (on a listing) */
const own = (pattern: string): NewUrl => ({ pattern, fromOwnPattern: true });
const listed = (pattern: string): NewUrl => ({ pattern, fromOwnPattern: false });
/** one new URL through countNewUrls */
const countNewUrl = async (store: MemoryKvStore, owner: typeof OWNER, pattern: string, limits: TrapLimits) => (await countNewUrls(store, owner, [own(pattern)], limits))[0]!;
const verdictName = (v: { admit: boolean; checkBeforeFetch?: true; defence?: string }) => (v.admit ? (v.checkBeforeFetch ? 'admit+check' : 'admit') : v.defence!);

/** feeds `n` new URLs of `pattern` through the decision; returns the verdicts' defences ('admit' when admitted, 'admit+check' when to be checked before the fetch) */
function feed(limits: TrapLimits, n: number, pattern = P, start: TrapTally | null = null, found: (p: string) => NewUrl = own): { tally: TrapTally | null; verdicts: string[] } {
  let tally = start;
  const verdicts: string[] = [];
  for (let i = 0; i < n; i++) {
    const { next, verdict } = decideNewUrl(tally, OWNER, found(pattern), limits);
    if (next) tally = next;
    verdicts.push(verdictName(verdict));
  }
  return { tally, verdicts };
}

describe('crawl traps: per-host budget', () => {
  test('URLs past the budget are dropped, and not counted', () => {
    const { tally, verdicts } = feed({ ...OFF, maxPagesPerHost: 3 }, 5);
    assert.deepEqual(verdicts, ['admit', 'admit', 'admit', 'trap_host_budget', 'trap_host_budget']);
    assert.equal(tally!.urls, 3);
  });
  test('the budget spans every pattern of the host', () => {
    const first = feed({ ...OFF, maxPagesPerHost: 2 }, 2, 'trap.example/a');
    const second = feed({ ...OFF, maxPagesPerHost: 2 }, 1, 'trap.example/b', first.tally);
    assert.deepEqual(second.verdicts, ['trap_host_budget']);
  });
  test('0 means no limit', () => {
    assert.ok(feed(OFF, 50).verdicts.every((v) => v === 'admit'));
  });
  test('the reason names the host and the budget', () => {
    const { tally } = feed({ ...OFF, maxPagesPerHost: 1 }, 1);
    const { verdict } = decideNewUrl(tally, OWNER, own(P), { ...OFF, maxPagesPerHost: 1 });
    assert.deepEqual(verdict, { admit: false, defence: 'trap_host_budget', detail: 'host trap.example reached its budget of 1 pages' });
  });
});

describe('crawl traps: per-pattern budget', () => {
  test('a pattern that keeps producing URLs stops being expanded; other patterns go on', () => {
    const limits = { ...OFF, maxUrlsPerPattern: 3 };
    const { tally, verdicts } = feed(limits, 4);
    assert.deepEqual(verdicts, ['admit', 'admit', 'admit', 'trap_pattern_budget']);
    assert.deepEqual(feed(limits, 1, 'trap.example/about.html', tally).verdicts, ['admit']);
    const { verdict } = decideNewUrl(tally, OWNER, own(P), limits);
    assert.deepEqual(verdict, { admit: false, defence: 'trap_pattern_budget', detail: `pattern ${P} produced 3 URLs` });
  });
  test('patterns kept per host are bounded; the smallest goes, a trap pattern stays', () => {
    const limits = { ...OFF, maxUrlsPerPattern: 5 };
    let { tally } = feed(limits, 5); // the trap pattern, at its budget
    for (let i = 0; i < MAX_PATTERNS_PER_HOST + 50; i++) tally = feed(limits, 1, `trap.example/w${'x'.repeat(i % 7)}/${String.fromCharCode(97 + (i % 26))}${i}`, tally).tally;
    assert.equal(Object.keys(tally!.patterns).length, MAX_PATTERNS_PER_HOST);
    assert.deepEqual(feed(limits, 1, P, tally).verdicts, ['trap_pattern_budget']);
  });
});

describe('crawl traps: a pattern past its budget', () => {
  const limits: TrapLimits = { ...OFF, maxUrlsPerPattern: 3, noveltyMinPages: 4, noveltyDuplicateShare: 0.75 };
  const PRODUCT = 'shop.example/product/<n>';

  test('its own pages lead only to drops; pages of other patterns (listings) to URLs queued and checked again before the fetch', () => {
    const { tally, verdicts } = feed(limits, 4);
    assert.deepEqual(verdicts, ['admit', 'admit', 'admit', 'trap_pattern_budget']);
    const listedPast = feed(limits, 2, P, tally, listed);
    assert.deepEqual(listedPast.verdicts, ['admit+check', 'admit+check']);
    assert.equal(listedPast.tally!.patterns[patternKey(P)]![0], 5, 'counted');
    assert.deepEqual(feed(limits, 1, P, listedPast.tally).verdicts, ['trap_pattern_budget'], 'and its own pages still lead only to drops');
  });

  test('a thousand products named by listing pages before the first one is fetched: all queued', () => {
    const { verdicts } = feed({ ...limits, maxUrlsPerPattern: 1000, maxPagesPerHost: 10_000 }, 5000, PRODUCT, null, listed);
    assert.equal(verdicts.filter((v) => v === 'admit').length, 1000);
    assert.equal(verdicts.filter((v) => v === 'admit+check').length, 4000);
  });

  test('with content novelty off nothing tells new pages from a trap\'s: the budget holds for every URL', () => {
    const { verdicts } = feed({ ...limits, noveltyMinPages: 0 }, 4, P, null, listed);
    assert.deepEqual(verdicts, ['admit', 'admit', 'admit', 'trap_pattern_budget']);
  });

  test('a pattern with near-duplicate pages: its URLs are checked again before the fetch, even within the budget', () => {
    let t = decideNewUrl(null, OWNER, listed(P), limits).next!;
    t = addPage(t, OWNER, P, false);
    assert.deepEqual(decideNewUrl(t, OWNER, listed(P), limits).verdict, { admit: true }, 'new pages only: nothing to check');
    t = addPage(t, OWNER, P, true);
    assert.deepEqual(decideNewUrl(t, OWNER, listed(P), limits).verdict, { admit: true, checkBeforeFetch: true });
  });

  test('checked before the fetch: dropped once the pattern\'s pages are mostly near-duplicates, fetched while they are new or too few to tell', () => {
    let t: TrapTally | null = null;
    for (let i = 0; i < 3; i++) t = addPage(t, OWNER, P, true);
    assert.deepEqual(judgeQueued(t, OWNER, P, limits), { admit: true }, '3 pages: too few to judge');
    t = addPage(t, OWNER, P, true);
    assert.deepEqual(judgeQueued(t, OWNER, P, limits), { admit: false, defence: 'trap_low_novelty', detail: `pattern ${P}: 4 of its 4 pages were near-duplicates` });
    let products: TrapTally | null = null;
    for (let i = 0; i < 100; i++) products = addPage(products, OWNER, PRODUCT, i % 10 === 0);
    assert.deepEqual(judgeQueued(products, OWNER, PRODUCT, limits), { admit: true }, '10 % near-duplicates');
    assert.deepEqual(judgeQueued(t, { crawl: 'c2', host: HOST }, P, limits), { admit: true }, 'another crawl\'s counts do not count');
  });

  test('checkQueued reads the host\'s tally from the store', async () => {
    const store = new MemoryKvStore();
    assert.deepEqual(await checkQueued(store, OWNER, P, limits), { admit: true }, 'no tally yet');
    for (let i = 0; i < 4; i++) await notePage(store, OWNER, P, true);
    assert.equal((await checkQueued(store, OWNER, P, limits)).admit, false);
  });
});

describe('crawl traps: content novelty', () => {
  const limits = { ...OFF, noveltyMinPages: 10, noveltyDuplicateShare: 0.8 };
  const withPages = (pages: number, dups: number): TrapTally => {
    let t: TrapTally | null = null;
    for (let i = 0; i < pages; i++) t = addPage(t, OWNER, P, i < dups);
    return t!;
  };
  test('a pattern with enough pages, mostly near-duplicates, is cut off', () => {
    const { verdict } = decideNewUrl(withPages(10, 8), OWNER, own(P), limits);
    assert.deepEqual(verdict, { admit: false, defence: 'trap_low_novelty', detail: `pattern ${P}: 8 of its 10 pages were near-duplicates` });
  });
  test('too few pages to judge, or enough unique ones: admitted', () => {
    assert.equal(decideNewUrl(withPages(9, 9), OWNER, own(P), limits).verdict.admit, true);
    assert.equal(decideNewUrl(withPages(10, 7), OWNER, own(P), limits).verdict.admit, true);
  });
  test('only the pattern of the duplicates is cut off', () => {
    assert.equal(decideNewUrl(withPages(20, 20), OWNER, own('trap.example/other'), limits).verdict.admit, true);
  });
  test('off when noveltyMinPages is 0', () => {
    assert.equal(decideNewUrl(withPages(20, 20), OWNER, own(P), OFF).verdict.admit, true);
  });
});

describe('crawl traps: the tally in KV', () => {
  test('a new crawl id starts from zero; the same crawl resumed goes on counting', async () => {
    const store = new MemoryKvStore();
    const limits = { ...OFF, maxPagesPerHost: 1 };
    assert.equal((await countNewUrl(store, OWNER, P, limits)).admit, true);
    assert.equal((await countNewUrl(store, OWNER, P, limits)).admit, false);
    assert.equal((await countNewUrl(store, { crawl: 'c2', host: HOST }, P, limits)).admit, true);
    await notePage(store, { crawl: 'c3', host: HOST }, P, true);
    const tally = parseJsonValue<TrapTally>((await store.get(tallyKey(HOST)))!.value);
    assert.deepEqual([tally.crawl, tally.urls, tally.patterns[patternKey(P)]], ['c3', 0, [0, 1, 1]]);
  });

  test('countNewUrl and notePage share one entry per host, under _b.<host>', async () => {
    const store = new MemoryKvStore();
    const limits = { ...OFF, maxPagesPerHost: 100, maxUrlsPerPattern: 2 };
    assert.deepEqual(await countNewUrl(store, OWNER, P, limits), { admit: true });
    await notePage(store, OWNER, P, true);
    assert.deepEqual(await countNewUrl(store, OWNER, P, limits), { admit: true });
    assert.equal((await countNewUrl(store, OWNER, P, limits)).admit, false);
    const entry = await store.get(tallyKey(HOST));
    const tally = parseJsonValue<TrapTally>(entry!.value);
    assert.equal(tally.urls, 2);
    assert.deepEqual(tally.patterns[patternKey(P)], [2, 1, 1]);
  });
  test('countNewUrls judges a batch in order as if one after the other, in one write', async () => {
    const store = new MemoryKvStore();
    const limits = { ...OFF, maxPagesPerHost: 3, maxUrlsPerPattern: 2 };
    const Q = '/q/*';
    assert.deepEqual((await countNewUrls(store, OWNER, [P, P, P, Q, Q].map(own), limits)).map((v) => (v.admit ? 'admit' : v.defence)), [
      'admit',
      'admit',
      'trap_pattern_budget',
      'admit',
      'trap_host_budget',
    ]);
    const entry = await store.get(tallyKey(HOST));
    assert.equal(entry!.revision, 1, 'one write');
    const tally = parseJsonValue<TrapTally>(entry!.value);
    assert.equal(tally.urls, 3);
    assert.deepEqual(await countNewUrls(store, OWNER, [own(Q)], limits), [{ admit: false, defence: 'trap_host_budget', detail: `host ${HOST} reached its budget of 3 pages` }]);
    assert.equal((await store.get(tallyKey(HOST)))!.revision, 1, 'nothing admitted: nothing written');
  });

  test('a batch past the table of patterns evicts as one URL after another would, and leaves the tally it was given as it was', async () => {
    const store = new MemoryKvStore();
    const limits = { ...OFF, maxUrlsPerPattern: 1000 };
    const patterns = Array.from({ length: MAX_PATTERNS_PER_HOST + 60 }, (_, i) => `${HOST}/p${i % 3}/${i}`);
    // a few patterns with more URLs, so the eviction has an order to keep
    const batch = [...patterns, ...patterns.slice(0, 20)].map(listed);
    await countNewUrls(store, OWNER, batch, limits);
    const stored = parseJsonValue<TrapTally>((await store.get(tallyKey(HOST)))!.value);
    let oneByOne: TrapTally | null = null;
    for (const url of batch) oneByOne = decideNewUrl(oneByOne, OWNER, url, limits).next ?? oneByOne;
    assert.deepEqual(stored, oneByOne);
    assert.equal(Object.keys(stored.patterns).length, MAX_PATTERNS_PER_HOST);

    const before = structuredClone(oneByOne);
    decideNewUrl(oneByOne, OWNER, listed(`${HOST}/new/pattern`), limits);
    addPage(oneByOne, OWNER, `${HOST}/another/pattern`, true);
    assert.deepEqual(oneByOne, before, 'the pure functions copy before they change');
  });

  test('concurrent writers lose no count', async () => {
    const store = new MemoryKvStore();
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? countNewUrl(store, OWNER, P, OFF) : notePage(store, OWNER, P, false))));
    const tally = parseJsonValue<TrapTally>((await store.get(tallyKey(HOST)))!.value);
    assert.deepEqual([tally.urls, ...tally.patterns[patternKey(P)]!], [20, 20, 20, 0]);
  });
});
