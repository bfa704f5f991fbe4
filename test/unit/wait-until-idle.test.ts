import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamAdmin } from '../../ports/stream-admin.js';
import { pipelineBacklog, waitUntilIdle } from '../../app/backlog.js';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';

/** An admin port whose consumers are all empty, but whose first `unanswered` calls fail (as while a cluster elects a leader). */
function apiFailingFirst(unanswered: number): { jsm: StreamAdmin; calls: () => number } {
  let calls = 0;
  const jsm = {
    consumerLag: async (consumers: readonly { stream: string; durable: string }[]) => {
      if (++calls <= unanswered) throw new Error('JetStream system temporarily unavailable');
      return consumers.map((c) => ({ stream: c.stream, consumer: c.durable, pending: 0, ackPending: 0 }));
    },
  } as unknown as StreamAdmin;
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
