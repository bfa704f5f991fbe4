import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RevisitPolicy, type RevisitState } from '../../schemas/index.js';
import { nextRevisit, sitemapHintMs } from '../../stages/shared/revisits/revisit-policy.js';
import { revisitNote } from '../../stages/shared/revisits/revisit-emit.js';

const policy = RevisitPolicy.parse({ initial: '10s', min: '2s', max: '60s', increase: 0.5, decrease: 0.5 });
const NOW = 1_000_000;
const state = (interval: number, digest: string | null, simhash: string | null = 'ffffffffffffffff'): RevisitState => ({ interval_ms: interval, digest, simhash, fetched_at: NOW - interval, due_at: NOW });

describe('adaptive revisits', () => {
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
    ['a failure: later, like unchanged', state(10_000, 'd1'), { kind: 'failed' }, 15_000, false],
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
