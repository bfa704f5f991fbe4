import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FIRST_SLICE_FALSE_POSITIVE_RATE, hashKey, ScalableBloomFilter } from '../../stages/seen-filter/bloom-filter.js';

const url = (i: number, kind = 'in') => `https://host${i % 997}.example.com/${kind}/${i}?q=${i * 7}`;

/** false positives among `probes` keys never added */
function falsePositives(f: ScalableBloomFilter, probes: number): number {
  let n = 0;
  for (let i = 0; i < probes; i++) if (f.has(hashKey(url(i, 'out')))) n += 1;
  return n;
}

describe('scalable Bloom filter', () => {
  test('at its planned size: 2 bytes per URL, no false negatives, false-positive rate near the stated 0.046 %', () => {
    const n = 200_000;
    const f = ScalableBloomFilter.create(n);
    for (let i = 0; i < n; i++) f.add(hashKey(url(i)));
    for (let i = 0; i < n; i++) assert.ok(f.has(hashKey(url(i))), `added URL ${i} must be found`);
    assert.equal(f.slices.length, 1);
    assert.equal(f.byteSize, n * 2);
    assert.ok(Math.abs(FIRST_SLICE_FALSE_POSITIVE_RATE - 0.00046) < 0.00001, `stated rate ${FIRST_SLICE_FALSE_POSITIVE_RATE}`);
    const probes = 1_000_000;
    const rate = falsePositives(f, probes) / probes;
    // 460 expected among a million probes; the tolerance is ~6 standard deviations
    assert.ok(rate > FIRST_SLICE_FALSE_POSITIVE_RATE * 0.4 && rate < FIRST_SLICE_FALSE_POSITIVE_RATE * 1.6, `measured rate ${rate}`);
  });

  test('a crawl 7 times the planned size grows slices: rate stays under twice the first slice’s, memory under 2.3 bytes per URL', () => {
    const planned = 20_000;
    const n = planned * 7;
    const f = ScalableBloomFilter.create(planned);
    for (let i = 0; i < n; i++) f.add(hashKey(url(i)));
    assert.equal(f.slices.length, 3, 'slices of 20k, 40k and 80k URLs');
    // a new URL that hits a false positive is not added (it counts as seen): ~0.05 % of them
    assert.ok(f.count <= n && f.count > n * 0.999, `${f.count} of ${n} added`);
    for (let i = 0; i < n; i += 7) assert.ok(f.has(hashKey(url(i))));
    assert.ok(f.byteSize / n < 2.3, `${f.byteSize / n} bytes per URL`);
    const bound = f.falsePositiveBound;
    assert.ok(bound < 2 * FIRST_SLICE_FALSE_POSITIVE_RATE, `bound ${bound}`);
    const probes = 1_000_000;
    const rate = falsePositives(f, probes) / probes;
    assert.ok(rate < bound * 1.5, `measured rate ${rate} against bound ${bound}`);
  });

  test('with 10 % headroom (a partition): one slice up to 110 % of the plan, 2 bytes per planned URL, 0.047 % then 0.093 %', () => {
    const planned = 100_000;
    const f = ScalableBloomFilter.create(planned, 1.1);
    assert.equal(f.byteSize, planned * 2);
    assert.equal(f.slices[0]!.hashes, 10);
    for (let i = 0; i < planned; i++) f.add(hashKey(url(i)));
    const atPlan = falsePositives(f, 1_000_000) / 1_000_000;
    assert.ok(atPlan > 0.00047 * 0.6 && atPlan < 0.00047 * 1.4, `at the planned size: ${atPlan}`);
    for (let i = planned; i < planned * 1.1 - 100; i++) f.add(hashKey(url(i)));
    assert.equal(f.slices.length, 1, 'no second slice yet');
    const over = falsePositives(f, 1_000_000) / 1_000_000;
    assert.ok(over > 0.00093 * 0.7 && over < 0.00093 * 1.3, `10 % over: ${over}`);
  });

  test('add reports whether the key was new', () => {
    const f = ScalableBloomFilter.create(1024);
    assert.equal(f.add(hashKey('https://a.example/')), true);
    assert.equal(f.add(hashKey('https://a.example/')), false);
    assert.equal(f.count, 1);
  });

  test('the hash is stable (snapshots depend on it)', () => {
    assert.deepEqual(hashKey('https://example.com/'), hashKey('https://example.com/'));
    assert.notDeepEqual(hashKey('https://example.com/a'), hashKey('https://example.com/b'));
    // a fixed value: changing hashKey breaks every stored snapshot (bump HASH_VERSION in snapshot-codec.ts)
    assert.deepEqual(hashKey('https://example.com/'), { h1: 2664613884, h2: 3789020604 });
  });
});
