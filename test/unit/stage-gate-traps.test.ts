import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { serveHost } from '../../stages/politeness-gate/serve-host.js';
import { handleSimhash } from '../../stages/simhash/handle.js';
import { parseJsonValue } from '../../pipeline/kv-store.js';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { decodeAdmitted, decodeGrant, decodeOutcome, type AdmittedUrl, type ExtractedPage } from '../../schemas/index.js';
import { notePage, patternKey, tallyKey, type TrapTally } from '../../stages/shared/traps/trap-tally.js';
import { readTail, releaseSlot } from '../../stages/shared/politeness/host-slot.js';
import { createFakeContext, decodedOn, httpResponse, queuedOnly, settleLikeRunner, stageInput, type FakeContext } from '../support/fake-context.js';

const HOST = 'cal.example';
const RELEASE = { adaptiveDelayFactor: 0, backoffBaseMs: 1000, maxBackoffMs: 60_000, pauseAfterFailures: 5, pauseMs: 60_000 };
let seq = 0;

const admitted = (path: string, extra: Partial<AdmittedUrl> = {}): AdmittedUrl => ({
  v: 1,
  url: `http://${HOST}${path}`,
  host: HOST,
  domain: 'cal.example',
  depth: 1,
  source_url: null,
  via: 'link',
  fetch_id: `fid-${path}-${extra.attempt ?? 0}`,
  admitted_at: 0,
  ...extra,
});

/** the intake's outcome, settled as the runner would (the host-queue message published, the tail noted) */
async function intake(ctx: FakeContext, m: AdmittedUrl, deliveryCount = 1, streamSeq = ++seq) {
  const outcome = await handleGateIntake(stageInput([m], { subject: 'crawl.frontier.0', streamSeq, deliveryCount }), ctx);
  await settleLikeRunner(ctx, outcome);
  return outcome;
}

const queued = (ctx: FakeContext) => ctx.streams.on('crawl.hostq').length;
const tallyOf = async (ctx: FakeContext) => parseJsonValue<TrapTally>((await ctx.kv.traps.get(tallyKey(HOST)))!.value);

describe('politeness-gate intake: crawl-trap defences', () => {
  test('past the pattern budget a URL is not queued but ends as filtered, saying why', async () => {
    const ctx = createFakeContext({ settings: { maxUrlsPerPattern: 2 } });
    // each day found on the day before: the way a calendar leads to more of itself
    const onDayBefore = (day: string) => ({ source_url: `http://${HOST}/cal/2026/11/${String(Number(day) - 1).padStart(2, '0')}` });
    for (const day of ['01', '02']) assert.ok(queuedOnly(await intake(ctx, admitted(`/cal/2026/11/${day}`, onDayBefore(day)))));
    const outcome = await intake(ctx, admitted('/cal/2026/11/03', onDayBefore('03')));
    const [row] = decodedOn(outcome, 'crawl.outcomes', decodeOutcome);
    assert.equal(row!.outcome, 'filtered');
    assert.equal(row!.url, `http://${HOST}/cal/2026/11/03`);
    assert.equal(row!.reason, `trap_pattern_budget: pattern ${HOST}/cal/<n>/<n>/<n> produced 2 URLs`);
    assert.equal(queued(ctx), 2);
    // a URL of another pattern still goes through
    await intake(ctx, admitted('/about.html'));
    assert.equal(queued(ctx), 3);
  });

  test('past the host budget', async () => {
    const ctx = createFakeContext({ settings: { maxPagesPerHost: 1 } });
    await intake(ctx, admitted('/a'));
    const [row] = decodedOn(await intake(ctx, admitted('/b')), 'crawl.outcomes', decodeOutcome);
    assert.match(row!.reason, /^trap_host_budget: host cal\.example reached its budget of 1 pages$/);
  });

  test('a redelivered message is neither counted again nor dropped: it is queued once', async () => {
    const ctx = createFakeContext({ settings: { maxUrlsPerPattern: 1 } });
    const m = admitted('/cal/2026/11/01');
    const s = ++seq;
    await intake(ctx, m, 1, s);
    // the first delivery died before its ack: the same message comes again
    assert.ok(queuedOnly(await intake(ctx, m, 2, s)));
    assert.equal(queued(ctx), 1, 'one copy in the host queue');
    assert.equal((await tallyOf(ctx)).urls, 1, 'counted once');
    assert.equal((await readTail(ctx.kv.hosts, HOST))?.tail_seq, ctx.streams.on('crawl.hostq')[0]!.seq);
  });

  test('a retry of a fetch (attempt > 0) was counted when new: it is queued even over budget', async () => {
    const ctx = createFakeContext({ settings: { maxUrlsPerPattern: 1 } });
    await intake(ctx, admitted('/cal/2026/11/01'));
    assert.ok(queuedOnly(await intake(ctx, admitted('/cal/2026/11/01', { attempt: 1 }))));
    assert.equal(queued(ctx), 2);
    assert.equal((await tallyOf(ctx)).urls, 1);
  });

  test('a new URL costs one compare-and-set of its host\'s tally (created unread, then updated while the process keeps the key)', async () => {
    const ctx = createFakeContext();
    const ops = { get: 0, write: 0 };
    const store = ctx.kv.traps as MemoryKvStore;
    const { get, update, create } = store;
    store.get = (key) => ((ops.get += key.startsWith('_b.') ? 1 : 0), get.call(store, key));
    store.update = (key, v, r) => ((ops.write += key.startsWith('_b.') ? 1 : 0), update.call(store, key, v, r));
    store.create = (key, v) => ((ops.write += key.startsWith('_b.') ? 1 : 0), create.call(store, key, v));
    for (let i = 0; i < 100; i++) await intake(ctx, admitted(`/page/${i}`));
    assert.deepEqual(ops, { get: 0, write: 100 });
  });

  test('with every defence off, no tally is kept', async () => {
    const ctx = createFakeContext({ settings: { maxPagesPerHost: 0, maxUrlsPerPattern: 0, noveltyMinPages: 0 } });
    await intake(ctx, admitted('/x'));
    assert.equal(await ctx.kv.traps.get(tallyKey(HOST)), null);
    assert.equal(queued(ctx), 1);
  });
});

describe('politeness-gate: a URL pattern past its budget', () => {
  const DAY = (d: number) => `/cal/2026/11/${String(d).padStart(2, '0')}`;
  const onDay = (d: number) => ({ source_url: `http://${HOST}${DAY(d)}` });
  const onListing = { source_url: `http://${HOST}/agenda` };
  const queuedUrls = (ctx: FakeContext) => ctx.streams.on('crawl.hostq').map((m) => decodeAdmitted(m.data));

  test('a URL its own pattern\'s pages led to is dropped; one a listing named is queued, marked to be checked before the fetch', async () => {
    const ctx = createFakeContext({ settings: { maxUrlsPerPattern: 2 } });
    await intake(ctx, admitted(DAY(1), onListing));
    await intake(ctx, admitted(DAY(2), onDay(1)));
    const [row] = decodedOn(await intake(ctx, admitted(DAY(3), onDay(2))), 'crawl.outcomes', decodeOutcome);
    assert.equal(row!.reason, `trap_pattern_budget: pattern ${HOST}/cal/<n>/<n>/<n> produced 2 URLs`);
    assert.ok(queuedOnly(await intake(ctx, admitted(DAY(4), onListing))));
    assert.deepEqual(
      queuedUrls(ctx).map((m) => [m.url, m.novelty_check ?? false]),
      [
        [`http://${HOST}${DAY(1)}`, false],
        [`http://${HOST}${DAY(2)}`, false],
        [`http://${HOST}${DAY(4)}`, true],
      ],
    );
    assert.equal((await tallyOf(ctx)).patterns[patternKey(`${HOST}/cal/<n>/<n>/<n>`)]![0], 3);
  });

  test('at its turn, a marked URL whose pattern turned out near-duplicates is dropped without a request; one whose pattern is new is fetched', async () => {
    const ctx = createFakeContext({
      settings: { maxUrlsPerPattern: 1, noveltyMinPages: 2, noveltyDuplicateShare: 0.5, minDelayMs: 0, adaptiveDelayFactor: 0 },
      respond: () => httpResponse(404, { body: 'no robots.txt' }),
    });
    await intake(ctx, admitted('/item/1', onListing));
    await intake(ctx, admitted('/item/2', onListing));
    await intake(ctx, admitted('/product/1', onListing));
    await intake(ctx, admitted('/product/2', onListing));
    assert.deepEqual(queuedUrls(ctx).map((m) => m.novelty_check ?? false), [false, true, false, true]);
    // simhash saw the first of each: two near-duplicate items, two new products
    const owner = { crawl: 'test', host: HOST };
    for (const dup of [true, true]) await notePage(ctx.kv.traps, owner, `${HOST}/item/<n>`, dup);
    for (const dup of [false, false]) await notePage(ctx.kv.traps, owner, `${HOST}/product/<n>`, dup);

    // robots.txt (a 404: no rules) and the queue, one grant at a time, without delays
    const served: string[] = [];
    for (let i = 0; i < 10 && served.length < 3; i++) {
      const turn = await serveHost(ctx, HOST);
      const grants = ctx.streams.on('crawl.ready').map((m) => decodeGrant(m.data));
      if (turn.kind === 'granted') {
        const g = grants[grants.length - 1]!;
        served.push(g.url);
        assert.equal(g.novelty_check, undefined, 'the mark stays in the host queue');
        await releaseSlot(ctx.kv.hosts, HOST, g.lease_id, ctx.clock.now(), { kind: 'ok', durationMs: 1, baseDelayMs: 0 }, RELEASE);
      }
      ctx.clock.advance(1000);
    }
    assert.deepEqual(served, ['/item/1', '/product/1', '/product/2'].map((p) => `http://${HOST}${p}`));
    const rows = ctx.streams.on('crawl.outcomes').map((m) => decodeOutcome(m.data));
    assert.deepEqual(
      rows.map((r) => [r.url, r.outcome, r.reason]),
      [[`http://${HOST}/item/2`, 'filtered', `trap_low_novelty: pattern ${HOST}/item/<n>: 2 of its 2 pages were near-duplicates`]],
    );
    assert.equal(ctx.http.requestsTo('/item/2').length, 0);
  });
});

describe('simhash feeds content novelty back to the gate', () => {
  const text = Array.from({ length: 200 }, (_, i) => `word${i % 37}`).join(' ');
  const page = (path: string, t: number): ExtractedPage => ({
    v: 1,
    fetch_id: `fid:${path}`,
    url: `http://${HOST}${path}`,
    host: HOST,
    domain: HOST,
    depth: 1,
    fetch_time: t,
    fetch_status: 200,
    duration_ms: 1,
    content_type: 'text/html',
    charset: 'utf-8',
    truncated: false,
    content_length: text.length,
    content_digest: 'd',
    title: 'Listing',
    text,
    description: null,
    language: 'en',
    canonical_url: null,
    noindex: false,
    nofollow: false,
    links: [],
  });

  test('identical pages of one pattern cut the pattern off at the intake', async () => {
    const ctx = createFakeContext({ settings: { noveltyMinPages: 4, noveltyDuplicateShare: 0.75, maxUrlsPerPattern: 0 } });
    for (let n = 1; n <= 4; n++) await handleSimhash(stageInput(page(`/list?page=${n}`, n)), ctx);
    const tally = await tallyOf(ctx);
    assert.deepEqual(tally.patterns[patternKey(`${HOST}/list?page=<n>`)], [0, 4, 3]);
    const [row] = decodedOn(await intake(ctx, admitted('/list?page=5')), 'crawl.outcomes', decodeOutcome);
    assert.equal(row!.reason, `trap_low_novelty: pattern ${HOST}/list?page=<n>: 3 of its 4 pages were near-duplicates`);
    assert.equal(await ctx.kv.hosts.get(tallyKey(HOST)), null, 'tallies stay out of the hosts bucket, which every gate watches');
  });
});
