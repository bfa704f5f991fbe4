import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NatsConnection } from '@nats-io/transport-node';
import { batchSocketWrites } from '../../pipeline/adapters/nats-write-batching.js';

/** The part of the client's protocol handler the batching replaces: counts real flushes. */
function fakeConnection() {
  const protocol = { flushes: 0, flushPending() { this.flushes += 1; } };
  return { nc: { protocol } as unknown as NatsConnection, protocol };
}

describe('batchSocketWrites', () => {
  test('flush requests of one event-loop turn become one write, after the turn', async () => {
    const { nc, protocol } = fakeConnection();
    assert.equal(batchSocketWrites(nc), true);
    for (let i = 0; i < 10; i++) queueMicrotask(() => protocol.flushPending());
    await Promise.resolve();
    assert.equal(protocol.flushes, 0, 'nothing written within the turn');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(protocol.flushes, 1);
    protocol.flushPending();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(protocol.flushes, 2, 'the next turn writes again');
  });

  test('a client without the expected internals is left as it is', () => {
    assert.equal(batchSocketWrites({} as NatsConnection), false);
  });
});
