import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestOne } from '@nats-io/nats-core/internal';
import { errors, type NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { settleRequestsWithoutErrors } from '../../pipeline/adapters/nats-request-settle.js';
import { startTestNats } from '../support/nats-server.js';

/** A one-reply request on a fake mux whose promise records whether it was ever rejected. */
function watchedRequest() {
  const mux = { cancelled: 0, cancel() { this.cancelled += 1; } };
  const request = new RequestOne(mux as never, 'subject', { timeout: 1000 }, false) as unknown as {
    deferred: Promise<unknown> & { reject(err: Error): void };
    resolver(err: Error | null, msg: unknown): void;
  };
  const rejections: Error[] = [];
  const reject = request.deferred.reject;
  request.deferred.reject = (err: Error) => { rejections.push(err); reject(err); };
  return { mux, request, rejections };
}

describe('requests settled without a throwaway error', () => {
  let server: Awaited<ReturnType<typeof startTestNats>>;
  let nc: NatsConnection;
  before(async () => {
    server = await startTestNats();
    nc = await connectNats(server.url, 'settle-test');
    nc.subscribe('echo', { callback: (_err, msg) => { msg.respond(msg.data); } });
  });
  after(async () => {
    await nc.close();
    await server.cleanup();
  });

  test('a reply resolves the request, frees its mux entry and builds no error', async () => {
    assert.equal(settleRequestsWithoutErrors(), true);
    const { mux, request, rejections } = watchedRequest();
    request.resolver(null, 'reply');
    assert.equal(await request.deferred, 'reply');
    assert.equal(mux.cancelled, 1);
    assert.deepEqual(rejections, [], 'the client used to reject the settled promise with a new RequestError');
  });

  test('an error still rejects the request through the client', async () => {
    const { request, rejections } = watchedRequest();
    request.resolver(new Error('boom'), undefined);
    await assert.rejects(request.deferred, /boom/);
    assert.match(rejections[0]?.message ?? '', /boom/, 'the error itself settles the request');
  });

  test('requests over a real connection still get replies, time-outs and no-responders', async () => {
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => nc.request('echo', `m${i}`, { timeout: 2000 })));
    assert.deepEqual(replies.map((m) => m.string()), Array.from({ length: 50 }, (_, i) => `m${i}`));
    nc.subscribe('silent', { callback: () => {} });
    await assert.rejects(nc.request('silent', 'x', { timeout: 200 }), (err: Error) => err instanceof errors.TimeoutError);
    await assert.rejects(nc.request('nobody.listens', 'x', { timeout: 2000 }), (err: Error) => (err as InstanceType<typeof errors.RequestError>).isNoResponders?.() === true);
  });
});
