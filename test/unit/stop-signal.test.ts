import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopOnSignal } from '../../cli/stop-signal.js';

const settledWithin = (p: Promise<void>, ms: number) => Promise.race([p.then(() => true), sleep(ms).then(() => false)]);

describe('stopOnSignal', () => {
  it('resolves stopped() when SIGINT comes, and not before', async () => {
    const stop = stopOnSignal();
    try {
      const stopped = stop.stopped();
      assert.equal(await settledWithin(stopped, 50), false);
      assert.equal(stop.requested, false);
      process.emit('SIGINT');
      assert.equal(await settledWithin(stopped, 50), true);
      assert.equal(stop.requested, true);
    } finally {
      stop.dispose();
    }
  });

  it('resolves stopped() on request(), for a command whose own part failed', async () => {
    const stop = stopOnSignal();
    try {
      stop.request();
      assert.equal(await settledWithin(stop.stopped(), 50), true);
      assert.equal(stop.requested, true);
    } finally {
      stop.dispose();
    }
  });
});
