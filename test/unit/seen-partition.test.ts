import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeCandidate, type CandidateUrl } from '../../schemas/index.js';
import { seenFilterStage } from '../../stages/seen-filter/index.js';
import { openSeenPartition } from '../../stages/seen-filter/partition.js';
import { createFakeContext, emitted, stageInput, type FakeContext } from '../support/fake-context.js';

const candidate = (path: string): CandidateUrl => ({ v: 1, url: `https://example.com/${path}`, host: 'example.com', domain: 'example.com', depth: 1, source_url: null, via: 'link' });

/** publishes candidates on partition 0 as normalize would; returns their stream sequences */
const publish = (ctx: FakeContext, ...paths: string[]) => Promise.all(paths.map((p) => ctx.streams.append('crawl.normalized.0', encodeCandidate(candidate(p)))));

describe('seen-filter partition: open, snapshot, takeover', () => {
  test('a new crawl starts empty and saves a snapshot at once; a takeover loads it and replays the rest of the stream', async () => {
    const ctx = createFakeContext({ settings: { partitions: 1 } });
    const first = await openSeenPartition(seenFilterStage, 0, ctx);
    assert.equal(first.seen.filter.count, 0);
    assert.ok(await ctx.kv.seen.get(`snapshot.${ctx.settings.crawlId}.p0`), 'snapshot manifest written on open');

    const seqs = await publish(ctx, 'a', 'b', 'c');
    for (const [i, seq] of seqs.entries()) {
      const out = await first.def.handle(stageInput([candidate(['a', 'b', 'c'][i]!)], { streamSeq: seq, subject: 'crawl.normalized.0' }), ctx);
      assert.equal(emitted(out).length, 1);
    }
    ctx.streams.positions.set('seen-filter-p0', { ackFloor: seqs[2]!, delivered: seqs[2]!, pending: 0 });
    await first.close();

    // the first owner dies after handling two more messages; one (d) never got acked
    const [seqD, seqA2] = await publish(ctx, 'd', 'a');
    await first.def.handle(stageInput([candidate('d')], { streamSeq: seqD!, subject: 'crawl.normalized.0' }), ctx);
    await first.def.handle(stageInput([candidate('a')], { streamSeq: seqA2!, subject: 'crawl.normalized.0' }), ctx);
    ctx.streams.positions.set('seen-filter-p0', { ackFloor: seqD! - 1, delivered: seqA2!, pending: 0 });

    const second = await openSeenPartition(seenFilterStage, 0, ctx);
    assert.equal(second.replayed, 2, 'replayed the two messages after the snapshot');
    const handle = (path: string, seq: number, deliveryCount = 1) => second.def.handle(stageInput([candidate(path)], { streamSeq: seq, deliveryCount, subject: 'crawl.normalized.0' }), ctx);
    assert.equal(emitted(await handle('d', seqD!, 2)).length, 1, 'the unacked admission of d is repeated');
    assert.deepEqual(emitted(await handle('b', 99)), [], 'b, from the snapshot, is seen');
    assert.deepEqual(emitted(await handle('d', 100)), [], 'd, from the replay, is seen by a new message');
    assert.equal(emitted(await handle('e', 101)).length, 1, 'a new URL is admitted');
  });

  test('a corrupt snapshot stops the partition from opening with a clear error', async () => {
    const ctx = createFakeContext({ settings: { partitions: 1 } });
    const open = await openSeenPartition(seenFilterStage, 0, ctx);
    await open.close();
    const manifest = JSON.parse(new TextDecoder().decode((await ctx.kv.seen.get(`snapshot.${ctx.settings.crawlId}.p0`))!.value));
    const chunkKey = `snapshot.${ctx.settings.crawlId}.p0.g${manifest.generation}-${manifest.token}.c0`;
    const chunk = (await ctx.kv.seen.get(chunkKey))!.value.slice();
    chunk[30] ^= 0xff;
    await ctx.kv.seen.put(chunkKey, chunk);
    await assert.rejects(openSeenPartition(seenFilterStage, 0, ctx), /seen-set snapshot of partition 0: checksum mismatch/);
  });

  test('a checkpoint of a partition that handled nothing since asks the server nothing; one with a new URL settles it', async () => {
    const ctx = createFakeContext({ settings: { partitions: 1 } });
    const part = await openSeenPartition(seenFilterStage, 0, ctx);
    let asked = 0;
    const position = ctx.streams.consumerPosition.bind(ctx.streams);
    ctx.streams.consumerPosition = (stream, durable) => {
      asked += 1;
      return position(stream, durable);
    };
    await part.checkpoint();
    assert.equal(asked, 0, 'an idle partition reads no consumer position');

    const [seq] = await publish(ctx, 'x');
    await part.def.handle(stageInput([candidate('x')], { streamSeq: seq!, subject: 'crawl.normalized.0' }), ctx);
    ctx.streams.positions.set('seen-filter-p0', { ackFloor: seq!, delivered: seq!, pending: 0 });
    await part.checkpoint();
    assert.ok(asked >= 1, 'a partition with a new URL reads its ack floor');
    assert.equal(part.seen.unsettledCount, 0, 'the handled message is settled');
  });
});

