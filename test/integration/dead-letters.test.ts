import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { jetstream, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { applyCrawlTopology } from '../../ops/nats/crawl-topology.js';
import { EDGES } from '../../topology/index.js';
import { encodeCandidate, encodeDeadLetter, encodeSeed } from '../../schemas/index.js';
import { startTestNats } from '../support/nats-server.js';
import { runCli } from '../support/crawl-cli.js';

const DLQ = EDGES.deadletter.stream;

interface Original {
  stream: string;
  subject: string;
  seq: number;
  data: Uint8Array;
}

/** Publishes `data` on `subject` (as an upstream stage would), then dead-letters it exactly as the runner does. */
async function deadLetterLike(
  js: JetStreamClient,
  stage: string,
  subject: string,
  data: Uint8Array,
  reason: string,
  deliveryCount: number,
): Promise<Original & { dlqSeq: number }> {
  const orig = await js.publish(subject, data);
  const h = natsHeaders();
  h.set('Crawl-Dead-Letter-Reason', reason.slice(0, 500).replace(/[\r\n]/g, ' '));
  const letter = encodeDeadLetter({
    v: 1,
    stage,
    subject,
    stream_seq: orig.seq,
    delivery_count: deliveryCount,
    reason,
    failed_at: Date.parse('2025-01-02T03:04:05.678Z'),
    data,
  });
  const ack = await js.publish(`crawl.dlq.${stage}`, letter, { msgID: `dlq:${orig.stream}:${orig.seq}`, headers: h });
  return { stream: orig.stream, subject, seq: orig.seq, data, dlqSeq: ack.seq };
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

describe('crawl dead-letters against a real nats-server', () => {
  let server: Awaited<ReturnType<typeof startTestNats>>;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let js: JetStreamClient;
  let env: NodeJS.ProcessEnv;
  const letters: Array<Original & { dlqSeq: number }> = [];
  const longReason = `handler failed 6 times: KV unavailable\n${'x'.repeat(200)} second line`;

  before(async () => {
    server = await startTestNats();
    nc = await connectNats(server.url, 'test');
    jsm = await applyCrawlTopology(nc);
    js = jetstream(nc);
    env = { NATS_URL: server.url };
  });
  after(async () => {
    await nc?.close();
    await server?.cleanup();
  });

  it('an empty DLQ prints "no dead letters" and exits 0 (json: [])', async () => {
    const r = await runCli(['dead-letters'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'no dead letters');
    const j = await runCli(['dead-letters', '--format', 'json'], env);
    assert.equal(j.code, 0, j.stderr);
    assert.deepEqual(JSON.parse(j.stdout), []);
  });

  it('lists letters oldest first in a table: one line each, reason cut, url or byte length as preview', async () => {
    const host = 'h1.example.com';
    const candidate = encodeCandidate({ v: 1, url: `http://${host}/a`, host, domain: 'example.com', depth: 0, source_url: null, via: 'seed' });
    letters.push(await deadLetterLike(js, 'seen-filter', 'crawl.normalized.3', candidate, longReason, 6));
    letters.push(await deadLetterLike(js, 'normalize', 'crawl.seeds', encodeSeed({ url: 'http://seed.example.com/' }), 'decoding seed: bad', 1));
    letters.push(await deadLetterLike(js, 'fetch', 'crawl.ready.1', new Uint8Array([0xc1, 0xff, 0x00]), 'decoding fetch grant: not valid msgpack', 1));
    const other = encodeCandidate({ v: 1, url: `http://${host}/b`, host, domain: 'example.com', depth: 1, source_url: null, via: 'link' });
    letters.push(await deadLetterLike(js, 'seen-filter', 'crawl.normalized.3', other, 'handler failed 6 times: boom', 6));

    const r = await runCli(['dead-letters'], env);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^\s*seq \| stage\s+\| failed_at\s+\| deliveries \| subject\s+\| stream_seq \| reason\s+\| payload$/);
    assert.equal(lines.length, 2 + 4 + 1, r.stdout);
    const rows = lines.slice(2, 6);
    assert.deepEqual(
      rows.map((l) => Number(l.split('|')[0])),
      letters.map((l) => l.dlqSeq),
    );
    assert.match(rows[0]!, /seen-filter \| 2025-01-02T03:04:05\.678Z \|\s+6 \| crawl\.normalized\.3\s+\|\s+1 \| handler failed 6 times: KV unavailable\\nx+… \| http:\/\/h1\.example\.com\/a$/);
    assert.ok(!r.stdout.includes('second line'), 'the reason is truncated');
    assert.match(rows[1]!, /normalize .*crawl\.seeds .*http:\/\/seed\.example\.com\/$/);
    assert.match(rows[2]!, /fetch .*crawl\.ready\.1 .*\| 3 bytes$/);
    assert.equal(lines[6], '(4 dead letters)');
  });

  it('lists as json, with every field', async () => {
    const r = await runCli(['dead-letters', '--format', 'json'], env);
    assert.equal(r.code, 0, r.stderr);
    const list = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    assert.equal(list.length, 4);
    assert.deepEqual(list[0], {
      seq: letters[0]!.dlqSeq,
      stage: 'seen-filter',
      failed_at: '2025-01-02T03:04:05.678Z',
      delivery_count: 6,
      subject: 'crawl.normalized.3',
      stream: 'CRAWL_NORMALIZED',
      stream_seq: letters[0]!.seq,
      reason: longReason,
      url: 'http://h1.example.com/a',
      bytes: letters[0]!.data.length,
      preview: 'http://h1.example.com/a',
    });
    assert.equal(list[2]!.url, null);
    assert.equal(list[2]!.preview, '3 bytes');
    assert.deepEqual(
      list.map((l) => l.stage),
      ['seen-filter', 'normalize', 'fetch', 'seen-filter'],
    );
  });

  it('--stage filters by stage and --limit caps the list', async () => {
    const s = await runCli(['dead-letters', '--stage', 'seen-filter', '--format', 'json'], env);
    assert.equal(s.code, 0, s.stderr);
    assert.deepEqual(
      (JSON.parse(s.stdout) as Array<{ seq: number }>).map((l) => l.seq),
      [letters[0]!.dlqSeq, letters[3]!.dlqSeq],
    );
    const none = await runCli(['dead-letters', '--stage', 'persist'], env);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout.trim(), 'no dead letters for stage persist');

    const l = await runCli(['dead-letters', '--limit', '2'], env);
    assert.equal(l.code, 0, l.stderr);
    const lines = l.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2 + 2 + 1);
    assert.deepEqual(
      lines.slice(2, 4).map((x) => Number(x.split('|')[0])),
      [letters[0]!.dlqSeq, letters[1]!.dlqSeq],
    );
    assert.match(lines[4]!, /^\(2 of 4 dead letters; /);
  });

  it('--requeue republishes the original bytes to the original subject, deletes the letter, and is safe to run again', async () => {
    const [first, , , second] = letters as [Original & { dlqSeq: number }, unknown, unknown, Original & { dlqSeq: number }];
    // an earlier requeue that was interrupted after publishing the second letter but before deleting it
    const earlier = await js.publish(second.subject, second.data, { msgID: `requeue:${second.dlqSeq}` });
    const before = (await jsm.streams.info(EDGES.normalized.stream)).state.messages;

    const r = await runCli(['dead-letters', '--stage', 'seen-filter', '--requeue'], env);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 3, r.stdout);
    assert.match(lines[0]!, new RegExp(`^requeued #${first.dlqSeq} seen-filter: crawl\\.normalized\\.3 -> CRAWL_NORMALIZED #\\d+ `));
    assert.match(lines[1]!, new RegExp(`^requeued #${second.dlqSeq} seen-filter: .* #${earlier.seq} \\(already published by an earlier requeue\\)`));
    assert.equal(lines[2], 'requeued 2 dead letters');

    // the first letter's original is on its subject again, byte for byte, after the original
    const republished = await jsm.streams.getMessage(EDGES.normalized.stream, { seq: before + 1 });
    assert.equal(republished!.subject, 'crawl.normalized.3');
    assert.ok(republished!.seq > first.seq);
    assert.deepEqual([...republished!.data], [...first.data]);
    assert.equal((await jsm.streams.info(EDGES.normalized.stream)).state.messages, before + 1, 'the second letter was not published twice');

    // both letters are gone from the DLQ; the others stay
    for (const seq of [first.dlqSeq, second.dlqSeq]) {
      assert.equal(await jsm.direct.getMessage(DLQ, { seq, next_by_subj: 'crawl.dlq.seen-filter' }).then((m) => m?.seq ?? null), null);
    }
    assert.equal((await jsm.streams.info(DLQ)).state.messages, 2);

    const again = await runCli(['dead-letters', '--stage', 'seen-filter', '--requeue'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout.trim(), 'no dead letters for stage seen-filter');
  });

  it('--requeue --format json reports where each letter went; a seed goes back to crawl.seeds', async () => {
    const seed = letters[1]!;
    const r = await runCli(['dead-letters', '--stage', 'normalize', '--requeue', '--format', 'json'], env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Array<{ seq: number; requeued_to: { stream: string; seq: number; duplicate: boolean } }>;
    assert.equal(out.length, 1);
    assert.equal(out[0]!.seq, seed.dlqSeq);
    assert.equal(out[0]!.requeued_to.stream, EDGES.discovered.stream);
    assert.equal(out[0]!.requeued_to.duplicate, false);
    assert.match(r.stderr, /requeued 1 dead letter\b/);
    const m = await jsm.streams.getMessage(EDGES.discovered.stream, { seq: out[0]!.requeued_to.seq });
    assert.equal(m!.subject, 'crawl.seeds');
    assert.deepEqual([...m!.data], [...seed.data]);

    // only the fetch letter is left, and reading left no consumer behind
    const rest = JSON.parse((await runCli(['dead-letters', '--format', 'json'], env)).stdout) as Array<{ stage: string }>;
    assert.deepEqual(
      rest.map((l) => l.stage),
      ['fetch'],
    );
    const consumers = [];
    for await (const c of jsm.consumers.list(DLQ)) consumers.push(c.name);
    assert.deepEqual(consumers, []);
  });

  it('bad arguments and an unreachable server: one line on stderr, exit 2', async () => {
    const port = await freePort();
    const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-dlq-'));
    try {
      const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
        [['dead-letters', '--stage', 'Bogus!'], env, /--stage must be one of normalize, seen-filter.*or a stage module's name/],
        [['dead-letters', '--format', 'csv'], env, /--format must be one of table, json/],
        [['dead-letters', '--limit', '0'], env, /--limit must be between 1 and/],
        [['dead-letters', '--limit', 'ten'], env, /--limit must be a whole number/],
        [['dead-letters'], { NATS_URL: `nats://127.0.0.1:${port}` }, /cannot reach the crawl's NATS server/],
        [['dead-letters', '--out', out], { NATS_URL: '' }, /no running crawl/],
      ];
      await Promise.all(
        cases.map(async ([args, e, re]) => {
          const r = await runCli(args, e, 20_000);
          assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
          assert.match(r.stderr, re);
          assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
          assert.equal(r.stdout, '');
        }),
      );
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
