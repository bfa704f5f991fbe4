/**
 * `npm run bench:neardup`: the near-duplicate index measured.
 *  1. Precision and recall at k = 1..6 on generated pairs with known edit sizes (ground
 *     truth: near-duplicate iff at most 2 % of the words were edited), and the SimHash
 *     distance per edit size.
 *  2. Lookups per second with 1,000,000 fingerprints stored: the same code over the
 *     in-memory KV and over a real nats-server KV bucket (32 lookups in flight, the simhash
 *     stage's default concurrency); medians of 3 runs. Then the cost of adding a page
 *     (add, then find the original) into that full bucket.
 *  3. What the per-key bound costs: with the bound scaled down so that keys overflow at a
 *     million pages, the recall for near-duplicates of the oldest and of the newest pages.
 * Knobs: NEARDUP_STORED (1000000), NEARDUP_PAIRS_PER_SIZE (100), NEARDUP_SEED (1).
 */
import { MemoryKvStore } from './support/memory-kv-store.js';
import { MAX_ENTRIES_PER_KEY } from '../stages/simhash/spec.js';
import { measureAddCost } from './near-dup-add-cost.js';
import { startFingerprintBucket } from './near-dup-nats.js';
import { editSizeTable, fingerprintPairs, measureQuality, NEAR_DUPLICATE_MAX_EDIT_FRACTION } from './near-dup-quality.js';
import { randomFingerprints } from './near-dup-add-cost.js';
import { buildLists, encodeLists, K, listStats, loadLists, measureLookups, recallIn, storedPages } from './near-dup-speed.js';

const STORED = Number(process.env.NEARDUP_STORED ?? 1_000_000);
const PAIRS_PER_SIZE = Number(process.env.NEARDUP_PAIRS_PER_SIZE ?? 100);
const SEED = Number(process.env.NEARDUP_SEED ?? 1);
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const int = (x: number) => Math.round(x).toLocaleString('en-US');
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;

console.log(`# near-duplicate index bench (seed ${SEED})\n`);

// 1. quality
const pairs = fingerprintPairs(SEED, PAIRS_PER_SIZE);
console.log(`## Precision and recall: ${pairs.length} pairs, ground truth near-duplicate iff <= ${NEAR_DUPLICATE_MAX_EDIT_FRACTION * 100} % of words edited`);
console.log(`(${pairs.filter((p) => p.nearDuplicate).length} near-duplicate pairs; articles of 1000-3000 words in a shared page template; [${elapsed()}])\n`);
console.log('| k | TP | FP | FN | TN | precision | recall | variants matching another pair | index misses vs linear scan |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (let k = 1; k <= 6; k++) {
  const r = await measureQuality(pairs, k);
  console.log(`| ${k}${k === 3 ? ' (default)' : ''} | ${r.tp} | ${r.fp} | ${r.fn} | ${r.tn} | ${pct(r.precision)} | ${pct(r.recall)} | ${r.crossMatches} | ${r.indexErrors} |`);
}
console.log('\nSimHash distance per edit size (found at k=3 = distance <= 3):\n');
console.log('| words edited | pairs | labelled near-duplicate | found at k=3 | median distance | min | max |');
console.log('|---|---|---|---|---|---|---|');
for (const r of editSizeTable(pairs)) {
  console.log(`| ${r.editedWords} | ${r.pairs} | ${r.labelledNear} | ${r.foundAtK3} (${pct(r.foundAtK3 / r.pairs)}) | ${r.medianDistance} | ${r.minDistance} | ${r.maxDistance} |`);
}

// 2. lookups with a million stored
console.log(`\n## Lookups with ${int(STORED)} fingerprints stored (k=${K}, uniform random fingerprints) [${elapsed()}]\n`);
const fps = randomFingerprints(SEED, STORED);
const pages = storedPages(fps);
let lists = buildLists(pages, MAX_ENTRIES_PER_KEY);
const stats = listStats(lists, MAX_ENTRIES_PER_KEY);
console.log(`index: ${int(stats.keys)} keys, ${stats.meanLength.toFixed(1)} entries per key on average, longest ${stats.maxLength}, ` +
  `${stats.fullKeys} keys at the bound of ${MAX_ENTRIES_PER_KEY} (so nothing evicted, recall loss 0)`);
let values = encodeLists(lists);
lists.clear();
{
  const memory = new MemoryKvStore();
  await loadLists(memory, values, 1);
  const r = await measureLookups(memory, fps, { n: 30_000, concurrency: 1, seed: SEED });
  console.log(`in memory (MemoryKvStore, same findWithin code): ${int(r.lookupsPerSecond)} lookups/s ` +
    `(median of ${r.runs.map(int).join(', ')}; one at a time), targets found ${pct(r.foundFraction)} [${elapsed()}]`);
}
const kv = await startFingerprintBucket();
try {
  const seconds = await loadLists(kv.store, values, 256);
  values = [];
  console.log(`nats-server KV: loaded ${int(stats.keys)} keys in ${seconds.toFixed(1)} s (256 puts in flight) [${elapsed()}]`);
  const r = await measureLookups(kv.store, fps, { n: 10_000, concurrency: 32, seed: SEED + 1 });
  console.log(`nats-server KV: ${int(r.lookupsPerSecond)} lookups/s with 32 in flight (median of ${r.runs.map(int).join(', ')}), targets found ${pct(r.foundFraction)}`);
  const one = await measureLookups(kv.store, fps, { n: 1_000, concurrency: 1, seed: SEED + 2 });
  console.log(`nats-server KV: ${(1000 / one.lookupsPerSecond).toFixed(2)} ms per lookup one at a time (median of 3 runs of 1,000)`);
  const add = await measureAddCost(kv.store, SEED, { sequential: 300, concurrent: 3000, concurrency: 32 });
  console.log(`nats-server KV: adding a page to the SimHash index (add, then find its original): ${add.sequentialMsPerPage.toFixed(2)} ms one at a time, ` +
    `${int(add.concurrentPagesPerSecond)} pages/s with 32 in flight (medians of 3 runs) [${elapsed()}]`);
} finally {
  await kv.close();
}

// 3. the bound's recall cost, scaled down
console.log(`\n## The per-key bound's recall cost (${int(STORED)} pages, bound scaled down so keys overflow) [${elapsed()}]\n`);
console.log('| bound per key | keys at the bound | recall, near-duplicates of the oldest 10 % | of the newest 10 % |');
console.log('|---|---|---|---|');
for (const bound of [16, 8]) {
  lists = buildLists(pages, bound);
  const s = listStats(lists, bound);
  const tenth = Math.floor(STORED / 10);
  const oldest = recallIn(lists, fps, 20_000, SEED + 3, 0, tenth);
  const newest = recallIn(lists, fps, 20_000, SEED + 4, STORED - tenth, STORED);
  console.log(`| ${bound} | ${pct(s.fullKeys / s.keys)} | ${pct(oldest)} | ${pct(newest)} |`);
}
console.log(`\ndone in ${elapsed()}`);
