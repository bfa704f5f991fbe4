/**
 * The host queues are a frontier, not a replay log, on a real nats-server: with an age limit
 * of a few seconds on every stream kept for replay, URLs that wait for their host longer than
 * that are all still served (none skipped, none without its row), and each leaves
 * CRAWL_HOSTQ once served. The gate and the fetcher run their real handlers against the
 * server's host bucket and streams; HTTP and the other buckets are the fake context's.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { DiscardPolicy, jetstream, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { applyCrawlTopology } from '../../ops/nats/crawl-topology.js';
import { openKvStores } from '../../pipeline/adapters/nats-kv.js';
import { jetstreamPublisher, streamAccess } from '../../pipeline/adapters/stream-access.js';
import { hostQueueSubject } from '../../pipeline/partition.js';
import type { Emit, Published } from '../../ports/streams.js';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { serveHost } from '../../stages/politeness-gate/serve-host.js';
import { handleFetch } from '../../stages/fetch/handle.js';
import { decodeGrant, decodeOutcome, type AdmittedUrl } from '../../schemas/index.js';
import { EDGES } from '../../topology/index.js';
import { createFakeContext, htmlResponse, httpResponse, stageInput } from '../support/fake-context.js';
import { useTestNats } from '../support/nats-server.js';

const HOST = 'slow.example.com';
const AGE_MS = 2_000;
const admitted = (path: string): AdmittedUrl => ({ v: 1, url: `https://${HOST}${path}`, host: HOST, domain: 'example.com', depth: 1, source_url: null, via: 'link', fetch_id: `fid${path}`, admitted_at: 0 });

describe('host queues outlive the replay streams\' age limit (real nats-server)', () => {
  const nats = useTestNats(null);

  it('an existing CRAWL_HOSTQ loses its age limit in place, its messages kept', async () => {
    // as a deployment from before made it: the age limit of every stream, oldest dropped first
    await nats.jsm.streams.add({ name: EDGES.hostq.stream, subjects: [...EDGES.hostq.subjects], retention: RetentionPolicy.Limits, storage: StorageType.File, discard: DiscardPolicy.Old, max_age: 14 * 86_400e9, allow_direct: true });
    await jetstream(nats.nc).publish(hostQueueSubject(HOST, 1), new Uint8Array([1]));
    await applyCrawlTopology(nats.nc, { retention: () => ({ maxAgeMs: AGE_MS, maxBytes: -1 }) });
    const { config, state } = await nats.jsm.streams.info(EDGES.hostq.stream);
    assert.deepEqual([config.max_age, config.discard, config.max_bytes, state.messages], [0, DiscardPolicy.New, -1, 1]);
    await nats.jsm.streams.purge(EDGES.hostq.stream);
    for (const edge of ['discovered', 'frontier', 'ready', 'fetched', 'results'] as const) {
      assert.equal((await nats.jsm.streams.info(EDGES[edge].stream)).config.max_age, AGE_MS * 1e6, `${edge} keeps the short replay window`);
    }
  });

  it('URLs waiting longer than that are all served, and leave the stream once served', async () => {
    const kv = await openKvStores(nats.nc);
    const real = jetstreamPublisher(jetstream(nats.nc));
    const sent: Emit[] = [];
    const publisher = { publish: async (m: readonly Emit[]): Promise<Published[]> => (sent.push(...m), real.publish(m)) };
    const base = createFakeContext({
      settings: { minDelayMs: 1000, adaptiveDelayFactor: 0, partitions: 1 },
      respond: (req) => (new URL(req.url).pathname === '/robots.txt' ? httpResponse(200, { body: 'User-agent: *\nDisallow: /private\n', headers: { 'content-type': 'text/plain' } }) : htmlResponse('<p>page</p>')),
    });
    const ctx = { ...base, kv: { ...base.kv, hosts: kv.hosts }, streams: streamAccess(nats.nc), publisher };
    const hostqMessages = async () => (await nats.jsm.streams.info(EDGES.hostq.stream)).state.messages;

    const paths = ['/a', '/private/b', '/c', '/d'];
    for (const [i, path] of paths.entries()) {
      const outcome = await handleGateIntake(stageInput([admitted(path)], { streamSeq: i + 1 }), ctx);
      assert.equal(outcome.kind, 'emit');
      if (outcome.kind === 'emit') await outcome.beforeAck!(await ctx.publisher.publish(outcome.messages));
    }
    // a message on a replay stream beside them: the age limit at work
    await real.publish([{ subject: 'crawl.links.0', data: new Uint8Array([1]) }]);
    assert.equal(await hostqMessages(), 4);
    await sleep(AGE_MS + 1500);
    assert.equal((await nats.jsm.streams.info(EDGES.discovered.stream)).state.messages, 0, 'the replay stream dropped its message for age');
    assert.equal(await hostqMessages(), 4, 'the host queue kept every waiting URL');

    // the host's turns: robots.txt, then one URL per delay; each grant fetched as a fetcher would
    const fetched: string[] = [];
    for (let turn = 0; turn < 10 && fetched.length < 3; turn++) {
      ctx.clock.advance(2000);
      const before = sent.length;
      await serveHost(ctx, HOST);
      for (const m of sent.slice(before).filter((e) => e.subject.startsWith('crawl.ready.'))) {
        const grant = decodeGrant(m.data);
        const served = await handleFetch(stageInput(grant, { subject: m.subject }), ctx);
        assert.equal(served.kind, 'emit');
        if (served.kind === 'emit') await served.afterPublish?.([]);
        fetched.push(new URL(grant.url).pathname);
      }
    }
    assert.deepEqual(fetched, ['/a', '/c', '/d'], 'every allowed URL served in order, none skipped');
    const rows = sent.filter((e) => e.subject.startsWith('crawl.outcomes.')).map((e) => decodeOutcome(e.data));
    assert.deepEqual(rows.map((r) => [r.url, r.outcome]), [[`https://${HOST}/private/b`, 'robots_disallowed']]);
    assert.equal(await hostqMessages(), 0, 'served and settled URLs left the stream');
  });

  it('a size limit refuses new URLs (the waiting ones stay), and the intake holds its input back', async () => {
    await applyCrawlTopology(nats.nc, { retention: (s) => (s === EDGES.hostq.stream ? { maxAgeMs: 0, maxBytes: 2_000 } : undefined) });
    const kv = await openKvStores(nats.nc);
    const base = createFakeContext({ settings: { partitions: 1 } });
    const ctx = { ...base, kv: { ...base.kv, hosts: kv.hosts }, streams: streamAccess(nats.nc), publisher: jetstreamPublisher(jetstream(nats.nc)) };
    let refused: Error | null = null;
    let queued = 0;
    for (let i = 1; i <= 50 && !refused; i++) {
      const outcome = await handleGateIntake(stageInput([admitted(`/full/${i}`)], { streamSeq: 100 + i }), ctx);
      assert.equal(outcome.kind, 'emit');
      if (outcome.kind !== 'emit') return;
      try {
        await outcome.beforeAck!(await ctx.publisher.publish(outcome.messages));
        queued++;
      } catch (err) {
        refused = err as Error;
        await outcome.onPublishFailed?.(refused);
      }
    }
    assert.ok(refused, 'the stream refused a URL once full');
    assert.match(refused.message, /maximum bytes exceeded/);
    assert.equal((await nats.jsm.streams.info(EDGES.hostq.stream)).state.messages, queued, 'every URL taken is still there');
    const held = await handleGateIntake(stageInput([admitted('/full/next')], { streamSeq: 999 }), ctx);
    assert.equal(held.kind, 'retry', 'the next frontier message waits instead of being published');
  });
});
