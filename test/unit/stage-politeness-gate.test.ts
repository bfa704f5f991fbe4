import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KvStore } from '../../ports/kv.js';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { HOSTQ_FULL_RETRY_MS, HOSTQ_FULL_WAIT_MS } from '../../stages/politeness-gate/hostq-room.js';
import { serveHost } from '../../stages/politeness-gate/serve-host.js';
import { jsonValue, parseJsonValue } from '../../pipeline/kv-store.js';
import { startHostScheduler } from '../../stages/politeness-gate/index.js';
import { hostQueueSubject } from '../../pipeline/partition.js';
import { HttpFetchError, type HttpRequest } from '../../ports/http.js';
import { REFUSED_RECHECK_MS } from '../../stages/shared/politeness/failure-policy.js';
import { decodeGrant, decodeOutcome, type AdmittedUrl } from '../../schemas/index.js';
import { asSlot, readTail, releaseSlot, type HostSlot } from '../../stages/shared/politeness/host-slot.js';
import { ipKey, type IpSlot } from '../../stages/shared/politeness/ip-slot.js';
import { PACING_GUARD_MS } from '../../stages/shared/politeness/host-pacing.js';
import { createFakeContext, httpResponse, networkError, queuedOnly, settleLikeRunner, stageInput, type FakeContext, type FakeContextOptions, type Responder } from '../support/fake-context.js';

const HOST = 'www.example.com';
let frontierSeq = 0;

const admitted = (path: string, host = HOST): AdmittedUrl => ({
  v: 1,
  url: `https://${host}${path}`,
  host,
  domain: 'example.com',
  depth: 1,
  source_url: null,
  via: 'link',
  fetch_id: `fid-${host}${path}`,
  admitted_at: 0,
});

/** robots.txt answers; any other URL is a test failure (the gate never fetches pages) */
const robots =
  (status: number, body = ''): Responder =>
  (req: HttpRequest) => {
    assert.equal(new URL(req.url).pathname, '/robots.txt', `the gate fetched ${req.url}`);
    return httpResponse(status, { body, headers: { 'content-type': 'text/plain' } });
  };

const gateContext = (respond: Responder, settings: FakeContextOptions['settings'] = {}, opts: Partial<FakeContextOptions> = {}) =>
  createFakeContext({ respond, settings: { minDelayMs: 1000, adaptiveDelayFactor: 0, ...settings }, ...opts });

async function queue(ctx: FakeContext, ...urls: AdmittedUrl[]): Promise<void> {
  for (const m of urls) {
    const outcome = await handleGateIntake(stageInput([m], { streamSeq: ++frontierSeq, subject: 'crawl.frontier.0' }), ctx);
    assert.ok(queuedOnly(outcome), 'intake acks at once, emitting only the URL into its host queue');
    await settleLikeRunner(ctx, outcome);
  }
}

async function slotOf(ctx: FakeContext, host = HOST): Promise<HostSlot> {
  const e = await ctx.kv.hosts.get(host);
  assert.ok(e, 'the host has a slot');
  return asSlot(host, parseJsonValue<HostSlot>(e.value));
}

const grants = (ctx: FakeContext) => ctx.streams.on('crawl.ready').map((m) => decodeGrant(m.data));
const outcomes = (ctx: FakeContext) => ctx.streams.on('crawl.outcomes').map((m) => decodeOutcome(m.data));

/** what a fetcher does when its request ends: free the host (healthy answer) */
async function finish(ctx: FakeContext, leaseId: string, durationMs = 10): Promise<void> {
  await releaseSlot(ctx.kv.hosts, HOST, leaseId, ctx.clock.now(), { kind: 'ok', durationMs, baseDelayMs: 1000 }, {
    adaptiveDelayFactor: 0,
    backoffBaseMs: 1000,
    maxBackoffMs: 60_000,
    pauseAfterFailures: 5,
    pauseMs: 60_000,
  });
}

describe('politeness gate: intake queues URLs per host', () => {
  test('each URL goes to its host queue subject; the slot records the newest sequence', async () => {
    const ctx = gateContext(robots(404));
    await queue(ctx, admitted('/a'), admitted('/b'), admitted('/x', 'other.example.com'));
    const subject = hostQueueSubject(HOST, ctx.settings.partitions);
    assert.equal(ctx.streams.on(subject).length, 2);
    assert.equal((await readTail(ctx.kv.hosts, HOST))?.tail_seq, 2);
    assert.equal(await ctx.kv.hosts.get(HOST), null, "the host's politeness slot is not touched by queueing");
  });

  test('full host queues (a size limit refusing new messages): URLs wait in the frontier, and end with a row after waiting too long', async () => {
    const ctx = gateContext(robots(404));
    const refused = await handleGateIntake(stageInput([admitted('/a')], { streamSeq: 1, publishedAt: ctx.clock.now() }), ctx);
    // the runner's publish is refused by the server: it tells the outcome, then naks the message
    assert.equal(refused.kind, 'emit');
    if (refused.kind === 'emit') await refused.onPublishFailed?.(new Error('maximum bytes exceeded'));
    const sent = ctx.clock.now();
    ctx.clock.advance(1000);
    const held = await handleGateIntake(stageInput([admitted('/b'), admitted('/c')], { streamSeq: 2, publishedAt: sent }), ctx);
    assert.deepEqual(held.kind === 'retry' && [held.afterMs, held.reason], [HOSTQ_FULL_RETRY_MS, 'host queues full'], 'no publish is tried while the stream is full');
    assert.equal(ctx.streams.messages.length, 0);
    // still refused ten minutes on: the URLs end, each with its row
    ctx.clock.advance(HOSTQ_FULL_WAIT_MS);
    const again = await handleGateIntake(stageInput([admitted('/d')], { streamSeq: 3, publishedAt: sent }), ctx);
    if (again.kind === 'emit') await again.onPublishFailed?.(new Error('maximum bytes exceeded'));
    const ended = await handleGateIntake(stageInput([admitted('/b'), admitted('/c')], { streamSeq: 2, publishedAt: sent, deliveryCount: 20 }), ctx);
    await settleLikeRunner(ctx, ended);
    assert.deepEqual(
      outcomes(ctx).map((o) => [o.url, o.outcome]),
      [
        [`https://${HOST}/b`, 'filtered'],
        [`https://${HOST}/c`, 'filtered'],
      ],
    );
    assert.match(outcomes(ctx)[0]!.reason, /^host queues full: CRAWL_HOSTQ at its size limit, no room for 60\d s$/);
    // another failure (the server unavailable) is not a full stream: publishes go on being tried
    const other = gateContext(robots(404));
    const failed = await handleGateIntake(stageInput([admitted('/a')], { streamSeq: 1 }), other);
    if (failed.kind === 'emit') await failed.onPublishFailed?.(new Error('publish failed: no responders'));
    assert.ok(queuedOnly(await handleGateIntake(stageInput([admitted('/a')], { streamSeq: 1, deliveryCount: 2 }), other)));
    // once a publish is taken again, the spell is over
    ctx.clock.advance(10_000);
    await settleLikeRunner(ctx, await handleGateIntake(stageInput([admitted('/e')], { streamSeq: 4 }), ctx));
    assert.ok(queuedOnly(await handleGateIntake(stageInput([admitted('/f')], { streamSeq: 5 }), ctx)));
  });

  test('a redelivered frontier message is queued once (same msgId, same sequence)', async () => {
    const ctx = gateContext(robots(404));
    const m = admitted('/a');
    await settleLikeRunner(ctx, await handleGateIntake(stageInput([m], { streamSeq: 77 }), ctx));
    await settleLikeRunner(ctx, await handleGateIntake(stageInput([m], { streamSeq: 77, deliveryCount: 2 }), ctx));
    assert.equal(ctx.streams.messages.length, 1);
  });
});

describe('politeness gate: serving a host', () => {
  test('first turn fetches robots.txt only; the next turn waits the delay; then one grant; then in flight', async () => {
    const ctx = gateContext(robots(200, 'User-agent: *\nDisallow: /private/\n'));
    await queue(ctx, admitted('/a'), admitted('/b'));
    const first = await serveHost(ctx, HOST);
    assert.equal(first.kind, 'wait', 'after robots.txt the host waits its delay');
    assert.equal(ctx.http.requestsTo('/robots.txt').length, 1);
    assert.equal(grants(ctx).length, 0);
    ctx.clock.advance(1000 + PACING_GUARD_MS - 1);
    assert.equal((await serveHost(ctx, HOST)).kind, 'wait', 'the delay runs from a little after the robots.txt answer, as after a page');
    ctx.clock.advance(1);
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'granted' });
    assert.equal(grants(ctx)[0]!.url, `https://${HOST}/a`);
    const busy = await serveHost(ctx, HOST);
    assert.equal(busy.kind, 'wait', 'one request in flight per host');
    assert.equal(grants(ctx).length, 1);
    await finish(ctx, grants(ctx)[0]!.lease_id);
    ctx.clock.advance(999);
    assert.equal((await serveHost(ctx, HOST)).kind, 'wait', 'the delay runs from the end of the request');
    ctx.clock.advance(1);
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'granted' });
    assert.equal(grants(ctx)[1]!.url, `https://${HOST}/b`);
    await finish(ctx, grants(ctx)[1]!.lease_id);
    ctx.clock.advance(1000);
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'idle' }, 'queue empty');
    assert.equal(ctx.http.requestsTo('/robots.txt').length, 1, 'robots.txt cached');
  });

  test('disallowed URLs become robots_disallowed outcomes without using the host', async () => {
    const ctx = gateContext(robots(200, 'User-agent: *\nDisallow: /private/\n'));
    await queue(ctx, admitted('/private/1'), admitted('/private/2'), admitted('/ok'));
    await serveHost(ctx, HOST);
    ctx.clock.advance(1000 + PACING_GUARD_MS);
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'granted' });
    assert.deepEqual(
      outcomes(ctx).map((o) => [o.url, o.outcome, o.reason]),
      [
        [`https://${HOST}/private/1`, 'robots_disallowed', 'robots.txt: Disallow: /private/'],
        [`https://${HOST}/private/2`, 'robots_disallowed', 'robots.txt: Disallow: /private/'],
      ],
    );
    assert.equal(grants(ctx)[0]!.url, `https://${HOST}/ok`);
    // the settled URLs leave the host's queue; the granted one waits for its fetcher to confirm
    assert.deepEqual(ctx.streams.deleted, [1, 2]);
    assert.deepEqual(ctx.streams.on(hostQueueSubject(HOST, ctx.settings.partitions)).map((m) => m.seq), [3]);
  });

  test('Crawl-delay sets the gap (clamped to the maximum)', async () => {
    const ctx = gateContext(robots(200, 'User-agent: *\nCrawl-delay: 5\n'), { maxCrawlDelayMs: 3000 });
    await queue(ctx, admitted('/a'));
    await serveHost(ctx, HOST);
    const wait = await serveHost(ctx, HOST);
    assert.equal(wait.kind, 'wait');
    ctx.clock.advance(3000 + PACING_GUARD_MS);
    await serveHost(ctx, HOST);
    assert.equal(grants(ctx)[0]!.delay_ms, 3000);
  });

  for (const [name, respond] of [
    ['503', robots(503)],
    ['429', robots(429)],
    ['a network error', networkError('connect')],
  ] as const) {
    test(`robots.txt ${name}: nothing is fetched or dropped; URLs wait; a later success lets them through`, async () => {
      const ctx = gateContext(respond, { robotsRetryMs: 10_000, robotsGiveUpMs: 3_600_000, backoffBaseMs: 100 });
      await queue(ctx, admitted('/a'));
      const turn = await serveHost(ctx, HOST);
      assert.equal(turn.kind, 'wait');
      ctx.clock.advance(5000);
      assert.equal((await serveHost(ctx, HOST)).kind, 'wait', 'disallowed until the retry');
      assert.equal(ctx.http.requests.length, 1);
      assert.equal(grants(ctx).length + outcomes(ctx).length, 0, 'the URL waits, it is not dropped');
      ctx.http.respond = robots(200, 'User-agent: *\nAllow: /\n');
      ctx.clock.advance(6000);
      await serveHost(ctx, HOST); // refetch
      ctx.clock.advance(60_000);
      assert.deepEqual(await serveHost(ctx, HOST), { kind: 'granted' });
      assert.equal(ctx.http.requestsTo('/robots.txt').length, 2);
    });
  }

  test('robots.txt failures back off (the retry interval doubles) and a stale permissive copy is never used', async () => {
    const ctx = gateContext(robots(200, 'User-agent: *\nAllow: /\n'), { robotsTtlMs: 60_000, robotsRetryMs: 1000, backoffBaseMs: 1 });
    await queue(ctx, admitted('/a'), admitted('/b'));
    await serveHost(ctx, HOST);
    ctx.clock.advance(1000 + PACING_GUARD_MS);
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'granted' });
    await finish(ctx, grants(ctx)[0]!.lease_id);
    ctx.http.respond = robots(503);
    ctx.clock.advance(61_000); // the cached copy expired
    const times: number[] = [];
    for (let i = 0; i < 40; i++) {
      const before = ctx.http.requests.length;
      await serveHost(ctx, HOST);
      if (ctx.http.requests.length > before) times.push(ctx.clock.now());
      ctx.clock.advance(500);
    }
    assert.equal(grants(ctx).length, 1, 'no grant while robots.txt fails');
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    assert.ok(gaps.length >= 3, `robots.txt retried (${times.length} fetches)`);
    for (let i = 1; i < gaps.length; i++) assert.ok(gaps[i]! >= gaps[i - 1]!, `retry gaps grow: ${gaps.join(', ')}`);
  });

  test('robots.txt unavailable past the give-up time: its URLs end as robots_disallowed with the reason', async () => {
    const ctx = gateContext(robots(503), { robotsRetryMs: 1000, robotsGiveUpMs: 10_000, backoffBaseMs: 1, pauseAfterFailures: 100 });
    await queue(ctx, admitted('/a'), admitted('/b'));
    for (let i = 0; i < 30 && outcomes(ctx).length < 2; i++) {
      await serveHost(ctx, HOST);
      ctx.clock.advance(1000);
    }
    assert.deepEqual(
      outcomes(ctx).map((o) => o.outcome),
      ['robots_disallowed', 'robots_disallowed'],
    );
    assert.match(outcomes(ctx)[0]!.reason, /robots\.txt unavailable for \d+ s, giving up: http 503/);
    assert.equal(grants(ctx).length, 0);
  });

  test('robots.txt fetched but not stored (the robots bucket electing a leader): the host is still paced by its Crawl-delay', async () => {
    const ctx = gateContext(robots(200, 'User-agent: *\nCrawl-delay: 5\n'), { minDelayMs: 300 });
    await queue(ctx, admitted('/a'));
    const put = ctx.kv.robots.put.bind(ctx.kv.robots);
    ctx.kv.robots.put = async () => {
      throw new Error('jetstream is not enabled');
    };
    const start = ctx.clock.now();
    await assert.rejects(serveHost(ctx, HOST), /jetstream is not enabled/);
    ctx.kv.robots.put = put;
    assert.equal(ctx.http.requestsTo('/robots.txt').length, 1, 'the request was made');
    const slot = await slotOf(ctx);
    assert.ok(slot.next_allowed_at - start >= 5000, `next request not before the Crawl-delay: ${slot.next_allowed_at - start} ms`);
  });

  for (const [failures, name] of [
    [1, 'a give-up time that passes while the crawler could not try (its servers were down) is not a give-up: robots.txt is tried once more first'],
    [2, 'a site that failed only twice is not given up, even when the give-up time passed between the tries: the third try decides'],
  ] as const) {
    test(name, async () => {
      let answers = 0;
      // 503 for the first tries (a site restarting); 200 for any later one
      const ctx = gateContext((req) => robots(answers++ < failures ? 503 : 200, 'User-agent: *\nAllow: /\n')(req), { robotsRetryMs: 1000, robotsGiveUpMs: 10_000, backoffBaseMs: 1, pauseAfterFailures: 100 });
      await queue(ctx, admitted('/a'));
      await serveHost(ctx, HOST); // the first try fails
      ctx.clock.advance(30_000); // no turn meanwhile
      for (let i = 0; i < 10 && grants(ctx).length === 0; i++) {
        await serveHost(ctx, HOST);
        ctx.clock.advance(1000);
      }
      assert.deepEqual(outcomes(ctx), [], 'not given up');
      assert.equal(ctx.http.requestsTo('/robots.txt').length, failures + 1);
      assert.equal(grants(ctx)[0]?.url, `https://${HOST}/a`);
    });
  }

  for (const [name, respond, outcome, reason] of [
    [
      'its name does not exist (NXDOMAIN)',
      networkError('dns', 'connecting: ENOTFOUND', { code: 'ENOTFOUND', message: `resolving ${HOST}: no such host` }),
      'network_error',
      `dns_error: ENOTFOUND ${HOST} (the name does not exist)`,
    ],
    [
      'the SSRF guard refuses its address',
      networkError('refused', 'connecting: refused', { code: 'ERR_CRAWL_REFUSED_ADDRESS', message: 'refused to connect to 127.0.0.1: loopback address' }),
      'refused',
      'refused: refused to connect to 127.0.0.1: loopback address',
    ],
  ] as const) {
    test(`robots.txt cannot be fetched because ${name}: every queued and later URL ends at once with the reason`, async () => {
      const ctx = gateContext(respond, { robotsRetryMs: 60_000, robotsGiveUpMs: 3_600_000 });
      await queue(ctx, admitted('/a'), admitted('/b'), admitted('/c'));
      await serveHost(ctx, HOST); // robots.txt fails: the record says the host is dead
      for (let i = 0; i < 3 && outcomes(ctx).length < 3; i++) await serveHost(ctx, HOST);
      assert.deepEqual(
        outcomes(ctx).map((o) => [o.url, o.outcome, o.reason]),
        ['/a', '/b', '/c'].map((p) => [`https://${HOST}${p}`, outcome, reason]),
        'one outcome per URL, without waiting for a retry or the give-up time',
      );
      await queue(ctx, admitted('/later'));
      assert.deepEqual(await serveHost(ctx, HOST), { kind: 'idle' });
      assert.equal(outcomes(ctx).at(-1)!.url, `https://${HOST}/later`, 'a URL queued later ends too');
      assert.equal(ctx.http.requests.length, 1, 'robots.txt was asked for once');
      assert.equal(grants(ctx).length, 0, 'nothing is fetched');
    });
  }

  /** every address of the host refuses the connection (nothing listens on its port) */
  const refusing: Responder = (req) => {
    throw new HttpFetchError('connect', `fetching ${req.url}: connecting: connect ECONNREFUSED 192.0.2.1:443`, {
      cause: Object.assign(new Error('connect ECONNREFUSED 192.0.2.1:443'), { code: 'ECONNREFUSED' }),
      everyAddressRefused: true,
    });
  };

  test('every address refuses the connection to robots.txt twice, a few seconds apart: every queued and later URL ends at once with the reason', async () => {
    const ctx = gateContext(refusing, { robotsRetryMs: 60_000, robotsGiveUpMs: 3_600_000, backoffBaseMs: 1000 });
    await queue(ctx, admitted('/a'), admitted('/b'));
    const first = await serveHost(ctx, HOST);
    assert.equal(first.kind, 'wait', 'one refusal may be a server restarting: the URLs wait');
    assert.equal(outcomes(ctx).length, 0);

    const times: number[] = [ctx.clock.now()];
    for (let i = 0; i < 40 && outcomes(ctx).length < 2; i++) {
      ctx.clock.advance(250);
      const before = ctx.http.requests.length;
      await serveHost(ctx, HOST);
      if (ctx.http.requests.length > before) times.push(ctx.clock.now());
    }

    assert.equal(times.length, 2, 'robots.txt asked for twice');
    assert.ok(times[1]! - times[0]! >= REFUSED_RECHECK_MS, `the second try ${times[1]! - times[0]!} ms after the first`);
    assert.deepEqual(
      outcomes(ctx).map((o) => [o.url, o.outcome, o.reason]),
      ['/a', '/b'].map((p) => [`https://${HOST}${p}`, 'network_error', `connection_refused: connect ECONNREFUSED 192.0.2.1:443 (refused twice, ${Math.round((times[1]! - times[0]!) / 1000)} s apart)`]),
    );
    await queue(ctx, admitted('/later'));
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'idle' });
    assert.equal(outcomes(ctx).at(-1)!.url, `https://${HOST}/later`, 'a URL queued later ends too');
    assert.equal(ctx.http.requests.length, 2);
    assert.equal(grants(ctx).length, 0, 'nothing is fetched');
  });

  test('refused once, then answering (a server that restarted): nothing ends, the URL is fetched', async () => {
    let tries = 0;
    const ctx = gateContext((req) => (tries++ === 0 ? refusing(req) : robots(200, 'User-agent: *\nAllow: /\n')(req)), { robotsRetryMs: 60_000, robotsGiveUpMs: 3_600_000, backoffBaseMs: 1000 });
    await queue(ctx, admitted('/a'));
    for (let i = 0; i < 60 && grants(ctx).length === 0; i++) {
      await serveHost(ctx, HOST);
      ctx.clock.advance(250);
    }
    assert.deepEqual(outcomes(ctx), []);
    assert.equal(ctx.http.requestsTo('/robots.txt').length, 2);
    assert.equal(grants(ctx)[0]?.url, `https://${HOST}/a`);
  });

  test('a refusal beside an address that does not answer is not a dead host: the URLs wait', async () => {
    const ctx = gateContext(networkError('connect', 'connecting: none of 2 addresses connected', { code: 'ECONNREFUSED', message: 'none of 2 addresses connected (...)' }), { robotsRetryMs: 1000, robotsGiveUpMs: 3_600_000, backoffBaseMs: 1 });
    await queue(ctx, admitted('/a'));
    for (let i = 0; i < 40; i++) {
      await serveHost(ctx, HOST);
      ctx.clock.advance(500);
    }
    assert.ok(ctx.http.requestsTo('/robots.txt').length >= 3, 'retried');
    assert.equal(outcomes(ctx).length + grants(ctx).length, 0, 'the URL waits for robots.txt');
  });

  test('a DNS failure that may heal (SERVFAIL) keeps the URLs waiting, as a 503 robots.txt does', async () => {
    const ctx = gateContext(networkError('dns', 'connecting: ESERVFAIL', { code: 'ESERVFAIL', message: `resolving ${HOST}: ESERVFAIL` }), {
      robotsRetryMs: 10_000,
      robotsGiveUpMs: 3_600_000,
    });
    await queue(ctx, admitted('/a'));
    assert.equal((await serveHost(ctx, HOST)).kind, 'wait');
    ctx.clock.advance(5000);
    assert.equal((await serveHost(ctx, HOST)).kind, 'wait');
    assert.equal(outcomes(ctx).length + grants(ctx).length, 0, 'the URL waits for robots.txt');
  });

  test('a host with 10,000 queued URLs does not hold up a host queued after it', async () => {
    // all 10,000 share one URL pattern: the crawl-trap budgets would stop them, so they are off here
    const ctx = gateContext(robots(404), { minDelayMs: 0, maxUrlsPerPattern: 0, maxPagesPerHost: 0 });
    const many = Array.from({ length: 10_000 }, (_, i) => admitted(`/p${i}`));
    await queue(ctx, ...many);
    await queue(ctx, admitted('/only', 'small.example.com'));
    // no delay: robots.txt (404) and the first grant in one turn each
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'granted' });
    assert.deepEqual(await serveHost(ctx, 'small.example.com'), { kind: 'granted' });
    assert.deepEqual(grants(ctx).map((g) => g.host).sort(), ['small.example.com', HOST]);
  });
});

describe('politeness gate: per-IP cap', () => {
  test('hosts on one IP share the cap; a release lets the next one through', async () => {
    const hosts = ['a.example.com', 'b.example.com', 'c.example.com'];
    const ctx = gateContext(robots(404), { maxPerIp: 2, minDelayMs: 0 }, { addresses: Object.fromEntries(hosts.map((h) => [h, '198.51.100.7'])) });
    for (const h of hosts) await queue(ctx, admitted('/', h));
    const turns = []; // no delay: robots.txt (404) and the grant in one turn
    for (const h of hosts) turns.push(await serveHost(ctx, h));
    assert.deepEqual(turns.map((t) => t.kind), ['granted', 'granted', 'wait']);
    assert.equal((turns[2] as { ip?: string }).ip, '198.51.100.7');
    const ipEntry = await ctx.kv.hosts.get(ipKey('198.51.100.7'));
    assert.equal(parseJsonValue<IpSlot>(ipEntry!.value).leases.length, 2);
  });
});

describe('politeness gate: leases and crashes', () => {
  test('a grant whose publish failed puts the URL back and frees the host', async () => {
    const ctx = gateContext(robots(404), { minDelayMs: 0 });
    await queue(ctx, admitted('/a'));
    ctx.streams.failPublish = true;
    await assert.rejects(serveHost(ctx, HOST), /publish failed/);
    ctx.streams.failPublish = false;
    const slot = await slotOf(ctx);
    assert.equal(slot.lease_id, null);
    assert.equal(slot.cursor, 0);
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'granted' });
    assert.equal(grants(ctx)[0]!.url, `https://${HOST}/a`);
  });

  test('a lease that lapses unconfirmed (the gate died before publishing) serves its URL again, under the same lease id', async () => {
    const ctx = gateContext(robots(404), { minDelayMs: 0 });
    await queue(ctx, admitted('/a'), admitted('/b'));
    await serveHost(ctx, HOST);
    const first = grants(ctx)[0]!;
    ctx.clock.advance(61_000); // nobody confirmed or released the lease
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'granted' });
    const again = grants(ctx);
    assert.equal(again.length, 1, 'the same msgId: the server keeps one grant');
    assert.equal((await slotOf(ctx)).lease_id, first.lease_id);
  });
});

describe('politeness gate: a replicated hosts bucket', () => {
  test('a replica that answers with the queue as it was before the new URL does not make the host idle: the leader is asked', async () => {
    const ctx = gateContext(robots(404));
    const store: KvStore = ctx.kv.hosts;
    const realGet = store.get.bind(store);
    let latestReads = 0;
    // the lagging replica has not seen the queue tail yet; the leader has
    store.get = async (key) => (key.startsWith('_q.') ? null : realGet(key));
    store.getLatest = async (key) => {
      latestReads += 1;
      return realGet(key);
    };
    await queue(ctx, admitted('/a'));
    assert.equal((await serveHost(ctx, HOST)).kind, 'wait', 'robots.txt first, then the delay');
    ctx.clock.advance(1000 + PACING_GUARD_MS);
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'granted' });
    assert.ok(latestReads > 0);
    assert.equal(grants(ctx)[0]!.url, `https://${HOST}/a`);
  });

  test('without the leader\'s confirmation (a store whose reads never lag) an empty queue is idle at once', async () => {
    const ctx = gateContext(robots(404));
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'idle' });
  });
});

describe('politeness gate: the hosts watch', () => {
  test("a host's slot change brings a turn when the host is ready; a pause brings one at once (its URLs that failed end without waiting)", async () => {
    const ctx = gateContext(robots(404));
    const bg = await startHostScheduler(ctx, 4);
    const notified: Array<[string, number | undefined]> = [];
    bg.scheduler.notify = (host, at) => void notified.push([host, at]);
    const now = ctx.clock.now();
    try {
      await ctx.kv.hosts.put('delayed.example.com', jsonValue({ ...asSlot('delayed.example.com', null), next_allowed_at: now + 5000 }));
      await ctx.kv.hosts.put('paused.example.com', jsonValue({ ...asSlot('paused.example.com', null), failures: 5, next_allowed_at: now + 600_000, paused_until: now + 600_000 }));
      for (let i = 0; i < 50 && notified.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(notified, [
        ['delayed.example.com', now + 5000],
        ['paused.example.com', now],
      ]);
    } finally {
      await bg.stop();
    }
  });

  test('a watch that ends is opened again, and news after that still reaches the scheduler', async () => {
    const ctx = gateContext(robots(404));
    const store = ctx.kv.hosts;
    const realWatch = store.watch.bind(store);
    let opened = 0;
    store.watch = async () => {
      opened += 1;
      const w = await realWatch();
      if (opened === 1) setTimeout(() => w.stop(), 10); // the first watch dies
      return w;
    };
    const bg = await startHostScheduler(ctx, 4);
    const notified: string[] = [];
    const notify = bg.scheduler.notify.bind(bg.scheduler);
    bg.scheduler.notify = (host, at) => {
      notified.push(host);
      notify(host, at);
    };
    try {
      await new Promise((r) => setTimeout(r, 1300));
      assert.equal(opened, 2, 'reopened after about a second');
      await store.put('_q.late.example.com', jsonValue({ host: 'late.example.com', tail_seq: 1 }));
      await new Promise((r) => setTimeout(r, 50));
      assert.ok(notified.includes('late.example.com'));
    } finally {
      await bg.stop();
    }
  });
});
