import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RevisitPolicy, type RevisitState } from '../../schemas/index.js';
import { changeRatePerDay, estimatedInterval, nextRevisit, sitemapHintMs } from '../../stages/shared/revisits/revisit-policy.js';
import { revisitNote } from '../../stages/shared/revisits/revisit-emit.js';

const policy = RevisitPolicy.parse({ strategy: 'multiplicative', initial: '10s', min: '2s', max: '60s', increase: 0.5, decrease: 0.5 });
const NOW = 1_000_000;
const stateAt = (interval: number): RevisitState => ({ interval_ms: interval, digest: 'd', simhash: '0000000000000000', fetched_at: 1e6 - interval, due_at: 1e6 });
const state = (interval: number, digest: string | null, simhash: string | null = 'ffffffffffffffff'): RevisitState => ({ interval_ms: interval, digest, simhash, fetched_at: NOW - interval, due_at: NOW });

describe('adaptive revisits (multiplicative, and what both strategies share)', () => {
  test('the first fetch waits the initial interval, or the hint when there is one (within min and max)', () => {
    assert.equal(nextRevisit(policy, undefined, { kind: 'page', digest: 'd1', simhash: '0' }, NOW)!.interval_ms, 10_000);
    assert.equal(nextRevisit(policy, undefined, { kind: 'page', digest: 'd1', simhash: '0' }, NOW, { hintMs: 30_000 })!.interval_ms, 30_000);
    assert.equal(nextRevisit(policy, undefined, { kind: 'page', digest: 'd1', simhash: '0' }, NOW, { hintMs: 1 })!.interval_ms, 2000, 'clamped to min');
  });

  for (const [what, prev, result, interval, changed] of [
    ['same digest: unchanged, interval × 1.5', state(10_000, 'd1'), { kind: 'page', digest: 'd1', simhash: 'ffffffffffffffff' }, 15_000, false],
    ['a 304: unchanged', state(10_000, 'd1'), { kind: 'not_modified' }, 15_000, false],
    ['another digest, SimHash 2 bits away: a trivial change, unchanged', state(10_000, 'd1'), { kind: 'page', digest: 'd2', simhash: 'fffffffffffffffc' }, 15_000, false],
    ['another digest, SimHash far away: changed, interval × 0.5', state(10_000, 'd1'), { kind: 'page', digest: 'd2', simhash: '0000000000000000' }, 5000, true],
    ['a failure: later, like unchanged', state(10_000, 'd1'), { kind: 'failed' }, 15_000, undefined],
    ['never above max', state(50_000, 'd1'), { kind: 'not_modified' }, 60_000, false],
    ['never below min', state(3000, 'd1'), { kind: 'page', digest: 'd2', simhash: '0000000000000000' }, 2000, true],
  ] as const) {
    test(what, () => {
      const next = nextRevisit(policy, prev, result, NOW)!;
      assert.equal(next.interval_ms, interval);
      assert.equal(next.due_at, NOW + interval);
      assert.equal(next.changed, changed);
    });
  }

  test('a 304 keeps the digest and validators of the copy it confirms; a new page brings its own', () => {
    const prev = { ...state(10_000, 'd1', 'aaaaaaaaaaaaaaaa'), etag: '"v1"', last_modified: 'Mon, 01 Jan 2026 00:00:00 GMT' };
    const kept = nextRevisit(policy, prev, { kind: 'not_modified' }, NOW)!;
    assert.deepEqual([kept.digest, kept.simhash, kept.etag, kept.last_modified], ['d1', 'aaaaaaaaaaaaaaaa', '"v1"', 'Mon, 01 Jan 2026 00:00:00 GMT']);
    const fresh = nextRevisit(policy, prev, { kind: 'page', digest: 'd2', simhash: '0000000000000000' }, NOW, { etag: '"v2"', lastModified: null })!;
    assert.deepEqual([fresh.digest, fresh.etag, fresh.last_modified], ['d2', '"v2"', null]);
  });

  test('a redirect, a gone page or a refused address ends the revisits; so does a policy turned off', () => {
    assert.equal(nextRevisit(policy, state(10_000, 'd1'), { kind: 'stop' }, NOW), null);
    assert.equal(nextRevisit({ ...policy, enabled: false }, undefined, { kind: 'page', digest: 'd', simhash: '0' }, NOW), null);
  });

  test("a sitemap's changefreq or lastmod hints the first interval", () => {
    assert.equal(sitemapHintMs({ changefreq: 'daily' }, NOW), 86_400_000);
    assert.equal(sitemapHintMs({ lastmod: NOW - 3 * 86_400_000 }, NOW), 3 * 86_400_000);
    assert.equal(sitemapHintMs({ lastmod: NOW + 1000 }, NOW), null, 'a future lastmod says nothing');
    assert.equal(sitemapHintMs({}, NOW), null);
  });

  test("a stored page's fetch_log reason says what its revisit found and when it is due again", () => {
    const prev = state(10_000, 'd1');
    const changed = nextRevisit(policy, prev, { kind: 'page', digest: 'd2', simhash: '0000000000000000' }, NOW)!;
    assert.equal(revisitNote(prev, changed), `revisit: changed since the fetch of ${new Date(NOW - 10_000).toISOString()}; next in 5 s`);
    const same = nextRevisit(policy, prev, { kind: 'page', digest: 'd1', simhash: 'ffffffffffffffff' }, NOW)!;
    assert.match(revisitNote(prev, same), /^revisit: unchanged since the fetch of .*; next in 15 s$/);
    assert.equal(revisitNote(undefined, nextRevisit(policy, undefined, { kind: 'page', digest: 'd1', simhash: '0' }, NOW)!), 'next revisit in 10 s');
  });
});

describe('adaptive revisits (estimate, the default)', () => {
  const estimate = RevisitPolicy.parse({ initial: '10s', min: '1s', max: '10m' });
  /** Revisits of a page that changes every `periodMs` (never: null), as the policy schedules them; the intervals it chose. */
  function follow(periodMs: number | null, checks = 80): number[] {
    const version = (t: number) => (periodMs === null ? 0 : Math.floor((t + 333) / periodMs));
    let t = 0;
    let state = nextRevisit(estimate, undefined, { kind: 'page', digest: 'v0', simhash: '0000000000000000' }, t)!;
    const intervals: number[] = [];
    for (let i = 0; i < checks; i++) {
      t = state.due_at;
      const v = version(t);
      state = nextRevisit(estimate, state, { kind: 'page', digest: `v${v}`, simhash: createHash('sha256').update(`v${v}`).digest('hex').slice(0, 16) }, t)!;
      intervals.push(state.interval_ms);
    }
    return intervals;
  }
  const settled = (xs: number[]) => xs.slice(-20).sort((a, b) => a - b)[10]!;

  test('the default strategy is the estimate', () => assert.equal(RevisitPolicy.parse({}).strategy, 'estimate'));

  test('a page changing 8 times as often is revisited about twice as often (the cube root), not 8 times', () => {
    const fast = settled(follow(5_000));
    const slow = settled(follow(40_000));
    const ratio = slow / fast;
    assert.ok(ratio > 1.5 && ratio < 3, `intervals ${fast} ms and ${slow} ms: ratio ${ratio.toFixed(2)}`);
    assert.ok(fast < 10_000 && slow > 10_000, 'faster than the reference: sooner than initial; slower: later');
  });

  test('a page that never changes backs off, at most doubling at a time, to where ten unchanged checks leave it (~4.7 × initial); one changing at every check settles sooner than initial', () => {
    const never = follow(null);
    assert.ok(never.at(-1)! > 40_000 && never.at(-1)! < 55_000, `settled at ${never.at(-1)} ms`);
    assert.equal(nextRevisit({ ...estimate, max: '30s' }, { ...stateAt(never.at(-1)!), checks: 10, changes: 0, observed_ms: 450_000 }, { kind: 'not_modified' }, 1e6)!.interval_ms, 30_000, 'within max');
    for (let i = 1; i < never.length; i++) assert.ok(never[i]! <= 2 * never[i - 1]! + 1, `step ${i}: ${never[i - 1]} -> ${never[i]}`);
    // a change seen at every check says only that the page changes at least that often
    const always = settled(follow(100));
    assert.ok(always > 4000 && always < 7000, `settled at ${always} ms`);
  });

  test('the evidence is carried and decays; a failure keeps it and backs off', () => {
    const first = nextRevisit(estimate, undefined, { kind: 'page', digest: 'd1', simhash: '0' }, 0)!;
    const second = nextRevisit(estimate, first, { kind: 'not_modified' }, 10_000)!;
    assert.deepEqual([second.checks, second.changes, second.observed_ms], [1, 0, 10_000]);
    const third = nextRevisit(estimate, second, { kind: 'page', digest: 'd2', simhash: 'ffffffffffffffff' }, 30_000)!;
    assert.deepEqual([third.checks, third.changes, third.observed_ms], [1.9, 1, 29_000]);
    const failed = nextRevisit(estimate, third, { kind: 'failed' }, 40_000)!;
    assert.deepEqual([failed.checks, failed.changes], [1.9, 1]);
    assert.equal(failed.interval_ms, Math.round(third.interval_ms * 1.5));
    assert.equal(estimatedInterval({}, 7000), 7000, 'no evidence: the reference');
  });

  test('the change estimate rows record is the same rate, per day; none without evidence', () => {
    assert.equal(changeRatePerDay({}), null);
    assert.equal(changeRatePerDay({ checks: 0, changes: 0, observed_ms: 0 }), null);
    // one change in two daily checks: -ln(1 - 1.5 / 3) per day
    assert.ok(Math.abs(changeRatePerDay({ checks: 2, changes: 1, observed_ms: 2 * 86_400_000 })! - Math.LN2) < 1e-9);
    // the interval the schedule asks for follows from that rate (reference 1 d: the cube root of 1 / rate days)
    const rate = changeRatePerDay({ checks: 2, changes: 1, observed_ms: 2 * 86_400_000 })!;
    assert.ok(Math.abs(estimatedInterval({ checks: 2, changes: 1, observed_ms: 2 * 86_400_000 }, 86_400_000) - 86_400_000 * Math.cbrt(1 / rate)) < 1);
    // never changed in ten checks: small, above zero
    const still = changeRatePerDay({ checks: 10, changes: 0, observed_ms: 10 * 86_400_000 })!;
    assert.ok(still > 0 && still < 0.1, String(still));
  });
});
