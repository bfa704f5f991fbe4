import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DiscardPolicy, JetStreamApiError } from '@nats-io/jetstream';
import { errors } from '@nats-io/transport-node';
import { connectNats, isTransientJetStreamError } from '../../pipeline/adapters/nats-connection.js';
import { jetstreamPublisher } from '../../pipeline/adapters/jetstream-publisher.js';
import { useTestNats } from '../support/nats-server.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('the runner\'s JetStream publisher (acks matched on its own inbox)', () => {
  const nats = useTestNats(null);
  before(async () => {
    await nats.jsm.streams.add({ name: 'PUB', subjects: ['pub.>'] });
    await nats.jsm.streams.add({ name: 'FULL', subjects: ['full.>'], max_msgs: 1, discard: DiscardPolicy.New });
  });

  test('each message is stored once, in order, and a repeated msgId is told as the first one\'s sequence', async () => {
    const publisher = jetstreamPublisher(nats.nc);
    const first = await publisher.publish(Array.from({ length: 200 }, (_, i) => ({ subject: `pub.${i % 7}`, data: bytes(`m${i}`), msgId: `id-${i}` })));
    assert.deepEqual(first.map((p) => p.seq), Array.from({ length: 200 }, (_, i) => i + 1));
    assert.ok(first.every((p, i) => p.subject === `pub.${i % 7}` && !p.duplicate));
    // a redelivered input publishes again with the same ids: the stream keeps the first copies
    const again = await publisher.publish([{ subject: 'pub.3', data: bytes('m3 again'), msgId: 'id-3' }, { subject: 'pub.x', data: bytes('no id') }]);
    assert.deepEqual(again, [
      { subject: 'pub.3', seq: 4, duplicate: true },
      { subject: 'pub.x', seq: 201, duplicate: false },
    ]);
    const jsm = nats.jsm;
    assert.equal((await jsm.streams.info('PUB')).state.messages, 201);
    const m4 = await jsm.streams.getMessage('PUB', { seq: 4 });
    assert.equal(m4?.string(), 'm3', 'the duplicate did not replace the stored message');
  });

  test('a stream\'s refusal rejects that publish with the stream\'s error, the others land', async () => {
    const publisher = jetstreamPublisher(nats.nc);
    const results = await Promise.allSettled([
      publisher.publish([{ subject: 'full.a', data: bytes('fits') }]),
      publisher.publish([{ subject: 'full.b', data: bytes('does not') }]),
    ]);
    assert.equal(results[0]!.status, 'fulfilled');
    assert.equal(results[1]!.status, 'rejected');
    const err = (results[1] as PromiseRejectedResult).reason as Error;
    assert.ok(err instanceof JetStreamApiError, `got ${err.name}: ${err.message}`);
    assert.match(err.message, /maximum messages exceeded/);
  });

  test('a subject no stream takes is "no responders", which callers retry as transient', async () => {
    const publisher = jetstreamPublisher(nats.nc);
    await assert.rejects(publisher.publish([{ subject: 'nowhere.at.all', data: bytes('x') }]), (err: Error) => {
      assert.ok(err instanceof errors.NoRespondersError, `got ${err.name}: ${err.message}`);
      assert.match(err.message, /nowhere\.at\.all/);
      assert.equal(isTransientJetStreamError(err), true);
      return true;
    });
  });

  test('an ack that never comes times out, and its late answer is ignored', async () => {
    const silent = nats.nc.subscribe('silent.subject', { callback: () => {} }); // takes the message, never acks
    try {
      const publisher = jetstreamPublisher(nats.nc, 300);
      const started = Date.now();
      await assert.rejects(publisher.publish([{ subject: 'silent.subject', data: bytes('x') }]), (err: Error) => {
        assert.ok(err instanceof errors.TimeoutError, `got ${err.name}: ${err.message}`);
        return true;
      });
      // the sweep, once a second while publishes wait, finds it overdue
      assert.ok(Date.now() - started < 2_000, `timed out after ${Date.now() - started} ms`);
      // the publisher still works after a timeout
      const [ok] = await publisher.publish([{ subject: 'pub.after', data: bytes('y') }]);
      assert.ok(ok!.seq > 0);
    } finally {
      silent.unsubscribe();
    }
  });

  test('publishers of one connection share its inbox: a runner made for each partition adds no subscription', async () => {
    const own = await connectNats(nats.url, 'publisher-many');
    try {
      // the client's own count of the connection's subscriptions (not public API)
      const subscriptions = () => (own as unknown as { protocol: { subscriptions: { size(): number } } }).protocol.subscriptions.size();
      await jetstreamPublisher(own).publish([{ subject: 'pub.first', data: bytes('x') }]);
      const after1 = subscriptions();
      for (let i = 0; i < 50; i++) await jetstreamPublisher(own).publish([{ subject: `pub.p${i}`, data: bytes('x') }]);
      assert.equal(subscriptions(), after1);
    } finally {
      await own.close();
    }
  });

  test('a publish on a closed connection rejects at once', async () => {
    const own = await connectNats(nats.url, 'publisher-closed');
    const publisher = jetstreamPublisher(own);
    await publisher.publish([{ subject: 'pub.before-close', data: bytes('x') }]);
    await own.close();
    await assert.rejects(publisher.publish([{ subject: 'pub.after-close', data: bytes('x') }]), /closed/i);
  });
});
