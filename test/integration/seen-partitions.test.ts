/**
 * The partitioned seen set on a real nats-server: processes holding partition leases,
 * snapshots in the crawl-seen bucket, replay of crawl.normalized.<N> on takeover. What a
 * user checks: every URL reaches the frontier exactly once, whichever process died when.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { openKvStores } from '../../pipeline/adapters/nats-kv.js';
import { createNodeContext } from '../../app/node.js';
import { pipelineBacklog } from '../../app/backlog.js';
import { streamAdmin } from '../../pipeline/adapters/stream-admin.js';
import { silentLogger } from '../../pipeline/logger.js';
import type { StageContext } from '../../pipeline/stage.js';
import { PartitionOwner } from '../../pipeline/partition-owner.js';
import { leaseKey } from '../../pipeline/partition-leases.js';
import { parseSettings, type CrawlSettings } from '../../pipeline/settings.js';
import { partitionOf } from '../../pipeline/partition.js';
import { EDGES } from '../../topology/index.js';
import { batchesBy, decodeAdmittedBatch, encodeCandidate, encodeCandidates, type CandidateUrl } from '../../schemas/index.js';
import { seenFilterStage } from '../../stages/seen-filter/index.js';
import { useTestNats } from '../support/nats-server.js';

const PARTITIONS = 4;
/** short leases, so a takeover after a "kill" takes about two seconds */
const LEASE_TTL_MS = 1500;

async function owner(url: string, settings: CrawlSettings): Promise<{ owner: PartitionOwner<unknown>; nc: NatsConnection; metrics: StageContext['metrics'] }> {
  const nc = await connectNats(url, 'seen-test');
  const { ctx, kv } = await createNodeContext(nc, settings, silentLogger());
  const o = new PartitionOwner(nc, seenFilterStage as never, ctx, { concurrency: 8, leases: kv.seen, leaseTtlMs: LEASE_TTL_MS });
  await o.start();
  return { owner: o, nc, metrics: ctx.metrics };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('partitioned seen set on a real nats-server', () => {
  const nats = useTestNats({ partitions: PARTITIONS });

  const publish = async (urls: string[]) => {
    const js = jetstream(nats.nc);
    for (const url of urls) {
      const host = new URL(url).hostname;
      await js.publish(
        `crawl.normalized.${partitionOf(host, PARTITIONS)}`,
        encodeCandidate({ v: 1, url, host, domain: 'example.com', depth: 1, source_url: null, via: 'link' }),
      );
    }
  };
  const drained = () => until('the seen-filter backlog to drain', async () => (await pipelineBacklog(streamAdmin(nats.nc))).perStage['seen-filter'] === 0);
  /** every admission on the frontier (a message of one, or a batch), by URL: the test's view of what would be fetched */
  const frontier = async (): Promise<Map<string, number>> => {
    const counts = new Map<string, number>();
    const last = (await nats.jsm.streams.info(EDGES.frontier.stream)).state.last_seq;
    for (let seq = 1; seq <= last; seq++) {
      const m = await nats.jsm.streams.getMessage(EDGES.frontier.stream, { seq }).catch(() => null);
      for (const { url } of m ? decodeAdmittedBatch(m.data) : []) counts.set(url, (counts.get(url) ?? 0) + 1);
    }
    return counts;
  };
  const urls = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `http://h${i % 13}.example.com/${prefix}/${i}`);

  it('a stopped owner snapshots; a killed one is taken over from its snapshot plus a replay; no URL is admitted twice', async () => {
    const settings = parseSettings({ crawlId: 'takeover', partitions: PARTITIONS, seenExpectedUrls: 4096 });
    const batch1 = urls('one', 120);
    const batch2 = urls('two', 60);
    const batch3 = urls('three', 40);

    const a = await owner(nats.url, settings);
    await until('A to serve every partition', () => a.owner.serving.length === PARTITIONS);
    await publish(batch1);
    await drained();
    await a.owner.stop(); // graceful: in-flight work done, snapshots saved, leases released
    await a.nc.close();

    const b = await owner(nats.url, settings);
    await until('B to serve every partition', () => b.owner.serving.length === PARTITIONS);
    await publish([...batch2, ...batch1]);
    await drained();
    // B is killed: no snapshot since it opened the partitions, leases left to lapse
    await b.owner.abandon();
    await b.nc.close();

    const c = await owner(nats.url, settings);
    await until('C to take every partition over once B’s leases lapsed', () => c.owner.serving.length === PARTITIONS, 10_000);
    await publish([...batch3, ...batch2, ...batch1]);
    await drained();
    await c.owner.stop();
    await c.nc.close();
    // the frontier's duplicate window would hide a re-admission (same fetch id), so ask the seen set itself
    assert.equal(b.metrics.total('seen-filter', 'urls', 'admitted'), batch2.length, 'B admitted only the new URLs');
    assert.equal(c.metrics.total('seen-filter', 'urls', 'admitted'), batch3.length, 'C admitted only the new URLs');
    assert.equal(c.metrics.total('seen-filter', 'urls', 'seen'), batch1.length + batch2.length, 'and knew every URL B had seen');

    const admitted = await frontier();
    assert.equal(admitted.size, batch1.length + batch2.length + batch3.length, 'every URL admitted');
    assert.deepEqual([...admitted].filter(([, n]) => n !== 1), [], 'and none twice');

    // the seen set is a few snapshot chunks, leases and counters: nothing per URL
    const keys: string[] = [];
    for await (const key of (await openKvStores(nats.nc)).seen.keys()) keys.push(key);
    assert.ok(keys.length <= 3 * PARTITIONS + 2, `crawl-seen holds ${keys.length} keys: ${keys.join(' ')}`);
  });

  it('a Bloom filter small enough to err: every distinct URL is admitted once and repeats are dropped, across a takeover', async () => {
    // 1,024 URLs a partition planned, 20,000 sent: the filters grow and wrongly take about 17
    // new URLs for seen (the number is fixed by the URLs and the hash), which the exact
    // record in crawl-seen-keys then finds missing
    const settings = parseSettings({ crawlId: 'exact', partitions: PARTITIONS, seenExpectedUrls: 4096 });
    const all = urls('fp', 20_000);
    const [earlier, later] = [all.slice(0, 12_000), all.slice(12_000)];
    /** as normalize sends them: a message per partition of up to 100 candidates */
    const publishBatched = async (list: string[]) => {
      const js = jetstream(nats.nc);
      const candidates: CandidateUrl[] = list.map((url) => ({ v: 1, url, host: new URL(url).hostname, domain: 'example.com', depth: 1, source_url: null, via: 'link' }));
      const sends = [];
      for (let at = 0; at < candidates.length; at += 100) {
        for (const { key, items } of batchesBy(candidates.slice(at, at + 100), (c) => `crawl.normalized.${partitionOf(c.host, PARTITIONS)}`)) sends.push(js.publish(key, encodeCandidates(items)));
      }
      await Promise.all(sends);
    };
    const a = await owner(nats.url, settings);
    await until('A to serve every partition', () => a.owner.serving.length === PARTITIONS);
    await publishBatched(earlier);
    await drained();
    await a.owner.stop();
    await a.nc.close();
    // B starts with no recent keys: the repeats it meets are confirmed in the exact record
    const b = await owner(nats.url, settings);
    await until('B to serve every partition', () => b.owner.serving.length === PARTITIONS);
    await publishBatched([...later, ...earlier.slice(0, 6_000), ...later.slice(0, 3_000)]);
    await drained();
    await b.owner.stop();
    await b.nc.close();

    const total = (what: string, outcome: string) => a.metrics.total('seen-filter', what, outcome) + b.metrics.total('seen-filter', what, outcome);
    assert.ok(total('bloom_hits', 'false_positive') > 0, 'the filters did err on new URLs');
    assert.ok(b.metrics.total('seen-filter', 'bloom_hits', 'in_record') > 0, 'B confirmed repeats in the exact record');
    assert.equal(total('urls', 'admitted'), all.length, 'every distinct URL admitted once');
    assert.equal(total('urls', 'seen'), 9_000, 'every repeat dropped');
    const counts = await frontier();
    assert.deepEqual(all.filter((u) => counts.get(u) !== 1), [], 'each on the frontier exactly once');
  });

  it('two processes split the partitions; when one stops, the other serves them all', async () => {
    const settings = parseSettings({ crawlId: 'split', partitions: PARTITIONS, seenExpectedUrls: 4096 });
    const first = await owner(nats.url, settings);
    const second = await owner(nats.url, settings);
    await until('the partitions to be split two and two', () => first.owner.serving.length === 2 && second.owner.serving.length === 2);
    assert.deepEqual([...first.owner.serving, ...second.owner.serving].sort(), [0, 1, 2, 3]);

    const before = await frontier();
    const batch = urls('split', 80);
    await publish([...batch, ...batch]);
    await drained();
    await first.owner.stop();
    await first.nc.close();
    await until('the second process to serve every partition', () => second.owner.serving.length === PARTITIONS);
    await publish(batch);
    await drained();
    await second.owner.stop();
    await second.nc.close();

    const admittedByBoth = first.metrics.total('seen-filter', 'urls', 'admitted') + second.metrics.total('seen-filter', 'urls', 'admitted');
    assert.equal(admittedByBoth, batch.length, 'each URL admitted by one process, once');
    const after = await frontier();
    const added = batch.map((u) => (after.get(u) ?? 0) - (before.get(u) ?? 0));
    // the same URLs were admitted by the previous test's crawl: a new crawl id admits them again, once
    assert.deepEqual(added, batch.map(() => 1));
  });

  it('a process whose lease was taken stops consuming that partition at its next renewal', async () => {
    const settings = parseSettings({ crawlId: 'stolen', partitions: PARTITIONS, seenExpectedUrls: 4096 });
    const a = await owner(nats.url, settings);
    try {
      await until('A to serve every partition', () => a.owner.serving.length === PARTITIONS);
      const kv = (await openKvStores(nats.nc)).seen;
      // another process wrote the lease (as after a lapse A did not notice): A must let go
      await kv.put(leaseKey('seen-filter', 2), new TextEncoder().encode(JSON.stringify({ owner: 'someone-else', expires_at: Date.now() + 60_000 })));
      await until('A to stop serving partition 2', () => !a.owner.serving.includes(2), 5000);
      await sleep(LEASE_TTL_MS);
      assert.deepEqual(a.owner.serving, [0, 1, 3], 'and not take it back while the other lease is live');
    } finally {
      await a.owner.stop();
      await a.nc.close();
    }
  });
});
