import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isTransientJetStreamError, retryWhileElecting } from '../../pipeline/adapters/nats-connection.js';

class TimeoutError extends Error {
  override name = 'TimeoutError';
}

describe('starting while a cluster elects its leaders', () => {
  test('timeouts, no responders and "JetStream not enabled" are worth another try; a usage error or a permission denial is not', () => {
    assert.equal(isTransientJetStreamError(new TimeoutError('timeout')), true);
    assert.equal(isTransientJetStreamError(new Error('503 no responders')), true);
    assert.equal(isTransientJetStreamError(new Error('jetstream is not enabled')), true);
    assert.equal(isTransientJetStreamError(new Error('the crawl has no settings yet')), false);
    assert.equal(isTransientJetStreamError(new Error("Permissions Violation for Publish to \"$JS.API.INFO\"")), false);
  });

  test('a start that times out is tried again and its result returned; any other failure ends at once', async () => {
    let calls = 0;
    const retried: string[] = [];
    const got = await retryWhileElecting(
      async () => {
        calls += 1;
        if (calls < 3) throw new TimeoutError('timeout');
        return 'started';
      },
      10_000,
      (why) => retried.push(why),
    );
    assert.equal(got, 'started');
    assert.deepEqual(retried, ['timeout', 'timeout']);
    await assert.rejects(retryWhileElecting(async () => Promise.reject(new Error('bad option')), 10_000), /bad option/);
  });
});
