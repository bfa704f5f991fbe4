import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { handleGate } from '../../stages/politeness-gate/handle.js';
import { ROBOTS_ERROR_RETRY_MS } from '../../stages/politeness-gate/spec.js';
import { parseJsonValue } from '../../pipeline/kv-store.js';
import { partitionOf } from '../../pipeline/partition.js';
import type { HttpRequest } from '../../pipeline/adapters/http-client.js';
import { decodeGrant, decodeOutcome, type AdmittedUrl } from '../../schemas/index.js';
import { acquireSlot, type HostSlot } from '../../stages/host-slot.js';
import {
  createFakeContext,
  emitted,
  httpResponse,
  networkError,
  onlyOn,
  retried,
  stageInput,
  type FakeContext,
  type FakeContextOptions,
  type Responder,
} from '../support/fake-context.js';

const HOST = 'www.example.com';
let seq = 0;

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

/** robots.txt answers per status/body; every other URL is a test failure (the gate never fetches pages) */
const robots =
  (status: number, body = '', headers: Record<string, string> = {}): Responder =>
  (req: HttpRequest) => {
    assert.equal(new URL(req.url).pathname, '/robots.txt', `the gate fetched ${req.url}`);
    return httpResponse(status, { body, headers: { 'content-type': 'text/plain', ...headers } });
  };

function gateContext(respond: Responder, settings: FakeContextOptions['settings'] = {}): FakeContext {
  return createFakeContext({ respond, settings });
}

/** one gate call; a new message (new stream sequence) unless `redeliver` gives the previous one */
const gate = (ctx: FakeContext, m: AdmittedUrl, opts: { streamSeq?: number; deliveryCount?: number } = {}) =>
  handleGate(stageInput(m, { streamSeq: opts.streamSeq ?? ++seq, deliveryCount: opts.deliveryCount ?? 1, subject: 'crawl.frontier.0' }), ctx);

async function slotOf(ctx: FakeContext, host = HOST): Promise<HostSlot> {
  const e = await ctx.kv.hosts.get(host);
  assert.ok(e);
  return parseJsonValue<HostSlot>(e.value);
}

describe('politeness gate: robots.txt', () => {
  test('first URL of a host: one robots.txt request, then host delay, then granted after the delay', async () => {
    const ctx = gateContext(robots(200, 'User-agent: *\nDisallow: /private/\n'), { minDelayMs: 1000 });
    const m = admitted('/page');
    const first = retried(await gate(ctx, m, { streamSeq: 1 }));
    assert.equal(ctx.http.requests.length, 1);
    const req = ctx.http.requests[0]!;
    assert.equal(req.url, `https://${HOST}/robots.txt`);
    assert.equal(req.connectTimeoutMs, ctx.settings.connectTimeoutMs);
    assert.equal(req.totalTimeoutMs, ctx.settings.totalTimeoutMs);
    assert.match(first.reason, /host delay/);
    assert.ok(first.afterMs >= 1000 && first.afterMs < 1100, `wait ${first.afterMs}`);
    assert.ok(await ctx.kv.robots.get(`https://${HOST}`), "robots record stored in the robots bucket, keyed by origin");

    // too early: still waiting, no new robots fetch
    ctx.clock.advance(500);
    retried(await gate(ctx, m, { streamSeq: 1, deliveryCount: 2 }));
    ctx.clock.advance(500);
    const out = await gate(ctx, m, { streamSeq: 1, deliveryCount: 3 });
    const g = onlyOn(out, 'crawl.ready', decodeGrant);
    assert.equal(emitted(out)[0]!.subject, `crawl.ready.${partitionOf(HOST, ctx.settings.partitions)}`);
    assert.equal(g.url, m.url);
    assert.equal(g.fetch_id, m.fetch_id);
    assert.equal(g.granted_at, ctx.clock.now());
    assert.equal(g.delay_ms, 1000);
    assert.equal((await slotOf(ctx)).lease_id, g.lease_id, 'the grant holds the host lease');
    assert.equal(ctx.http.requests.length, 1, 'robots.txt was fetched exactly once');
  });

  test('robots.txt is cached per host: a second URL does not fetch it again; another host does', async () => {
    const ctx = gateContext(robots(200, 'User-agent: *\nAllow: /\n'), { minDelayMs: 0 });
    onlyOn(await gate(ctx, admitted('/a')), 'crawl.ready', decodeGrant);
    ctx.clock.advance(100_000); // the lease expired
    onlyOn(await gate(ctx, admitted('/b')), 'crawl.ready', decodeGrant);
    assert.equal(ctx.http.requestsTo('/robots.txt').length, 1);
    onlyOn(await gate(ctx, admitted('/a', 'other.example.org')), 'crawl.ready', decodeGrant);
    assert.deepEqual(
      ctx.http.requests.map((r) => r.url),
      [`https://${HOST}/robots.txt`, 'https://other.example.org/robots.txt'],
    );
  });

  const verdicts: Array<{ name: string; respond: Responder; path: string; allowed: boolean; reason?: RegExp }> = [
    { name: 'disallowed path', respond: robots(200, 'User-agent: *\nDisallow: /private/\n'), path: '/private/x', allowed: false, reason: /^robots\.txt: Disallow: \/private\/$/ },
    { name: 'path not disallowed', respond: robots(200, 'User-agent: *\nDisallow: /private/\n'), path: '/public', allowed: true },
    { name: 'group of our product token', respond: robots(200, 'User-agent: jetstream-crawler\nDisallow: /\n\nUser-agent: *\nAllow: /\n'), path: '/x', allowed: false },
    { name: 'group of another agent only', respond: robots(200, 'User-agent: otherbot\nDisallow: /\n'), path: '/x', allowed: true },
    { name: 'robots 404 → allowed', respond: robots(404), path: '/x', allowed: true },
    { name: 'robots 403 → allowed', respond: robots(403), path: '/x', allowed: true },
    { name: 'robots 503 → disallow all', respond: robots(503), path: '/x', allowed: false, reason: /everything disallowed: http 503/ },
    { name: 'robots 429 → disallow all', respond: robots(429), path: '/x', allowed: false, reason: /everything disallowed/ },
    { name: 'robots network error → disallow all', respond: networkError('dns', 'getaddrinfo ENOTFOUND'), path: '/x', allowed: false, reason: /network error/ },
  ];
  for (const c of verdicts) {
    test(`${c.name} → ${c.allowed ? 'granted' : 'robots_disallowed'}`, async () => {
      const ctx = gateContext(c.respond, { minDelayMs: 0 });
      const m = admitted(c.path);
      const out = await gate(ctx, m);
      assert.equal(ctx.http.requests.length, 1, 'only robots.txt is requested');
      if (c.allowed) {
        onlyOn(out, 'crawl.ready', decodeGrant);
        return;
      }
      const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
      assert.equal(o.outcome, 'robots_disallowed');
      assert.equal(o.fetch_id, m.fetch_id);
      assert.equal(o.url, m.url);
      if (c.reason) assert.match(o.reason, c.reason);
      assert.equal(emitted(out)[0]!.subject, `crawl.outcomes.${partitionOf(HOST, ctx.settings.partitions)}`);
      assert.equal(emitted(out)[0]!.msgId, `robots:${m.fetch_id}`);
    });
  }

  test('robots 503: every URL of the host is blocked without refetching, until the error retry time', async () => {
    const ctx = gateContext(robots(503), { minDelayMs: 0 });
    for (const path of ['/', '/a', '/b/c']) {
      assert.equal(onlyOn(await gate(ctx, admitted(path)), 'crawl.outcomes', decodeOutcome).outcome, 'robots_disallowed');
    }
    assert.equal(ctx.http.requests.length, 1);
    // after the error retry time robots.txt is fetched again; now it answers 404 → allowed
    ctx.clock.advance(ROBOTS_ERROR_RETRY_MS + 1);
    ctx.http.respond = robots(404);
    onlyOn(await gate(ctx, admitted('/a')), 'crawl.ready', decodeGrant);
    assert.equal(ctx.http.requests.length, 2);
  });

  test('robots.txt redirect is followed (same host)', async () => {
    const ctx = gateContext(
      (req) =>
        req.url.endsWith('/robots.txt')
          ? httpResponse(301, { headers: { location: '/robots-new.txt' } })
          : httpResponse(200, { body: 'User-agent: *\nDisallow: /\n' }),
      { minDelayMs: 0 },
    );
    assert.equal(onlyOn(await gate(ctx, admitted('/x')), 'crawl.outcomes', decodeOutcome).outcome, 'robots_disallowed');
    assert.deepEqual(ctx.http.requests.map((r) => new URL(r.url).pathname), ['/robots.txt', '/robots-new.txt']);
  });

  test('while another process holds the host for its robots.txt, the URL waits and fetches nothing', async () => {
    const ctx = gateContext(robots(404), { minDelayMs: 0 });
    await acquireSlot(ctx.kv.hosts, HOST, ctx.clock.now(), { leaseId: 'robots:someone-else', leaseMs: 60_000, firstAttempt: true });
    const r = retried(await gate(ctx, admitted('/x')));
    assert.match(r.reason, /robots\.txt/);
    assert.equal(ctx.http.requests.length, 0);
  });
});

describe('politeness gate: delays and leases', () => {
  const delays: Array<{ name: string; robotsBody: string; settings: FakeContextOptions['settings']; delayMs: number }> = [
    { name: 'Crawl-delay 2 → 2000 ms', robotsBody: 'User-agent: *\nCrawl-delay: 2\n', settings: { minDelayMs: 0 }, delayMs: 2000 },
    { name: 'Crawl-delay 0.5 → 500 ms', robotsBody: 'User-agent: *\nCrawl-delay: 0.5\n', settings: { minDelayMs: 0 }, delayMs: 500 },
    { name: 'minimum delay above Crawl-delay', robotsBody: 'User-agent: *\nCrawl-delay: 1\n', settings: { minDelayMs: 3000 }, delayMs: 3000 },
    { name: 'no Crawl-delay → minimum delay', robotsBody: 'User-agent: *\nDisallow: /private/\n', settings: { minDelayMs: 750 }, delayMs: 750 },
    { name: 'Crawl-delay above maxCrawlDelayMs is clamped', robotsBody: 'User-agent: *\nCrawl-delay: 3600\n', settings: { minDelayMs: 0, maxCrawlDelayMs: 5000 }, delayMs: 5000 },
  ];
  for (const c of delays) {
    test(`${c.name}`, async () => {
      const ctx = gateContext(robots(200, c.robotsBody), c.settings);
      const m = admitted('/page');
      // the robots.txt fetch ends the host's turn: the page waits exactly the host delay
      let out = await gate(ctx, m, { streamSeq: 1 });
      if (c.delayMs > 0) {
        const r = retried(out);
        assert.ok(r.afterMs >= c.delayMs && r.afterMs < c.delayMs + 50, `wait ${r.afterMs}`);
        ctx.clock.advance(c.delayMs);
        out = await gate(ctx, m, { streamSeq: 1, deliveryCount: 2 });
      }
      assert.equal(onlyOn(out, 'crawl.ready', decodeGrant).delay_ms, c.delayMs);
      assert.equal((await slotOf(ctx)).next_allowed_at, ctx.clock.now(), 'next request allowed at robots end + delay');
    });
  }

  test("a second URL while a grant's lease is live → retry (request in flight)", async () => {
    const ctx = gateContext(robots(404), { minDelayMs: 0 });
    const g = onlyOn(await gate(ctx, admitted('/a')), 'crawl.ready', decodeGrant);
    ctx.clock.advance(10);
    const r = retried(await gate(ctx, admitted('/b')));
    assert.match(r.reason, /request in flight/);
    assert.ok(r.afterMs >= 10);
    assert.equal((await slotOf(ctx)).lease_id, g.lease_id, 'the lease is untouched');
    assert.equal(ctx.metrics.total('politeness-gate', 'urls', 'wait'), 1);
  });

  test('the same message redelivered while its own grant is live waits too (a new lease id per delivery)', async () => {
    const ctx = gateContext(robots(404), { minDelayMs: 0 });
    const m = admitted('/a');
    onlyOn(await gate(ctx, m, { streamSeq: 7 }), 'crawl.ready', decodeGrant);
    assert.match(retried(await gate(ctx, m, { streamSeq: 7, deliveryCount: 2 })).reason, /request in flight/);
  });

  test('a grant lease that expires lets the next URL through', async () => {
    const ctx = gateContext(robots(404), { minDelayMs: 0 });
    onlyOn(await gate(ctx, admitted('/a')), 'crawl.ready', decodeGrant);
    ctx.clock.advance(60_001);
    onlyOn(await gate(ctx, admitted('/b')), 'crawl.ready', decodeGrant);
  });

  test('a backlog of first-time URLs is told to come back at spread-out times', async () => {
    const ctx = gateContext(robots(200, 'User-agent: *\nCrawl-delay: 1\n'), { minDelayMs: 0 });
    const holder = admitted('/holder');
    retried(await gate(ctx, holder, { streamSeq: 1 })); // robots.txt fetched; the host's delay runs
    ctx.clock.advance(1000);
    onlyOn(await gate(ctx, holder, { streamSeq: 1, deliveryCount: 2 }), 'crawl.ready', decodeGrant);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) waits.push(retried(await gate(ctx, admitted(`/p${i}`))).afterMs);
    for (let i = 1; i < waits.length; i++) assert.ok(waits[i]! > waits[i - 1]! + 900, `waits ${waits.join(', ')}`);
  });
});

describe('politeness gate: robots.txt belongs to an origin', () => {
  test('two ports of one host each get their own robots.txt', async () => {
    const ctx = gateContext((req: HttpRequest) => {
      const u = new URL(req.url);
      assert.equal(u.pathname, '/robots.txt');
      return u.port === '8080'
        ? httpResponse(200, { body: 'User-agent: *\nDisallow: /\n', headers: { 'content-type': 'text/plain' } })
        : httpResponse(404, { body: '' });
    }, { minDelayMs: 0 });
    const blocked = await gate(ctx, { ...admitted('/x'), url: `http://${HOST}:8080/x`, fetch_id: 'p8080' });
    onlyOn(blocked, 'crawl.outcomes', decodeOutcome);
    ctx.clock.advance(10);
    const other = await gate(ctx, { ...admitted('/x'), url: `http://${HOST}:9090/x`, fetch_id: 'p9090' });
    assert.deepEqual(ctx.http.requests.map((r) => r.url), [`http://${HOST}:8080/robots.txt`, `http://${HOST}:9090/robots.txt`]);
    assert.notEqual(other.kind === 'emit' && emitted(other)[0]?.subject.startsWith('crawl.outcomes'), true, 'the 9090 URL is not blocked by 8080 rules');
  });
});
