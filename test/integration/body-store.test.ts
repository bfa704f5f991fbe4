/**
 * The body store on a real nats-server with a stock max_payload (1 MiB): a 5 MiB body goes
 * into CRAWL_BODIES in chunks that each fit a message and reads back whole; storing it again
 * (a redelivered fetch) adds nothing; a chunk retention removed makes the read fail with
 * that reason. And a server whose max_payload is below what the crawler needs is refused
 * with a message that names max_payload, as is a message over it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { natsBodyStore } from '../../pipeline/adapters/body-stream.js';
import { jetstreamPublisher } from '../../pipeline/adapters/stream-access.js';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { CHUNK_HEADROOM_BYTES } from '../../pipeline/body-chunks.js';
import { createNodeContext } from '../../app/node.js';
import { silentLogger } from '../../pipeline/logger.js';
import { parseSettings } from '../../pipeline/settings.js';
import { BodyMissingError } from '../../ports/bodies.js';
import { startTestNats, useTestNats } from '../support/nats-server.js';

const MIB = 1024 * 1024;

describe('the body store on a server with max_payload 1 MiB', () => {
  const nats = useTestNats({}, { maxPayloadBytes: MIB });
  const bodies = () => natsBodyStore(nats.nc);
  const stored = async () => (await nats.jsm.streams.info('CRAWL_BODIES')).state.messages;

  it('stores 5 MiB in chunks that each fit a message, and reads it back whole', async () => {
    const body = randomBytes(5 * MIB);
    const ref = await bodies().put('crawl.bodies.3', body);
    assert.equal(ref.seqs.length, Math.ceil(body.length / (MIB - CHUNK_HEADROOM_BYTES)));
    assert.equal(ref.length, body.length);
    assert.equal(ref.sha256, createHash('sha256').update(body).digest('hex'));
    for (const seq of ref.seqs) {
      const m = await nats.jsm.streams.getMessage('CRAWL_BODIES', { seq });
      assert.equal(m?.subject, 'crawl.bodies.3');
      assert.ok(m!.data.length <= MIB - CHUNK_HEADROOM_BYTES);
    }
    assert.ok(Buffer.from(await bodies().get(ref)).equals(body), 'the same bytes');
  });

  it('the same body stored again (a fetch redelivered after storing it) gets the same chunks; another body gets its own', async () => {
    const body = randomBytes(2 * MIB);
    const first = await bodies().put('crawl.bodies.0', body);
    const count = await stored();
    const again = await bodies().put('crawl.bodies.0', body);
    assert.deepEqual(again, first);
    assert.equal(await stored(), count, 'no second copy');
    // for an hour, not the 2 minutes of the other streams: a fetch is repeated after its host's backoff
    assert.equal((await nats.jsm.streams.info('CRAWL_BODIES')).config.duplicate_window, 3600e9);
    const other = Buffer.from(body);
    other[0] = other[0]! ^ 1;
    const changed = await bodies().put('crawl.bodies.0', other);
    assert.notDeepEqual(changed.seqs, first.seqs);
    assert.ok(Buffer.from(await bodies().get(first)).equals(body), 'the first body is still itself');
  });

  it('a body whose chunk is gone (retention) cannot be read: the error says so', async () => {
    const ref = await bodies().put('crawl.bodies.1', randomBytes(3 * MIB));
    await nats.jsm.streams.deleteMessage('CRAWL_BODIES', ref.seqs[1]!);
    await assert.rejects(bodies().get(ref), (err: Error) => err instanceof BodyMissingError && /1 of its 4 chunks .* no longer in CRAWL_BODIES: removed by the stream's retention/.test(err.message));
  });

  it("a message over the server's max_payload fails its publish with an error naming max_payload", async () => {
    const publisher = jetstreamPublisher(jetstream(nats.nc), nats.nc.info!.max_payload);
    await assert.rejects(
      publisher.publish([{ subject: 'crawl.fetched.0', data: new Uint8Array(MIB + 1) }]),
      /a message on crawl\.fetched\.0 is 1048577 bytes, more than the NATS server's max_payload \(1048576 bytes\)/,
    );
  });
});

describe('a server whose max_payload is below what the crawler needs', () => {
  it('is refused when a node starts, naming max_payload', async () => {
    const server = await startTestNats({ maxPayloadBytes: 512 * 1024 });
    const nc = await connectNats(server.url, 'test');
    try {
      await assert.rejects(createNodeContext(nc, parseSettings({ crawlId: 'c' }), silentLogger()), /max_payload is 524288 bytes; the crawler needs at least 1048576/);
    } finally {
      await nc.close();
      await server.cleanup();
    }
  });
});
