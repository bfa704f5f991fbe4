import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refreshedInBackground } from '../../pipeline/background-refresh.js';

/** A read the test finishes by hand: each call is one pending read, resolved or failed later. */
function manualReads() {
  const pending: Array<{ resolve: (v: number) => void; reject: (e: Error) => void }> = [];
  const read = () => new Promise<number>((resolve, reject) => pending.push({ resolve, reject }));
  return { read, pending };
}

const settled = () => new Promise((r) => setImmediate(r));

test('a slow value: the first call waits for it, later calls answer at once with the last one while a new read runs', async () => {
  let clock = 0;
  const { read, pending } = manualReads();
  const value = refreshedInBackground(read, { maxAgeMs: 10_000, now: () => clock });

  const first = value();
  assert.equal(pending.length, 1);
  pending[0]!.resolve(1);
  assert.equal(await first, 1);

  // fresh: no new read
  clock = 5_000;
  assert.equal(await value(), 1);
  assert.equal(pending.length, 1);

  // stale: a new read starts, and the answer is the last value without waiting for it
  clock = 10_001;
  assert.equal(await value(), 1);
  assert.equal(pending.length, 2);
  // while it runs, no second read
  clock = 30_000;
  assert.equal(await value(), 1);
  assert.equal(pending.length, 2);

  // it ends at 40 s: its value from then on, and the next read not before 50 s
  clock = 40_000;
  pending[1]!.resolve(2);
  await settled();
  assert.equal(await value(), 2);
  clock = 49_000;
  await value();
  assert.equal(pending.length, 2, 'the age counts from the end of the last read');
  clock = 50_001;
  await value();
  assert.equal(pending.length, 3);
});

test('a slow value: a failed refresh keeps the last value and is tried again; only a failed first read reaches the caller', async () => {
  let clock = 0;
  const errors: string[] = [];
  const { read, pending } = manualReads();
  const value = refreshedInBackground(read, { maxAgeMs: 1_000, now: () => clock, onError: (e) => errors.push(e.message) });

  const first = value();
  pending[0]!.reject(new Error('no server'));
  await assert.rejects(first, /no server/);
  const second = value();
  assert.equal(pending.length, 2, 'the first read is tried again at the next call');
  pending[1]!.resolve(7);
  assert.equal(await second, 7);

  clock = 2_000;
  assert.equal(await value(), 7);
  pending[2]!.reject(new Error('timeout'));
  await settled();
  assert.deepEqual(errors, ['timeout']);
  assert.equal(await value(), 7, 'the last value stands');
  clock = 3_001;
  await value();
  assert.equal(pending.length, 4, 'and a new read starts once it is stale again');
});
