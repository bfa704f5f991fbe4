/**
 * Cost of adding one page to the near-duplicate index (add, then find its original) in a
 * real nats-server KV: latency one page at a time, and pages per second with 32 pages in
 * flight (the simhash stage's default concurrency). Random fingerprints, so keys rarely
 * collide: this is the round-trip cost, not contention. Medians of 3 runs.
 * Standalone: `node dist/bench/near-dup-add-cost.js`; also part of `npm run bench:neardup`.
 */
import { pathToFileURL } from 'node:url';
import type { KvStore } from '../ports/kv.js';
import { addAndFindOriginal } from '../stages/simhash/fingerprint-index.js';
import { simhashToHex } from '../stages/shared/content-identity/simhash.js';
import { mulberry32 } from '../testweb/prng.js';
import { startFingerprintBucket } from './near-dup-nats.js';
import { median } from './stats.js';


export function randomFingerprints(seed: number, n: number): bigint[] {
  const rng = mulberry32(seed);
  const out: bigint[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = (BigInt(Math.floor(rng() * 2 ** 32)) << 32n) | BigInt(Math.floor(rng() * 2 ** 32));
  return out;
}

/** Runs `task(i)` for i in [0, n) with at most `concurrency` in flight. */
export async function pool(n: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
}

export interface AddCost {
  sequentialMsPerPage: number;
  concurrentPagesPerSecond: number;
}

export async function measureAddCost(store: KvStore, seed: number, opts = { sequential: 300, concurrent: 5000, concurrency: 32 }): Promise<AddCost> {
  const k = 3;
  let page = 0;
  const add = (h: bigint) => {
    const i = page++;
    return addAndFindOriginal(store, { h: simhashToHex(h), url: `https://h${i % 1000}.bench.test/add/${seed}/${i}`, t: i }, k);
  };
  const rates: number[] = [];
  const latencies: number[] = [];
  for (let run = 0; run < 3; run++) {
    const fps = randomFingerprints(seed * 10 + run, opts.concurrent);
    const start = performance.now();
    await pool(fps.length, opts.concurrency, (i) => add(fps[i]!));
    rates.push(fps.length / ((performance.now() - start) / 1000));
  }
  for (let run = 0; run < 3; run++) {
    const fps = randomFingerprints(seed * 10 + 5 + run, opts.sequential);
    const start = performance.now();
    for (const h of fps) await add(h);
    latencies.push((performance.now() - start) / fps.length);
  }
  return { sequentialMsPerPage: median(latencies), concurrentPagesPerSecond: median(rates) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const kv = await startFingerprintBucket();
  try {
    const cost = await measureAddCost(kv.store, 7);
    console.log(`add to index (real nats-server KV, k=3): ${cost.sequentialMsPerPage.toFixed(2)} ms/page one at a time, ` +
      `${Math.round(cost.concurrentPagesPerSecond)} pages/s with 32 in flight (medians of 3 runs)`);
  } finally {
    await kv.close();
  }
}
