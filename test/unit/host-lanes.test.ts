import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { laneOf, laneWeight, nextLane } from '../../stages/shared/politeness/host-lanes.js';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { FETCHED_HIGH_WATER, HostScheduler, MAX_DEFER_MS, READY_HIGH_WATER } from '../../stages/politeness-gate/host-scheduler.js';
import { FETCH_DURABLE } from '../../topology/index.js';
import { serveHost } from '../../stages/politeness-gate/serve-host.js';
import { releaseSlot } from '../../stages/shared/politeness/host-slot.js';
import { jobKey } from '../../stages/shared/jobs/job-records.js';
import { jsonValue } from '../../pipeline/kv-store.js';
import { decodeGrant, decodeOutcome, JobSpec, type AdmittedUrl, type JobRecord, type JobSpecInput } from '../../schemas/index.js';
import { createFakeContext, httpResponse, settleLikeRunner, stageInput, type FakeContext } from '../support/fake-context.js';

const HOST = 'www.example.com';
let seq = 0;
const url = (path: string, extra: Partial<AdmittedUrl> = {}): AdmittedUrl => ({
  v: 1,
  url: `https://${HOST}${path}`,
  host: HOST,
  domain: 'example.com',
  depth: 1,
  source_url: null,
  via: 'link',
  fetch_id: `fid${path}${extra.job ?? ''}`,
  admitted_at: 0,
  ...extra,
});

async function queue(ctx: FakeContext, ...urls: AdmittedUrl[]) {
  for (const m of urls) await settleLikeRunner(ctx, await handleGateIntake(stageInput([m], { streamSeq: ++seq, subject: 'crawl.frontier.0' }), ctx));
}

async function putJob(ctx: FakeContext, id: string, spec: Partial<JobSpecInput>, state: JobRecord['state'] = 'active') {
  const record: JobRecord = {
    id,
    spec: JobSpec.parse({ seeds: [`https://${HOST}/`], ...spec }),
    state,
    created_at: 1,
    runs: 1,
    last_run_at: null,
    next_run_at: null,
    via: 'http',
    scope_domains: ['example.com'],
    min_delay_ms: 0,
  };
  await ctx.kv.jobs.put(jobKey(id), jsonValue(record));
}

/** Serves the host until `n` grants are out, finishing each request at once (no delays). */
async function grantOrder(ctx: FakeContext, n: number): Promise<string[]> {
  const order: string[] = [];
  for (let i = 0; i < 10 * n && order.length < n; i++) {
    const before = ctx.streams.on('crawl.ready').length;
    await serveHost(ctx, HOST);
    const grants = ctx.streams.on('crawl.ready');
    if (grants.length > before) {
      const g = decodeGrant(grants.at(-1)!.data);
      order.push(new URL(g.url).pathname);
      await releaseSlot(ctx.kv.hosts, HOST, g.lease_id, ctx.clock.now(), { kind: 'ok', durationMs: 1, baseDelayMs: 0 }, { adaptiveDelayFactor: 0, backoffBaseMs: 1, maxBackoffMs: 1, pauseAfterFailures: 5, pauseMs: 1 });
    }
    ctx.clock.advance(10);
  }
  return order;
}

const gateCtx = () => createFakeContext({ respond: () => httpResponse(404), settings: { minDelayMs: 0, adaptiveDelayFactor: 0, maxPerIp: 0 } });

describe('lanes: which URL of a host goes first', () => {
  test('levels: seeds and sitemap URLs high, deep links low, the rest normal; a job gets lanes of its own', () => {
    assert.equal(laneOf(url('/', { via: 'seed', depth: 0 })), 'h');
    assert.equal(laneOf(url('/a', { via: 'sitemap', depth: 0 })), 'h');
    assert.equal(laneOf(url('/a')), '');
    assert.equal(laneOf(url('/a/b/c', { depth: 3 })), 'l');
    assert.equal(laneOf(url('/a', { job: 'job-1' })), 'n-job-1');
    assert.equal(laneOf(url('/a', { via: 'revisit', revisit: { interval_ms: 1000, digest: null, simhash: null, fetched_at: 0, due_at: 1, changed: true } })), 'h');
  });

  test("a stage module's priority of a URL decides its level, deep or not", () => {
    assert.equal(laneOf(url('/a/b/c', { depth: 4, priority: 'high' })), 'h');
    assert.equal(laneOf(url('/a', { priority: 'low' })), 'l');
    assert.equal(laneOf(url('/a', { priority: 'high', job: 'job-1' })), 'h-job-1');
  });

  test('stride: lanes that always have work share the host 4 : 2 : 1, and none is starved', () => {
    let passes: Record<string, number> = {};
    let vtime = 0;
    const counts: Record<string, number> = { h: 0, '': 0, l: 0 };
    for (let i = 0; i < 700; i++) {
      const next = nextLane(['h', '', 'l'], passes, vtime, (lane) => laneWeight(lane))!;
      counts[next.lane]! += 1;
      ({ passes, vtime } = next);
    }
    assert.deepEqual(counts, { h: 400, '': 200, l: 100 });
  });

  test('a lane back from idle starts at the pass last served: it gets its share, not a burst', () => {
    let passes: Record<string, number> = {};
    let vtime = 0;
    for (let i = 0; i < 100; i++) ({ passes, vtime } = nextLane(['h'], passes, vtime, (lane) => laneWeight(lane))!);
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      const next = nextLane(['h', 'l'], passes, vtime, (lane) => laneWeight(lane))!;
      order.push(next.lane);
      ({ passes, vtime } = next);
    }
    assert.ok(order.filter((l) => l === 'l').length <= 2, `the low lane does not take over: ${order.join(',')}`);
    assert.ok(order.includes('l'), 'but it is served');
  });

  test('the gate serves a host by lane: seeds before deep links, every lane in turn', async () => {
    const ctx = gateCtx();
    await queue(ctx, ...[1, 2, 3, 4].map((i) => url(`/deep${i}`, { depth: 4 })), url('/seed', { via: 'seed', depth: 0 }), url('/mid', { depth: 1 }));
    const order = await grantOrder(ctx, 6);
    assert.deepEqual(order.slice(0, 2), ['/seed', '/mid'], 'the seed first, then the normal lane, though both were queued last');
    assert.deepEqual(order.slice(2), ['/deep1', '/deep2', '/deep3', '/deep4']);
  });

  test("a paused job's URLs wait in their lane while others are served; a cancelled job's end as filtered", async () => {
    const ctx = gateCtx();
    await putJob(ctx, 'job-p', {}, 'paused');
    await putJob(ctx, 'job-c', {}, 'cancelled');
    await queue(ctx, url('/p1', { job: 'job-p' }), url('/c1', { job: 'job-c' }), url('/c2', { job: 'job-c' }), url('/own'));
    const order = await grantOrder(ctx, 1);
    assert.deepEqual(order, ['/own']);
    const outcomes = ctx.streams.on('crawl.outcomes').map((m) => decodeOutcome(m.data));
    assert.deepEqual(
      outcomes.map((o) => [new URL(o.url).pathname, o.outcome, o.job, o.reason]),
      [
        ['/c1', 'filtered', 'job-c', 'job_cancelled: job job-c was cancelled'],
        ['/c2', 'filtered', 'job-c', 'job_cancelled: job job-c was cancelled'],
      ],
    );
    assert.deepEqual(await grantOrder(ctx, 1), [], 'the paused job waits');
    await putJob(ctx, 'job-p', {}, 'active');
    ctx.clock.advance(5000); // past the job cache's life
    assert.deepEqual(await grantOrder(ctx, 1), ['/p1'], 'resumed, its URL goes');
  });

  test("a job's own minimum delay is the grant's delay when it is longer than the crawl's", async () => {
    const ctx = gateCtx();
    await putJob(ctx, 'job-slow', { politeness: { min_delay_ms: 5000 } });
    await queue(ctx, url('/slow', { job: 'job-slow' }));
    await grantOrder(ctx, 1);
    const grant = decodeGrant(ctx.streams.on('crawl.ready')[0]!.data);
    assert.equal(grant.delay_ms, 5000);
    assert.equal(grant.job, 'job-slow');
  });
});

describe('which hosts go first when fetch is behind', () => {
  test('hosts with high-priority work are served, the others wait, but never past MAX_DEFER_MS', async () => {
    const ctx = gateCtx();
    const served: string[] = [];
    const levelOfHost: Record<string, 'h' | 'n'> = { 'seed.example': 'h', 'deep.example': 'n' };
    const scheduler = new HostScheduler(ctx, 4, async (_c, host) => {
      served.push(host);
      return { next: { kind: 'wait', until: Number.MAX_SAFE_INTEGER }, level: levelOfHost[host]! };
    });
    scheduler.start();
    try {
      const until = async (what: () => boolean) => {
        for (let i = 0; i < 100 && !what(); i++) await new Promise((r) => setTimeout(r, 20));
        assert.ok(what());
      };
      // a first turn each, while fetch keeps up: the scheduler learns their levels
      scheduler.notify('seed.example');
      scheduler.notify('deep.example');
      await until(() => served.length === 2);
      // fetch falls behind
      ctx.streams.positions.set(FETCH_DURABLE, { ackFloor: 0, delivered: 0, pending: READY_HIGH_WATER + 1 });
      ctx.clock.advance(2000);
      served.length = 0;
      scheduler.notify('seed.example');
      scheduler.notify('deep.example');
      await until(() => served.includes('seed.example'));
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(served, ['seed.example'], 'the host with only normal work waits while fetch is behind');
      ctx.clock.advance(MAX_DEFER_MS + 1000);
      await until(() => served.includes('deep.example'));
    } finally {
      await scheduler.stop();
    }
  });
});

describe('when the readers of fetched pages fall behind', () => {
  for (const reader of ['extract', 'archive']) {
    test(`no host is served while ${reader} has more than FETCHED_HIGH_WATER fetched pages not taken up, and every host once it catches up`, async () => {
      const ctx = gateCtx();
      const served: string[] = [];
      const scheduler = new HostScheduler(ctx, 4, async (_c, host) => {
        served.push(host);
        return { next: { kind: 'wait', until: Number.MAX_SAFE_INTEGER }, level: 'h' };
      });
      scheduler.start();
      try {
        ctx.streams.positions.set(reader, { ackFloor: 0, delivered: 0, pending: FETCHED_HIGH_WATER + 1 });
        scheduler.notify('a.example');
        scheduler.notify('b.example');
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(served, [], 'even high-priority work waits');
        ctx.streams.positions.set(reader, { ackFloor: 0, delivered: 0, pending: FETCHED_HIGH_WATER });
        ctx.clock.advance(1000);
        for (let i = 0; i < 100 && served.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual([...served].sort(), ['a.example', 'b.example']);
      } finally {
        await scheduler.stop();
      }
    });
  }
});
