import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  decodeAdmitted,
  decodeAdmittedBatch,
  decodeCandidate,
  decodeCandidates,
  decodeOutcome,
  encodeAdmittedBatch,
  encodeCandidate,
  encodeCandidates,
  encodeMessage,
  MAX_URLS_PER_BATCH,
  SchemaError,
  type AdmittedUrl,
  type CandidateUrl,
} from '../../schemas/index.js';
import { handleNormalize } from '../../stages/normalize/handle.js';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { KEY_STRIDE, PartitionSeenSet } from '../../stages/seen-filter/partition-seen-set.js';
import { decodeSnapshot, encodeSnapshot } from '../../stages/seen-filter/snapshot-codec.js';
import { readTail } from '../../stages/shared/politeness/host-slot.js';
import { hostQueueSubject, partitionOf } from '../../pipeline/partition.js';
import { createFakeContext, emitted, settleLikeRunner, stageInput } from '../support/fake-context.js';

const candidate = (url: string): CandidateUrl => {
  const host = new URL(url).hostname;
  return { v: 1, url, host, domain: host, depth: 1, source_url: null, via: 'link' };
};
const admitted = (url: string): AdmittedUrl => ({ ...candidate(url), fetch_id: `fid ${url}`, admitted_at: 5 });

describe('URL batches on the wire (schemas/url-batches.ts)', () => {
  test('a batch of one is the single URL, readable by the one-URL decoder (and streams written before batching read as batches of one)', () => {
    const one = candidate('https://example.com/a');
    assert.deepEqual(Buffer.from(encodeCandidates([one])), Buffer.from(encodeCandidate(one)));
    assert.deepEqual(decodeCandidate(encodeCandidates([one])), one);
    assert.deepEqual(decodeCandidates(encodeCandidate(one)), [one]);
    const a = admitted('https://example.com/a');
    assert.deepEqual(decodeAdmittedBatch(encodeAdmittedBatch([a])), [a]);
    assert.deepEqual(decodeAdmitted(encodeAdmittedBatch([a])), a);
  });

  test('a batch round-trips in order; sizes outside 1..MAX are refused on both sides', () => {
    const urls = Array.from({ length: MAX_URLS_PER_BATCH }, (_, i) => admitted(`https://example.com/${i}`));
    assert.deepEqual(decodeAdmittedBatch(encodeAdmittedBatch(urls)), urls);
    assert.throws(() => encodeCandidates([]), RangeError);
    assert.throws(() => encodeAdmittedBatch([...urls, urls[0]!]), RangeError);
    const tooMany = encodeMessage({ v: 1, urls: [...urls, urls[0]!] });
    assert.throws(() => decodeAdmittedBatch(tooMany), (e: Error) => e instanceof SchemaError && /at most 256/.test(e.message));
  });

  test('keys a newer writer added are dropped from each URL of a batch, as from a message of one', () => {
    const [a, b] = [candidate('https://example.com/a'), candidate('https://example.com/b')];
    const decoded = decodeCandidates(encodeMessage({ v: 1, urls: [{ ...a, added_later: 1 }, b] }));
    assert.deepEqual(decoded, [a, b]);
  });

  test('a malformed batch is a SchemaError naming the bad URL (the runner dead-letters it), never a partial batch', () => {
    const bad = encodeMessage({ v: 1, urls: [candidate('https://example.com/a'), { v: 1, url: 7 }] });
    assert.throws(() => decodeCandidates(bad), (e: Error) => e instanceof SchemaError && /candidate url batch: urls\.1\.url/.test(e.message));
    assert.throws(() => decodeCandidates(new Uint8Array([0xc1])), SchemaError);
    assert.throws(() => decodeCandidates(encodeMessage('just a string')), SchemaError);
  });
});

describe('normalize batches a page\'s candidates by partition', () => {
  test('one message per partition, each holding its hosts\' URLs in link order; more than MAX make several', async () => {
    const ctx = createFakeContext({ settings: { partitions: 4 } });
    await handleNormalize(stageInput({ kind: 'seed', seed: { url: 'https://example.com/' } }), ctx); // the scope: example.com
    const hosts = ['a.example.com', 'b.example.com', 'c.example.com', 'd.example.com', 'e.example.com'];
    const urls = [...hosts.map((h) => `https://${h}/`), ...Array.from({ length: MAX_URLS_PER_BATCH + 3 }, (_, i) => `https://a.example.com/p${i}`)];
    const out = await handleNormalize(stageInput({ kind: 'links', links: { v: 1, source_url: 'https://a.example.com/', depth: 1, via: 'link', links: urls.map((url) => ({ url })) } }), ctx);
    const messages = emitted(out).filter((e) => e.subject.startsWith('crawl.normalized.'));
    const byPartition = new Map<string, string[]>();
    for (const e of messages) {
      const batch = decodeCandidates(e.data);
      assert.ok(batch.length <= MAX_URLS_PER_BATCH);
      for (const c of batch) assert.equal(e.subject, `crawl.normalized.${partitionOf(c.host, 4)}`);
      byPartition.set(e.subject, [...(byPartition.get(e.subject) ?? []), ...batch.map((c) => c.url)]);
    }
    const partitions = new Set(hosts.map((h) => partitionOf(h, 4)));
    assert.equal(messages.length, partitions.size + 1, 'a partition with MAX + 4 URLs takes two messages');
    assert.deepEqual([...byPartition.values()].flat().sort(), [...urls].sort(), 'every candidate once');
    for (const list of byPartition.values()) assert.deepEqual(list, urls.filter((u) => list.includes(u)), 'in link order');
  });
});

describe('the gate queues each URL of a frontier batch', () => {
  test('one host-queue message per URL with its own msgId; every host\'s tail noted; a redelivery queues nothing twice', async () => {
    const ctx = createFakeContext();
    const urls = ['https://one.example/a', 'https://two.example/b', 'https://one.example/c'].map(admitted);
    const outcome = await handleGateIntake(stageInput(urls, { streamSeq: 40, subject: 'crawl.frontier.0' }), ctx);
    assert.equal(outcome.kind, 'emit');
    const queued = emitted(outcome);
    assert.deepEqual(queued.map((e) => e.msgId), ['hostq:40', 'hostq:40.1', 'hostq:40.2'], 'the first as a message of one URL had it');
    assert.deepEqual(queued.map((e) => e.subject), urls.map((u) => hostQueueSubject(u.host, ctx.settings.partitions)));
    assert.deepEqual(queued.map((e) => decodeAdmitted(e.data).url), urls.map((u) => u.url));
    const published = await settleLikeRunner(ctx, outcome);
    assert.equal((await readTail(ctx.kv.hosts, 'one.example'))?.tail_seq, Math.max(published[0]!.seq, published[2]!.seq));
    assert.equal((await readTail(ctx.kv.hosts, 'two.example'))?.tail_seq, published[1]!.seq);
    await settleLikeRunner(ctx, await handleGateIntake(stageInput(urls, { streamSeq: 40, deliveryCount: 2, subject: 'crawl.frontier.0' }), ctx));
    assert.equal(ctx.streams.on('crawl.hostq').length, 3, 'the redelivery\'s publishes were duplicates');
    assert.equal(ctx.metrics.total('politeness-gate', 'urls', 'queued'), 6);
  });
});

describe('the gate\'s trap budgets over a frontier batch', () => {
  test('a host\'s URLs are counted in order: those past its budget end as filtered, the rest are queued', async () => {
    const ctx = createFakeContext({ settings: { maxPagesPerHost: 2 } });
    const urls = ['https://one.example/a', 'https://one.example/b', 'https://two.example/c', 'https://one.example/d'].map(admitted);
    const out = emitted(await handleGateIntake(stageInput(urls, { streamSeq: 9, subject: 'crawl.frontier.0' }), ctx));
    assert.deepEqual(out.filter((e) => e.subject.startsWith('crawl.hostq.')).map((e) => decodeAdmitted(e.data).url), urls.slice(0, 3).map((u) => u.url));
    const filtered = out.filter((e) => e.subject.startsWith('crawl.outcomes.')).map((e) => decodeOutcome(e.data));
    assert.deepEqual(filtered.map((o) => [o.url, o.reason.split(':')[0]]), [['https://one.example/d', 'trap_host_budget']]);
  });
});

describe('seen-set snapshots from before batching', () => {
  test('a version 1 snapshot (unsettled entries keyed by sequence alone) still loads, as place 0 of each message', () => {
    const set = PartitionSeenSet.empty(1000, 10);
    set.check('https://example.com/a', 'k-a', 11);
    set.decide(11, 'admitted');
    set.check('https://example.com/b', 'k-b', 12);
    set.decide(12, 'over_limit');
    const v2 = encodeSnapshot(0, set);
    // the same snapshot as version 1 wrote it: version byte 1, each entry's key the bare sequence
    const v1 = v2.slice(0, v2.length - 8);
    const view = new DataView(v1.buffer);
    view.setUint8(4, 1);
    view.setUint16(6, 0, true); // no flags then: no exact record
    const entriesAt = v1.length - 2 * 9;
    for (let at = entriesAt; at < v1.length; at += 9) view.setFloat64(at, view.getFloat64(at, true) / KEY_STRIDE, true);
    const withSum = new Uint8Array(v2.length);
    withSum.set(v1);
    withSum.set(createHash('sha256').update(v1).digest().subarray(0, 8), v1.length);
    const back = decodeSnapshot(withSum, 0);
    assert.deepEqual(back.check('https://example.com/a', 'k-a', 11), { kind: 'again', decision: 'admitted' });
    assert.deepEqual(back.check('https://example.com/b', 'k-b', 12, 0), { kind: 'again', decision: 'over_limit' });
    assert.deepEqual(back.check('https://example.com/c', 'k-c', 12, 1), { kind: 'new' }, 'another place of the same message is its own candidate');
    assert.equal(back.confirmsHits, false, 'its Bloom hits are not confirmed: that version kept no exact record');
  });
});
