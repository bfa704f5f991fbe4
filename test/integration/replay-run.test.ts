/**
 * runReplay against a real nats-server: it reads only the requested range of the retained
 * stream, runs extract → simhash → rows, and publishes nothing (the streams' message
 * counts do not move, no durable consumer sees a delivery).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jetstream } from '@nats-io/jetstream';
import { openKvStores } from '../../pipeline/adapters/nats-kv.js';
import { natsBodyStore } from '../../pipeline/adapters/body-stream.js';
import { readStreamRange } from '../../pipeline/adapters/stream-range.js';
import { silentLogger } from '../../pipeline/logger.js';
import { StageMetrics } from '../../pipeline/metrics.js';
import { subjectFor } from '../../pipeline/partition.js';
import { runReplay } from '../../app/replay.js';
import { parseSettings } from '../../pipeline/settings.js';
import { EDGES } from '../../topology/index.js';
import { decodeFetched, encodeFetched } from '../../schemas/index.js';
import { emptyBatch, type RowBatch } from '../../stages/persist/index.js';
import { useTestNats } from '../support/nats-server.js';

const settings = parseSettings({ crawlId: 'c1', partitions: 4 });

function fetchedPage(i: number): Uint8Array {
  const html = `<html><head><title>Page ${i}</title></head><body><p>Text of page ${i} with some words.</p><a href="/p${i + 1}">next</a></body></html>`;
  return encodeFetched({
    v: 1,
    fetch_id: `f${i}`,
    url: `http://h.example/p${i}`,
    host: 'h.example',
    domain: 'h.example',
    depth: 0,
    fetch_time: Date.UTC(2026, 0, 1) + i,
    fetch_status: 200,
    duration_ms: 5,
    content_type: 'text/html',
    charset: 'utf-8',
    headers: {},
    body: new TextEncoder().encode(html),
    truncated: false,
  });
}

describe('runReplay on a real nats-server', () => {
  const nats = useTestNats();

  before(async () => {
    const js = jetstream(nats.nc);
    for (let i = 1; i <= 10; i++) await js.publish(subjectFor('fetched', 'h.example', settings.partitions), fetchedPage(i));
    // seq 11: an exchange for the archive, in the same stream as extract's pages but not for extract
    await js.publish(subjectFor('exchanges', 'h.example', settings.partitions), fetchedPage(11));
  });

  const counts = async () => Object.fromEntries(await Promise.all(Object.values(EDGES).map(async (e) => [e.stream, (await nats.jsm.streams.info(e.stream)).state.messages])));

  it('replays a sequence range from extract into rows, publishing nothing', async () => {
    const before = await counts();
    const written: RowBatch[] = [];
    const summary = await runReplay((stream, range, onWindow) => readStreamRange(nats.nc, stream, range, onWindow), {
      from: 'extract',
      range: { fromSeq: 3, untilSeq: 7 },
      crawlOf: () => 'c1',
      ctx: { settings, clock: { now: () => Date.now() }, log: silentLogger(), metrics: new StageMetrics(), kv: await openKvStores(nats.nc), maxPayloadBytes: 1024 * 1024, bodies: natsBodyStore(nats.nc) },
      batchRows: 2,
      write: async (rows) => void written.push(rows),
    });
    const all = written.reduce((acc, b) => ({ pages: [...acc.pages, ...b.pages], links: [...acc.links, ...b.links], fetch_log: [...acc.fetch_log, ...b.fetch_log] }), emptyBatch());
    assert.deepEqual({ messages: summary.messages, first: summary.firstSeq, last: summary.lastSeq, failed: summary.failed }, { messages: 5, first: 3, last: 7, failed: 0 });
    assert.deepEqual(all.pages.map((p) => [p.fetch_id, p.title]), [3, 4, 5, 6, 7].map((i) => [`f${i}`, `Page ${i}`]));
    assert.deepEqual(all.links.map((l) => l.dst_url), [4, 5, 6, 7, 8].map((i) => `http://h.example/p${i}`));
    assert.ok(written.length >= 2, 'written in batches');
    assert.deepEqual(await counts(), before, 'no stream got a message');
    for (const durable of ['extract', 'normalize']) {
      const info = await nats.jsm.consumers.info(durable === 'extract' ? EDGES.fetched.stream : EDGES.discovered.stream, durable);
      assert.equal(info.delivered.consumer_seq, 0, `the live ${durable} consumer was not touched`);
    }
  });

  it("reads only the stage's own subject: the archive's exchanges beside extract's pages are skipped", async () => {
    const written: RowBatch[] = [];
    const summary = await runReplay((stream, range, onWindow) => readStreamRange(nats.nc, stream, range, onWindow), {
      from: 'extract',
      range: { fromSeq: 9 },
      crawlOf: () => 'c1',
      ctx: { settings, clock: { now: () => Date.now() }, log: silentLogger(), metrics: new StageMetrics(), kv: await openKvStores(nats.nc), maxPayloadBytes: 1024 * 1024, bodies: natsBodyStore(nats.nc) },
      write: async (rows) => void written.push(rows),
    });
    assert.deepEqual({ messages: summary.messages, last: summary.lastSeq }, { messages: 2, last: 10 });
    assert.deepEqual(written.flatMap((b) => b.pages.map((p) => p.fetch_id)), ['f9', 'f10']);
  });

  it('a page whose body is stored beside its message replays whole; one whose body retention removed is reported', async () => {
    const js = jetstream(nats.nc);
    const bodies = natsBodyStore(nats.nc);
    const html = `<html><head><title>Large page</title></head><body><p>${'words of a long page '.repeat(60_000)}</p><a href="/the-end">end</a></body></html>`;
    const body = new TextEncoder().encode(html);
    const page = (i: number, ref: Awaited<ReturnType<typeof bodies.put>>) => ({ ...decodeFetched(fetchedPage(i)), body: new Uint8Array(0), body_ref: ref });
    const whole = await js.publish(subjectFor('fetched', 'h.example', settings.partitions), encodeFetched(page(20, await bodies.put('crawl.bodies.0', body))));
    const goneRef = await bodies.put('crawl.bodies.0', new TextEncoder().encode(html.replace('Large page', 'Gone page')));
    await nats.jsm.streams.deleteMessage('CRAWL_BODIES', goneRef.seqs[0]!);
    const gone = await js.publish(subjectFor('fetched', 'h.example', settings.partitions), encodeFetched(page(21, goneRef)));
    const written: RowBatch[] = [];
    const summary = await runReplay((stream, range, onWindow) => readStreamRange(nats.nc, stream, range, onWindow), {
      from: 'extract',
      range: { fromSeq: whole.seq, untilSeq: gone.seq },
      crawlOf: () => 'c1',
      ctx: { settings, clock: { now: () => Date.now() }, log: silentLogger(), metrics: new StageMetrics(), kv: await openKvStores(nats.nc), maxPayloadBytes: 1024 * 1024, bodies },
      write: async (rows) => void written.push(rows),
    });
    const pages = written.flatMap((b) => b.pages);
    assert.deepEqual(pages.map((p) => [p.fetch_id, p.title, p.content_length]), [['f20', 'Large page', body.length]]);
    assert.ok(written.flatMap((b) => b.links).some((l) => l.dst_url === 'http://h.example/the-end'), 'the link at the end of the body was found');
    assert.equal(summary.failed, 1);
    assert.match(summary.failures[0]!, /reading the body of http:\/\/h\.example\/p21 .*no longer in CRAWL_BODIES/);
  });

  it('a start after the newest message reads nothing (and does not wait for new ones)', async () => {
    const summary = await runReplay((stream, range, onWindow) => readStreamRange(nats.nc, stream, range, onWindow), {
      from: 'extract',
      range: { since: new Date(Date.now() + 60_000) },
      crawlOf: () => 'c1',
      ctx: { settings, clock: { now: () => Date.now() }, log: silentLogger(), metrics: new StageMetrics(), kv: await openKvStores(nats.nc), maxPayloadBytes: 1024 * 1024, bodies: natsBodyStore(nats.nc) },
      write: async () => assert.fail('nothing to write'),
    });
    assert.equal(summary.messages, 0);
  });
});
