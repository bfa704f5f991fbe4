import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchIdOf, handleSeenFilter } from '../../stages/seen-filter/handle.js';
import { PartitionSeenSet } from '../../stages/seen-filter/partition-seen-set.js';
import { exactKeyOf } from '../../stages/seen-filter/exact-key.js';
import { partitionOf } from '../../pipeline/partition.js';
import { decodeAdmitted, decodeAdmittedBatch, decodeOutcome, type CandidateUrl } from '../../schemas/index.js';
import { createFakeContext, emitted, onlyOn, stageInput, T0, type FakeContext } from '../support/fake-context.js';

const candidate = (url: string, depth = 1): CandidateUrl => {
  const host = new URL(url).hostname;
  return { v: 1, url, host, domain: host.split('.').slice(-2).join('.'), depth, source_url: 'https://example.com/', via: 'link' };
};

/** one seen set per fake context: what the partition's owner holds */
const sets = new WeakMap<FakeContext, PartitionSeenSet>();
const seenSetOf = (ctx: FakeContext) => {
  let set = sets.get(ctx);
  if (!set) sets.set(ctx, (set = PartitionSeenSet.empty(10_000, 0)));
  return set;
};

const run = (ctx: FakeContext, c: CandidateUrl, streamSeq: number, deliveryCount = 1) =>
  handleSeenFilter(stageInput([c], { streamSeq, deliveryCount, subject: 'crawl.normalized.0' }), ctx, seenSetOf(ctx));

describe('seen-filter', () => {
  test('first time: admitted to crawl.frontier.<p> with a fetch_id', async () => {
    const ctx = createFakeContext();
    const c = candidate('https://www.example.com/a');
    const out = await run(ctx, c, 10);
    const a = onlyOn(out, 'crawl.frontier', decodeAdmitted);
    assert.deepEqual({ ...a, fetch_id: undefined }, { ...c, fetch_id: undefined, admitted_at: T0 });
    assert.match(a.fetch_id, /^[0-9a-f]{32}$/);
    const [e] = emitted(out);
    assert.equal(e!.subject, `crawl.frontier.${partitionOf(c.host, ctx.settings.partitions)}`);
    assert.equal(e!.msgId, `admit:${a.fetch_id}`);
    assert.equal(a.fetch_id, fetchIdOf(ctx.settings.crawlId, c.url), 'the fetch id depends on crawl id and URL only');
    assert.equal(seenSetOf(ctx).filter.count, 1, 'the seen set holds the URL');
    assert.equal(ctx.metrics.total('seen-filter', 'urls', 'admitted'), 1);
  });

  test('second time (another message, same URL): filtered with an empty emit', async () => {
    const ctx = createFakeContext();
    const c = candidate('https://www.example.com/a');
    await run(ctx, c, 10);
    ctx.clock.advance(1000);
    assert.deepEqual(emitted(await run(ctx, c, 11)), []);
    // also from a different source, depth or via: the URL alone decides
    assert.deepEqual(emitted(await run(ctx, { ...c, depth: 0, via: 'seed', source_url: null }, 12)), []);
    assert.equal(ctx.metrics.total('seen-filter', 'urls', 'seen'), 2);
  });

  test('a new crawl (a recrawl, with its own seen set) admits the URL again, with a new fetch id', async () => {
    const first = createFakeContext({ settings: { crawlId: 'crawl-1' } });
    const c = candidate('https://www.example.com/a');
    const a1 = onlyOn(await run(first, c, 10), 'crawl.frontier', decodeAdmitted);
    const second = createFakeContext({ settings: { crawlId: 'crawl-2' }, kv: { seen: first.kv.seen } });
    const a2 = onlyOn(await run(second, c, 11), 'crawl.frontier', decodeAdmitted);
    assert.notEqual(a2.fetch_id, a1.fetch_id);
    assert.deepEqual(emitted(await run(second, c, 12)), [], 'and only once per crawl');
  });

  test('redelivery of the same message after admission re-emits the same admission', async () => {
    const ctx = createFakeContext();
    const c = candidate('https://www.example.com/a');
    const first = emitted(await run(ctx, c, 10));
    ctx.clock.advance(30_000); // redelivered after ack wait
    const again = emitted(await run(ctx, c, 10, 2));
    assert.equal(again.length, 1);
    assert.equal(again[0]!.msgId, first[0]!.msgId, 'same msgId: JetStream drops the second publish');
    assert.equal(decodeAdmitted(again[0]!.data).fetch_id, decodeAdmitted(first[0]!.data).fetch_id, 'same fetch_id');
    // and a later, different message with that URL is still filtered
    assert.deepEqual(emitted(await run(ctx, c, 11)), []);
  });

  test('different URLs get different fetch ids; the same URL in another crawl gets another id', async () => {
    const ctx = createFakeContext();
    const a = onlyOn(await run(ctx, candidate('https://example.com/a'), 1), 'crawl.frontier', decodeAdmitted);
    const b = onlyOn(await run(ctx, candidate('https://example.com/b'), 2), 'crawl.frontier', decodeAdmitted);
    const other = createFakeContext({ settings: { crawlId: 'other' } });
    const a2 = onlyOn(await run(other, candidate('https://example.com/a'), 1), 'crawl.frontier', decodeAdmitted);
    assert.notEqual(a.fetch_id, b.fetch_id);
    assert.notEqual(a.fetch_id, a2.fetch_id);
  });

  test('maxPages: admissions past the limit become filtered outcomes', async () => {
    const ctx = createFakeContext({ settings: { maxPages: 2 } });
    const verdicts: string[] = [];
    for (let i = 0; i < 4; i++) {
      const out = await run(ctx, candidate(`https://example.com/p${i}`, 3), 100 + i);
      const [e] = emitted(out);
      verdicts.push(e!.subject.split('.')[1]!);
      if (i >= 2) {
        const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
        assert.equal(o.outcome, 'filtered');
        assert.match(o.reason, /^max_pages: /);
        assert.equal(o.url, `https://example.com/p${i}`);
        assert.equal(o.depth, 3);
        assert.equal(o.fetch_id, null);
        assert.equal(e!.subject, `crawl.outcomes.${partitionOf('example.com', ctx.settings.partitions)}`);
      }
    }
    assert.deepEqual(verdicts, ['frontier', 'frontier', 'outcomes', 'outcomes']);
    assert.equal(ctx.metrics.total('seen-filter', 'urls', 'max_pages'), 2);
    // a URL already seen is filtered silently, not counted against the limit again
    assert.deepEqual(emitted(await run(ctx, candidate('https://example.com/p0'), 200)), []);
  });

  test(
    'maxPages: a redelivered over-the-limit candidate stays filtered',
    async () => {
      const ctx = createFakeContext({ settings: { maxPages: 1 } });
      onlyOn(await run(ctx, candidate('https://example.com/a'), 1), 'crawl.frontier', decodeAdmitted);
      onlyOn(await run(ctx, candidate('https://example.com/b'), 2), 'crawl.outcomes', decodeOutcome);
      // the runner crashed before acking: the same message comes again
      const again = await run(ctx, candidate('https://example.com/b'), 2, 2);
      assert.equal(emitted(again).filter((e) => e.subject.startsWith('crawl.frontier.')).length, 0);
    },
  );

  test('maxPages 0 means no limit', async () => {
    const ctx = createFakeContext({ settings: { maxPages: 0 } });
    for (let i = 0; i < 20; i++) {
      onlyOn(await run(ctx, candidate(`https://example.com/p${i}`), i + 1), 'crawl.frontier', decodeAdmitted);
    }
  });

  test('a KV error on the page counter propagates (the runner retries), and the retry still admits the URL', async () => {
    const ctx = createFakeContext({ settings: { maxPages: 10 } });
    const seen = ctx.kv.seen;
    const { get, create, update } = seen;
    seen.get = seen.create = seen.update = async () => {
      throw new Error('kv unavailable');
    };
    await assert.rejects(run(ctx, candidate('https://example.com/a'), 1), /kv unavailable/);
    Object.assign(seen, { get, create, update });
    onlyOn(await run(ctx, candidate('https://example.com/a'), 1, 2), 'crawl.frontier', decodeAdmitted);
    assert.deepEqual(emitted(await run(ctx, candidate('https://example.com/a'), 2)), [], 'and another message with it is seen');
  });

  test('after a takeover, a replayed message above the ack floor is admitted again when redelivered; one at or below it is seen', async () => {
    const ctx = createFakeContext();
    const set = seenSetOf(ctx);
    set.replay('https://example.com/acked', 5, 6);
    set.replay('https://example.com/in-flight', 7, 6, 0, exactKeyOf('test', 'https://example.com/in-flight'));
    set.settle(6);
    // the previous owner wrote the key of what it decided before it acked
    await ctx.kv.seenKeys.put(exactKeyOf('test', 'https://example.com/acked'), new Uint8Array(0));
    assert.deepEqual(emitted(await run(ctx, candidate('https://example.com/acked'), 9)), []);
    const again = onlyOn(await run(ctx, candidate('https://example.com/in-flight'), 7, 2), 'crawl.frontier', decodeAdmitted);
    assert.equal(again.fetch_id, fetchIdOf(ctx.settings.crawlId, 'https://example.com/in-flight'), 'the fetch id the previous owner used');
    assert.deepEqual(emitted(await run(ctx, candidate('https://example.com/in-flight'), 8)), [], 'a later message with it is seen');
  });

  describe('a message of several candidates (a page\'s batch)', () => {
    const runBatch = (ctx: FakeContext, cs: CandidateUrl[], streamSeq: number, deliveryCount = 1) =>
      handleSeenFilter(stageInput(cs, { streamSeq, deliveryCount, subject: 'crawl.normalized.0' }), ctx, seenSetOf(ctx));

    test('the new URLs go out as one frontier message, in order; a URL seen before is dropped', async () => {
      const ctx = createFakeContext();
      await run(ctx, candidate('https://example.com/old'), 1);
      const urls = ['https://example.com/a', 'https://example.com/old', 'https://example.com/b'];
      const out = await runBatch(ctx, urls.map((u) => candidate(u)), 2);
      const [e, ...rest] = emitted(out);
      assert.deepEqual(rest, []);
      assert.equal(e!.subject, `crawl.frontier.${partitionOf('example.com', ctx.settings.partitions)}`);
      const admitted = decodeAdmittedBatch(e!.data);
      assert.deepEqual(admitted.map((a) => a.url), ['https://example.com/a', 'https://example.com/b']);
      assert.deepEqual(admitted.map((a) => a.fetch_id), [fetchIdOf('test', urls[0]!), fetchIdOf('test', urls[2]!)]);
      assert.equal(e!.msgId, `admits:2:0:${admitted[0]!.fetch_id}`);
      assert.equal(ctx.metrics.total('seen-filter', 'urls', 'admitted'), 3);
      assert.equal(ctx.metrics.total('seen-filter', 'urls', 'seen'), 1);
    });

    test('a redelivery repeats each URL\'s decision: the same message and msgId, so the frontier drops it', async () => {
      const ctx = createFakeContext({ settings: { maxPages: 3 } });
      await run(ctx, candidate('https://example.com/first'), 1);
      const batch = ['a', 'b', 'c', 'd'].map((p) => candidate(`https://example.com/${p}`));
      const first = emitted(await runBatch(ctx, batch, 2));
      ctx.clock.advance(30_000);
      const again = emitted(await runBatch(ctx, batch, 2, 2));
      assert.deepEqual(again.map((e) => [e.subject, e.msgId]), first.map((e) => [e.subject, e.msgId]));
      const frontier = again.filter((e) => e.subject.startsWith('crawl.frontier.'));
      assert.deepEqual(frontier.flatMap((e) => decodeAdmittedBatch(e.data).map((a) => a.url)), ['https://example.com/a', 'https://example.com/b']);
      // the page limit (3) was reached at b: c and d are over it, the first time and the second
      const over = again.filter((e) => e.subject.startsWith('crawl.outcomes.')).map((e) => decodeOutcome(e.data));
      assert.deepEqual(over.map((o) => [o.url, o.outcome]), [['https://example.com/c', 'filtered'], ['https://example.com/d', 'filtered']]);
      assert.equal(await ctx.kv.seen.get(`admitted-count.test`).then((e) => JSON.parse(Buffer.from(e!.value).toString())), 5, 'counted once: the redelivery decided nothing new');
    });

    test('after a takeover, a replayed batch above the ack floor admits its URLs again when redelivered', async () => {
      const ctx = createFakeContext();
      const set = seenSetOf(ctx);
      set.replay('https://example.com/x', 7, 6, 0);
      set.replay('https://example.com/y', 7, 6, 1);
      set.settle(6);
      const out = emitted(await runBatch(ctx, [candidate('https://example.com/x'), candidate('https://example.com/y')], 7, 2));
      assert.deepEqual(out.flatMap((e) => decodeAdmittedBatch(e.data).map((a) => a.url)), ['https://example.com/x', 'https://example.com/y']);
      assert.deepEqual(emitted(await runBatch(ctx, [candidate('https://example.com/y')], 8)), [], 'a later message with one of them is seen');
    });
  });

  describe('Bloom hits confirmed against the exact record', () => {
    /** a set whose filter answers "probably seen" for every URL: each new URL is a false positive */
    const saturated = () => {
      const set = PartitionSeenSet.empty(1024, 0);
      for (const slice of set.filter.slices) slice.bits.fill(0xff);
      return set;
    };
    /** counts the exact record's reads and writes */
    const counting = (ctx: FakeContext) => {
      const ops = { get: 0, put: 0 };
      const { get, put } = ctx.kv.seenKeys;
      ctx.kv.seenKeys.get = (k) => ((ops.get += 1), get.call(ctx.kv.seenKeys, k));
      ctx.kv.seenKeys.put = (k, v) => ((ops.put += 1), put.call(ctx.kv.seenKeys, k, v));
      return ops;
    };
    const handle = (ctx: FakeContext, set: PartitionSeenSet, urls: string[], streamSeq: number, deliveryCount = 1) =>
      handleSeenFilter(stageInput(urls.map((u) => candidate(u)), { streamSeq, deliveryCount, subject: 'crawl.normalized.0' }), ctx, set);
    const frontierUrls = (out: Awaited<ReturnType<typeof handle>>) => emitted(out).filter((e) => e.subject.startsWith('crawl.frontier.')).flatMap((e) => decodeAdmittedBatch(e.data).map((a) => a.url));

    test('a new URL the Bloom filter takes for seen is admitted, once, and its key written before the outcome', async () => {
      const ctx = createFakeContext();
      const ops = counting(ctx);
      const set = saturated();
      assert.deepEqual(frontierUrls(await handle(ctx, set, ['https://example.com/a', 'https://example.com/b'], 1)), ['https://example.com/a', 'https://example.com/b']);
      assert.deepEqual(ops, { get: 2, put: 2 }, 'one read per hit (both in one go), one write per URL decided');
      assert.equal(ctx.metrics.total('seen-filter', 'bloom_hits', 'false_positive'), 2);
      // a later message with one of them: seen, from the keys this process recorded, no read
      assert.deepEqual(frontierUrls(await handle(ctx, set, ['https://example.com/a'], 2)), []);
      assert.equal(ops.get, 2);
      // a process that takes the partition over (no recent keys) reads the record: seen
      const taken = saturated();
      assert.deepEqual(frontierUrls(await handle(ctx, taken, ['https://example.com/b', 'https://example.com/c'], 3)), ['https://example.com/c']);
      assert.equal(ops.get, 4);
      assert.equal(ctx.metrics.total('seen-filter', 'bloom_hits', 'in_record'), 1);
      assert.ok(await ctx.kv.seenKeys.get(exactKeyOf('test', 'https://example.com/a')), 'the key is in the exact record');
    });

    test('two messages with the same falsely-hit URL at once: the first admits it, the second sees it', async () => {
      const ctx = createFakeContext();
      const set = saturated();
      const [one, two] = await Promise.all([handle(ctx, set, ['https://example.com/x'], 1), handle(ctx, set, ['https://example.com/x'], 2)]);
      assert.deepEqual([...frontierUrls(one), ...frontierUrls(two)], ['https://example.com/x']);
    });

    test('a URL still being decided by one message is seen by another without a read', async () => {
      const ctx = createFakeContext();
      const ops = counting(ctx);
      const set = PartitionSeenSet.empty(1024, 0);
      let release!: () => void;
      const put = ctx.kv.seenKeys.put;
      ctx.kv.seenKeys.put = async (k, v) => {
        await new Promise<void>((r) => (release = r));
        return put.call(ctx.kv.seenKeys, k, v);
      };
      const first = handle(ctx, set, ['https://example.com/slow'], 1);
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(frontierUrls(await handle(ctx, set, ['https://example.com/slow'], 2)), [], 'seen while the first one writes its key');
      release();
      assert.deepEqual(frontierUrls(await first), ['https://example.com/slow']);
      assert.equal(ops.get, 0);
    });

    test('a failed write fails the message; its redelivery admits the URL and writes the key', async () => {
      const ctx = createFakeContext();
      const set = saturated();
      const put = ctx.kv.seenKeys.put;
      ctx.kv.seenKeys.put = async () => {
        throw new Error('kv unavailable');
      };
      await assert.rejects(handle(ctx, set, ['https://example.com/a'], 1), /kv unavailable/);
      ctx.kv.seenKeys.put = put;
      assert.deepEqual(frontierUrls(await handle(ctx, set, ['https://example.com/a'], 1, 2)), ['https://example.com/a']);
      assert.ok(await ctx.kv.seenKeys.get(exactKeyOf('test', 'https://example.com/a')));
      assert.deepEqual(frontierUrls(await handle(ctx, saturated(), ['https://example.com/a'], 2)), [], 'and a new owner finds it');
    });

    test('a URL over the page limit is recorded too: a later link to it gets no second row', async () => {
      const ctx = createFakeContext({ settings: { maxPages: 1 } });
      const set = saturated();
      await handle(ctx, set, ['https://example.com/a', 'https://example.com/b'], 1);
      assert.ok(await ctx.kv.seenKeys.get(exactKeyOf('test', 'https://example.com/b')));
      assert.deepEqual(emitted(await handle(ctx, saturated(), ['https://example.com/b'], 2)), []);
    });

    test('a set begun by a version without the exact record takes hits as seen and writes no keys', async () => {
      const ctx = createFakeContext();
      const ops = counting(ctx);
      const old = new PartitionSeenSet(saturated().filter, 0, false);
      assert.deepEqual(frontierUrls(await handle(ctx, old, ['https://example.com/a'], 1)), []);
      assert.deepEqual(ops, { get: 0, put: 0 });
    });
  });
});
