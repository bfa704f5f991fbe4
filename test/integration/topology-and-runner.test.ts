import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import { NatsKvStore, openKvStores } from '../../pipeline/adapters/nats-kv.js';
import { startNode } from '../../app/node.js';
import { pipelineBacklog } from '../../app/backlog.js';
import { streamAdmin } from '../../pipeline/adapters/stream-admin.js';
import { applyCrawlPartitions, applyCrawlTopology } from '../../ops/nats/crawl-topology.js';
import { BUCKETS, EDGES, partitionInput, partitionSubject, STAGE_INPUTS } from '../../topology/index.js';
import { KvConflictError } from '../../ports/kv.js';
import { silentLogger } from '../../pipeline/logger.js';
import { parseSettings } from '../../pipeline/settings.js';
import { decodeAdmitted, decodeDeadLetter, decodeDiscoveredLinks, decodeExtracted, encodeCandidate, encodeFetched } from '../../schemas/index.js';
import { partitionOf } from '../../pipeline/partition.js';
import { useTestNats } from '../support/nats-server.js';
import { createFakeContext } from '../support/fake-context.js';
import { StageRunner } from '../../pipeline/runner.js';
import { emit, type ConsumerStage } from '../../pipeline/stage.js';
import { fetchInput } from '../../stages/fetch/spec.js';

describe('topology, KV and runner on a real nats-server', () => {
  const nats = useTestNats();

  it('creates every stream, consumer and bucket, and applying again changes nothing', async () => {
    await applyCrawlTopology(nats.nc); // idempotent
    for (const edge of Object.values(EDGES)) {
      const info = await nats.jsm.streams.info(edge.stream);
      assert.deepEqual(info.config.subjects, [...edge.subjects]);
      assert.equal(info.config.retention, 'limits');
    }
    await applyCrawlPartitions(nats.jsm, 4);
    for (const spec of STAGE_INPUTS) {
      // a partitioned stage (seen-filter) reads each partition through its own durable
      const durables = spec.partitioned ? [0, 1, 2, 3].map((p) => partitionInput(spec, p)) : [spec];
      for (const d of durables) {
        const info = await nats.jsm.consumers.info(d.stream, d.durable);
        assert.equal(info.config.durable_name, d.durable);
        assert.equal(info.config.filter_subject ?? '', d.filterSubject);
        assert.equal(info.config.ack_policy, 'explicit');
      }
    }
    const kv = await openKvStores(nats.nc);
    for (const name of Object.keys(BUCKETS)) assert.ok(kv[name as keyof typeof kv], `bucket ${name}`);
  });

  it('a fetched stream and extract consumer made before rendered pages had their own subject take it up when the topology is applied', async () => {
    await applyCrawlTopology(nats.nc);
    const fetched = await nats.jsm.streams.info(EDGES.fetched.stream);
    // as an older crawler left them: no rendered subject, extract reading crawl.fetched.*
    await nats.jsm.streams.update(EDGES.fetched.stream, { ...fetched.config, subjects: ['crawl.fetched.*', 'crawl.exchanges.*'] });
    await nats.jsm.consumers.update(EDGES.fetched.stream, 'extract', { filter_subject: 'crawl.fetched.*' });
    await applyCrawlTopology(nats.nc);
    assert.deepEqual((await nats.jsm.streams.info(EDGES.fetched.stream)).config.subjects, [...EDGES.fetched.subjects]);
    const before = (await nats.jsm.consumers.info(EDGES.fetched.stream, 'extract')).num_pending;
    await jetstream(nats.nc).publish(partitionSubject('rendered', 0), new Uint8Array([1]));
    const extract = await nats.jsm.consumers.info(EDGES.fetched.stream, 'extract');
    assert.equal(extract.config.filter_subject, 'crawl.fetched.>');
    assert.equal(extract.num_pending, before + 1, 'extract is given the rendered page');
    await nats.jsm.streams.purge(EDGES.fetched.stream);
  });

  it('KV compare-and-set: create on an existing key and update at a stale revision both conflict', async () => {
    const kv = (await openKvStores(nats.nc)).hosts as NatsKvStore;
    const rev = await kv.create('cas.example.com', new TextEncoder().encode('a'));
    await assert.rejects(kv.create('cas.example.com', new TextEncoder().encode('b')), KvConflictError);
    const rev2 = await kv.update('cas.example.com', new TextEncoder().encode('c'), rev);
    await assert.rejects(kv.update('cas.example.com', new TextEncoder().encode('d'), rev), KvConflictError);
    const got = await kv.get('cas.example.com');
    assert.equal(got?.revision, rev2);
    assert.equal(new TextDecoder().decode(got!.value), 'c');
  });

  it('runs a stage: a valid message is handled and acked, a malformed one is dead-lettered with its reason', async () => {
    const settings = parseSettings({ crawlId: 'it', partitions: 4 });
    const node = await startNode(nats.nc, settings, ['seen-filter'], { log: silentLogger() });
    const js = jetstream(nats.nc);
    const host = 'h1.example.com';
    await js.publish(
      `crawl.normalized.${partitionOf(host, 4)}`,
      encodeCandidate({ v: 1, url: `http://${host}/a`, host, domain: 'example.com', depth: 0, source_url: null, via: 'seed' }),
    );
    await js.publish('crawl.normalized.0', new Uint8Array([0xc1, 0xff, 0x00]));
    for (let i = 0; i < 100; i++) {
      const b = await pipelineBacklog(streamAdmin(nats.nc));
      if (b.perStage['seen-filter'] === 0) break;
      await sleep(100);
    }
    await node.stop();
    assert.equal((await pipelineBacklog(streamAdmin(nats.nc))).perStage['seen-filter'], 0);

    const frontier = await nats.jsm.streams.getMessage(EDGES.frontier.stream, { last_by_subj: `crawl.frontier.${partitionOf(host, 4)}` });
    const admitted = decodeAdmitted(frontier!.data);
    assert.equal(admitted.url, `http://${host}/a`);
    assert.match(admitted.fetch_id, /^[0-9a-f]{32}$/);

    const dl = await nats.jsm.streams.getMessage(EDGES.deadletter.stream, { last_by_subj: 'crawl.dlq.seen-filter' });
    const letter = decodeDeadLetter(dl!.data);
    assert.equal(letter.stage, 'seen-filter');
    assert.match(letter.reason, /decoding candidate url/);
    assert.deepEqual([...letter.data], [0xc1, 0xff, 0x00]);
  });

  it('a publish that fails runs the handling\'s onPublishFailed, then the input comes again', async () => {
    await applyCrawlTopology(nats.nc);
    const deliveries: number[] = [];
    let kept = 0;
    const def: ConsumerStage<Uint8Array> = {
      name: 'fetch',
      input: fetchInput,
      emits: [],
      defaultConcurrency: 1,
      decode: (_subject, data) => data,
      async handle(input) {
        deliveries.push(input.deliveryCount);
        if (input.deliveryCount > 1) return emit();
        // no stream takes this subject: the publish fails, as when the servers cannot store it
        return { kind: 'emit', messages: [{ subject: 'nowhere.at.all', msgId: 'x', data: new Uint8Array([1]) }], onPublishFailed: async () => void kept++ };
      },
    };
    const runner = new StageRunner(nats.nc, def, createFakeContext(), { concurrency: 1 });
    await runner.start();
    try {
      await jetstream(nats.nc).publish('crawl.ready.0', new Uint8Array([7]));
      for (let i = 0; i < 100 && deliveries.length < 2; i++) await sleep(100);
      assert.deepEqual(deliveries, [1, 2], 'handled, then redelivered after the failed publish');
      assert.equal(kept, 1, 'onPublishFailed ran once, before the redelivery');
    } finally {
      await runner.stop();
    }
  });

  it('runs extract in worker threads: a page comes out extracted, an undecodable message is dead-lettered with the bytes it had', async () => {
    const settings = parseSettings({ crawlId: 'it', partitions: 4 });
    const node = await startNode(nats.nc, settings, ['extract'], { log: silentLogger(), extract: { threads: 1 } });
    const js = jetstream(nats.nc);
    const host = 'h2.example.com';
    const P = partitionOf(host, 4);
    const html = '<html><head><title>Pooled</title></head><body><p>Hello.</p><a href="/next">next</a></body></html>';
    await js.publish(
      `crawl.fetched.${P}`,
      encodeFetched({
        v: 1, fetch_id: 'pool-1', url: `http://${host}/`, host, domain: 'example.com', depth: 0, fetch_time: 1, fetch_status: 200, duration_ms: 1,
        content_type: 'text/html', charset: 'utf-8', headers: {}, body: new TextEncoder().encode(html), truncated: false,
      }),
    );
    const garbage = new Uint8Array([0x82, 0xa1, 0x76, 0x01, 0xa3, 0x75, 0x72, 0x6c, 0xa1, 0x78]);
    await js.publish('crawl.fetched.1', garbage);
    for (let i = 0; i < 100; i++) {
      if ((await pipelineBacklog(streamAdmin(nats.nc))).perStage['extract'] === 0) break;
      await sleep(100);
    }
    await node.stop();
    assert.equal((await pipelineBacklog(streamAdmin(nats.nc))).perStage['extract'], 0);
    const extracted = decodeExtracted((await nats.jsm.streams.getMessage(EDGES.extracted.stream, { last_by_subj: `crawl.extracted.${P}` }))!.data);
    assert.equal(extracted.title, 'Pooled');
    assert.equal(extracted.fetch_id, 'pool-1');
    const links = decodeDiscoveredLinks((await nats.jsm.streams.getMessage(EDGES.discovered.stream, { last_by_subj: `crawl.links.${P}` }))!.data);
    assert.deepEqual(links.links.map((l) => l.url), [`http://${host}/next`]);
    const letter = decodeDeadLetter((await nats.jsm.streams.getMessage(EDGES.deadletter.stream, { last_by_subj: 'crawl.dlq.extract' }))!.data);
    assert.match(letter.reason, /decoding fetched page/);
    assert.deepEqual([...letter.data], [...garbage]);
  });

  it('every edge a stage emits to is read by some stage (except dead letters and results read by persist)', async () => {
    const { buildStage } = await import('../../app/stage-registry.js');
    // the host queues are read by the gate's scheduler by subject and sequence, not by a consumer;
    // the revisit schedule by the service (crawl serve), one due slot at a time; large bodies
    // by sequence, by the readers of the messages that refer to them
    const consumed = new Set([...STAGE_INPUTS.map((s) => s.stream), EDGES.hostq.stream, EDGES.revisits.stream, EDGES.bodies.stream]);
    for (const name of ['normalize', 'seen-filter', 'politeness-gate', 'fetch', 'extract', 'simhash'] as const) {
      const def = await buildStage(name, {});
      for (const edge of def.emits) {
        const stream = EDGES[edge as keyof typeof EDGES]?.stream;
        assert.ok(stream, `${name} emits to unknown edge ${edge}`);
        assert.ok(consumed.has(stream), `${name} emits to ${edge} but no stage consumes ${stream}`);
      }
    }
  });
});
