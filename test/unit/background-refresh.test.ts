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

test('a slow value: read from the first call on, answered without waiting, with the last value while a new read runs', async () => {
  let clock = 0;
  const { read, pending } = manualReads();
  const value = refreshedInBackground(read, { maxAgeMs: 10_000, now: () => clock });
  assert.equal(pending.length, 0, 'nothing is read before anyone asks');
  assert.equal(value(), undefined, 'the first call starts the first read and does not wait for it');
  assert.equal(pending.length, 1);
  assert.equal(value(), undefined);
  assert.equal(pending.length, 1, 'no second read while it runs');

  clock = 1_000;
  pending[0]!.resolve(1);
  await settled();
  assert.equal(value(), 1);

  // fresh (the age counts from the end of the read, at 1 s): no new read
  clock = 11_000;
  assert.equal(value(), 1);
  assert.equal(pending.length, 1);

  // stale: a new read starts, and the answer is the last value without waiting for it
  clock = 11_001;
  assert.equal(value(), 1);
  assert.equal(pending.length, 2);
  // while it runs, however long, no second read
  clock = 30_000;
  assert.equal(value(), 1);
  assert.equal(pending.length, 2);

  // it ends at 40 s: its value from then on, and the next read not before 50 s
  clock = 40_000;
  pending[1]!.resolve(2);
  await settled();
  assert.equal(value(), 2);
  clock = 49_000;
  value();
  assert.equal(pending.length, 2);
  clock = 50_001;
  value();
  assert.equal(pending.length, 3);
});

test('a slow value: a failed read keeps the last value, is reported, and is tried again once stale', async () => {
  let clock = 0;
  const errors: string[] = [];
  const { read, pending } = manualReads();
  const value = refreshedInBackground(read, { maxAgeMs: 1_000, now: () => clock, onError: (e) => errors.push(e.message) });

  value();
  pending[0]!.reject(new Error('no server'));
  await settled();
  assert.deepEqual(errors, ['no server']);
  assert.equal(value(), undefined);
  clock = 1_001;
  assert.equal(value(), undefined);
  assert.equal(pending.length, 2, 'tried again');
  pending[1]!.resolve(7);
  await settled();
  assert.equal(value(), 7);

  clock = 3_000;
  assert.equal(value(), 7);
  pending[2]!.reject(new Error('timeout'));
  await settled();
  assert.deepEqual(errors, ['no server', 'timeout']);
  assert.equal(value(), 7, 'the last value stands');
  clock = 4_001;
  value();
  assert.equal(pending.length, 4, 'and a new read starts once it is stale again');
});

test('a slow value: a read that throws before it returns a promise is a failed read like any other', async () => {
  let clock = 0;
  let calls = 0;
  const errors: string[] = [];
  const value = refreshedInBackground<number>(
    () => {
      calls += 1;
      if (calls === 1) throw new Error('no connection');
      return Promise.resolve(3);
    },
    { maxAgeMs: 1_000, now: () => clock, onError: (e) => errors.push(e.message) },
  );
  assert.equal(value(), undefined);
  await settled();
  assert.deepEqual(errors, ['no connection']);
  clock = 1_001;
  value();
  await settled();
  assert.equal(value(), 3, 'the read was not left running');
});

test('a slow value with maxBusyShare: a long read is followed by a rest in proportion, so reading takes at most that share of the time', async () => {
  let clock = 0;
  const { read, pending } = manualReads();
  const value = refreshedInBackground(read, { maxAgeMs: 10_000, maxBusyShare: 0.1, now: () => clock });
  value();
  // a read of 60 s (a scan of many hosts): the next may start 540 s after it ended, not 10 s
  clock = 60_000;
  pending[0]!.resolve(1);
  await settled();
  clock = 60_000 + 539_000;
  assert.equal(value(), 1);
  assert.equal(pending.length, 1, 'resting: 60 s of reading in 10 % of the time');
  clock = 60_000 + 540_001;
  value();
  assert.equal(pending.length, 2);
  // a short read (0.5 s) rests maxAgeMs, as without the share
  clock += 500;
  pending[1]!.resolve(2);
  await settled();
  const ended = clock;
  clock = ended + 10_000;
  value();
  assert.equal(pending.length, 2);
  clock = ended + 10_001;
  value();
  assert.equal(pending.length, 3);
});
