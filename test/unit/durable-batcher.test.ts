import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DurableBatcher } from '../../pipeline/durable-batcher.js';

/** A write the test finishes (or fails) by hand, so what is acked before durability shows. */
class HeldWrites<T> {
  readonly batches: T[][] = [];
  private pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  readonly write = (items: T[]): Promise<void> => {
    this.batches.push([...items]);
    return new Promise<void>((resolve, reject) => this.pending.push({ resolve, reject }));
  };
  finish(): void {
    this.pending.shift()!.resolve();
  }
  fail(err: Error): void {
    this.pending.shift()!.reject(err);
  }
}

function track(p: Promise<unknown>) {
  const s = { state: 'pending' as 'pending' | 'resolved' | 'rejected', error: undefined as unknown };
  p.then(
    () => (s.state = 'resolved'),
    (error) => Object.assign(s, { state: 'rejected', error }),
  );
  return s;
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('durable batcher: an add resolves only once the batch holding it is durable', () => {
  test('a full batch is written at once, and its adds resolve when the write does, not before', async () => {
    const w = new HeldWrites<string>();
    const b = new DurableBatcher(w.write, { maxRows: 2, maxDelayMs: 60_000 });
    const adds = ['a', 'b', 'c'].map((x) => track(b.add(x)));
    await settle();
    assert.deepEqual(w.batches, [['a', 'b']], 'the first two fill a batch; the third waits for more');
    assert.deepEqual(adds.map((a) => a.state), ['pending', 'pending', 'pending'], 'nothing resolves while the write is in progress');
    w.finish();
    await settle();
    assert.deepEqual(adds.map((a) => a.state), ['resolved', 'resolved', 'pending']);
    void b.flush(); // what is left is written now, not after the delay
    await settle();
    assert.deepEqual(w.batches, [['a', 'b'], ['c']]);
    w.finish();
    await settle();
    assert.equal(adds[2]!.state, 'resolved');
  });

  test('rows are counted with rowsOf: an item of three rows fills a batch of three', async () => {
    const w = new HeldWrites<number>();
    const b = new DurableBatcher(w.write, { maxRows: 3, maxDelayMs: 60_000 }, (n) => n);
    void b.add(1);
    await settle();
    assert.equal(w.batches.length, 0);
    void b.add(2);
    await settle();
    assert.deepEqual(w.batches, [[1, 2]]);
    w.finish();
  });

  test('a batch that never fills is written maxDelayMs after its first item', async () => {
    const w = new HeldWrites<string>();
    const b = new DurableBatcher(w.write, { maxRows: 100, maxDelayMs: 30 });
    const a = track(b.add('a'));
    await settle();
    assert.equal(w.batches.length, 0, 'not before the delay');
    await new Promise((r) => setTimeout(r, 80));
    assert.deepEqual(w.batches, [['a']]);
    w.finish();
    await settle();
    assert.equal(a.state, 'resolved');
  });

  test('writes run one at a time, in order; a failed write rejects its own batch only', async () => {
    const w = new HeldWrites<string>();
    const b = new DurableBatcher(w.write, { maxRows: 1, maxDelayMs: 60_000 });
    const first = track(b.add('a'));
    const second = track(b.add('b'));
    await settle();
    assert.deepEqual(w.batches, [['a']], 'the second write waits for the first');
    w.fail(new Error('disk full'));
    await settle();
    assert.equal(first.state, 'rejected');
    assert.match((first.error as Error).message, /disk full/);
    assert.deepEqual(w.batches, [['a'], ['b']]);
    w.finish();
    await settle();
    assert.equal(second.state, 'resolved');
  });
});
