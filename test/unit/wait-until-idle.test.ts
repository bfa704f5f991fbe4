import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JetStreamManager } from '@nats-io/jetstream';
import { pipelineBacklog, waitUntilIdle } from '../../app/backlog.js';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';

/** A JetStream API whose consumers are all empty, but whose first `unanswered` calls fail (as while a cluster elects a leader). */
function apiFailingFirst(unanswered: number): { jsm: JetStreamManager; calls: () => number } {
  let calls = 0;
  const jsm = {
    consumers: {
      info: async () => {
        if (++calls <= unanswered) throw new Error('JetStream system temporarily unavailable');
        return { num_pending: 0, num_ack_pending: 0 };
      },
      list: () => ({ async *[Symbol.asyncIterator]() {} }),
    },
  } as unknown as JetStreamManager;
  return { jsm, calls: () => calls };
}

describe('waitUntilIdle', () => {
  it('a check the servers do not answer counts as not idle: the wait goes on, tells once, and ends after three answered idle checks', async () => {
    const perCheck = apiFailingFirst(0);
    await pipelineBacklog(perCheck.jsm);
    const callsPerCheck = perCheck.calls();

    const { jsm, calls } = apiFailingFirst(2); // two checks in a row fail at their first call
    const told: string[] = [];
    await waitUntilIdle(jsm, new MemoryKvStore(), { onUnanswered: (err) => told.push(err.message) });
    assert.deepEqual(told, ['JetStream system temporarily unavailable'], 'one warning for a run of unanswered checks');
    assert.equal(calls(), 2 + 3 * callsPerCheck, 'two unanswered checks, then three answered idle ones');
  });
});
