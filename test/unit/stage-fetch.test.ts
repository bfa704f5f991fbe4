import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { handleFetch, PACING_GUARD_MS } from '../../stages/fetch/handle.js';
import { MESSAGE_OVERHEAD_BYTES } from '../../stages/shared/messages/page-body.js';
import { releaseSlot } from '../../stages/shared/politeness/host-slot.js';
import { pacingOf } from '../../stages/shared/politeness/host-pacing.js';
import { acquireSlot, confirmLease, type HostSlot } from '../../stages/shared/politeness/host-slot.js';
import { acquireIp } from '../../stages/shared/politeness/ip-slot.js';
import { storeValidators } from '../../stages/shared/conditional-get.js';
import { hostQueueSubject, partitionOf } from '../../pipeline/partition.js';
import { HttpFetchError } from '../../ports/http.js';
import {
  decodeAdmitted,
  decodeDiscoveredLinks,
  decodeExchange,
  decodeFetched,
  decodeOutcome,
  decodeRevisit,
  JobSpec,
  type FetchGrant,
  type JobRecord,
  type OutcomeKind,
} from '../../schemas/index.js';
import { jsonValue, parseJsonValue } from '../../pipeline/kv-store.js';
import { jobKey } from '../../stages/shared/jobs/job-records.js';
import { changeRatePerDay } from '../../stages/shared/revisits/revisit-policy.js';
import {
  createFakeContext,
  decodedOn,
  emitted,
  emitsOn,
  htmlResponse,
  httpResponse,
  onlyOn,
  stageInput,
  subjectsOf,
  type FakeContext,
  type FakeContextOptions,
  type Responder,
} from '../support/fake-context.js';

const HOST = 'www.example.com';
const LEASE = 'fetch:lease-1';
const DURATION = 250;

function grantFor(path: string, over: Partial<FetchGrant> = {}): FetchGrant {
  return {
    v: 1,
    url: `https://${HOST}${path}`,
    host: HOST,
    domain: 'example.com',
    depth: 2,
    source_url: `https://${HOST}/`,
    via: 'link',
    fetch_id: `fid${path}`,
    admitted_at: 1,
    lease_id: LEASE,
    granted_at: 2,
    delay_ms: 1500,
    ...over,
  };
}

/** a context where the gate granted LEASE for HOST; the responder takes DURATION ms of fake time */
async function granted(respond: Responder, opts: FakeContextOptions = {}): Promise<FakeContext> {
  const ctx = createFakeContext(opts);
  ctx.http.respond = async (req) => {
    ctx.clock.advance(DURATION);
    return respond(req);
  };
  const got = await acquireSlot(ctx.kv.hosts, HOST, ctx.clock.now(), { leaseId: LEASE, leaseMs: 60_000, seq: 0 });
  assert.equal(got.acquired, true);
  return ctx;
}

/** one fetch, settled as the runner does: outputs "published", then the after-publish step */
const fetch = async (ctx: FakeContext, g: FetchGrant) => {
  const outcome = await handleFetch(stageInput(g, { subject: 'crawl.ready.0' }), ctx);
  if (outcome.kind === 'emit') await outcome.afterPublish?.([]);
  return outcome;
};

async function slotOf(ctx: FakeContext): Promise<HostSlot> {
  const e = await ctx.kv.hosts.get(HOST);
  assert.ok(e);
  return parseJsonValue<HostSlot>(e.value);
}

const P = (ctx: FakeContext) => partitionOf(HOST, ctx.settings.partitions);

describe('fetch', () => {
  test('a confirmed lease: one request with the configured fields', async () => {
    const ctx = await granted(() => htmlResponse('<p>x</p>'), {
      settings: { connectTimeoutMs: 1111, headersTimeoutMs: 2222, totalTimeoutMs: 3333, maxPageBytes: 100_000 },
    });
    await fetch(ctx, grantFor('/a'));
    assert.equal(ctx.http.requests.length, 1);
    const req = ctx.http.requests[0]!;
    assert.equal(req.url, `https://${HOST}/a`);
    assert.equal(req.method ?? 'GET', 'GET');
    assert.equal(req.connectTimeoutMs, 1111);
    assert.equal(req.headersTimeoutMs, 2222);
    assert.equal(req.totalTimeoutMs, 3333);
    assert.equal(req.maxBodyBytes, 100_000);
    assert.match(req.headers?.['accept'] ?? '', /text\/html/);
    assert.equal(req.headers?.['user-agent'], undefined, 'the client adds the user-agent');
  });

  test("a confirmed grant's URL leaves its host's queue; a grant not confirmed leaves it there", async () => {
    const ctx = createFakeContext();
    ctx.http.respond = () => htmlResponse('<p>x</p>');
    const queued = await ctx.streams.append(hostQueueSubject(HOST, ctx.settings.partitions), new Uint8Array([1]));
    const other = await ctx.streams.append(hostQueueSubject(HOST, ctx.settings.partitions), new Uint8Array([2]));
    assert.equal((await acquireSlot(ctx.kv.hosts, HOST, ctx.clock.now(), { leaseId: LEASE, leaseMs: 60_000, seq: queued })).acquired, true);
    // a grant whose lease is not this one's (lost): back to the gate, the queue untouched
    await fetch(ctx, grantFor('/a', { lease_id: 'fetch:someone-else' }));
    assert.deepEqual(ctx.streams.deleted, []);
    await fetch(ctx, grantFor('/a'));
    assert.deepEqual(ctx.streams.deleted, [queued], 'the granted URL is deleted once its fetcher has the grant');
    assert.ok(ctx.streams.messages.some((m) => m.seq === other), 'the URL still waiting stays');
  });

  test("the body cap is --max-page-bytes (5 MiB by default), whatever the server's max_payload", async () => {
    const ctx = await granted(() => htmlResponse('<p>x</p>'), { maxPayloadBytes: 1024 * 1024 });
    await fetch(ctx, grantFor('/a'));
    assert.equal(ctx.http.requests[0]!.maxBodyBytes, 5 * 1024 * 1024);
  });

  test('a body larger than a message can carry is stored beside it: the fetched message has an empty body and where it is', async () => {
    const maxPayloadBytes = 1024 * 1024;
    const html = `<html><head><title>Big</title></head><body><p>${'many words of text '.repeat(170_000)}</p></body></html>`;
    const ctx = await granted(() => htmlResponse(html), { maxPayloadBytes });
    const out = await fetch(ctx, grantFor('/big'));
    const [m] = emitsOn(out, 'crawl.fetched');
    assert.ok(m!.data.length < 64 * 1024, `the message carries no body (${m!.data.length} bytes)`);
    const f = decodeFetched(m!.data);
    assert.equal(f.body.length, 0);
    assert.ok(f.body_ref, 'the message says where the body is');
    const chunks = ctx.streams.on(`crawl.bodies.${P(ctx)}`);
    assert.equal(chunks.length, Math.ceil(Buffer.byteLength(html) / (maxPayloadBytes - 4096)), 'in chunks that each fit a message');
    for (const c of chunks) assert.ok(c.data.length <= maxPayloadBytes);
    assert.deepEqual(f.body_ref.seqs, chunks.map((c) => c.seq));
    assert.equal(new TextDecoder().decode(await ctx.bodies.get(f.body_ref)), html, 'the whole body reads back');
    assert.equal(f.truncated, false);
  });

  test("a page carries its URL's importance figure on to extract (the pages table's column)", async () => {
    const ctx = await granted(() => httpResponse(200, { headers: { 'content-type': 'text/html' }, body: new TextEncoder().encode('<p>x</p>') }));
    assert.equal(onlyOn(await fetch(ctx, grantFor('/linked', { importance: 7 })), 'crawl.fetched', decodeFetched).importance, 7);
    const again = await granted(() => httpResponse(200, { headers: { 'content-type': 'text/html' }, body: new TextEncoder().encode('<p>x</p>') }));
    assert.equal(onlyOn(await fetch(again, grantFor('/unlinked')), 'crawl.fetched', decodeFetched).importance, undefined);
  });

  test('a body that fits its message travels in it as before: nothing is stored beside', async () => {
    const maxPayloadBytes = 1024 * 1024;
    const body = new Uint8Array(maxPayloadBytes - MESSAGE_OVERHEAD_BYTES).fill(0x61);
    const ctx = await granted(() => httpResponse(200, { headers: { 'content-type': 'text/html' }, body }), { maxPayloadBytes });
    const f = onlyOn(await fetch(ctx, grantFor('/a')), 'crawl.fetched', decodeFetched);
    assert.equal(f.body.length, body.length);
    assert.equal(f.body_ref, undefined);
    assert.deepEqual(ctx.streams.on('crawl.bodies'), []);
  });

  test('a large answer that is not a page is stored beside its exchange for the archive', async () => {
    const maxPayloadBytes = 512 * 1024;
    const body = new Uint8Array(700 * 1024).fill(7);
    // a PDF: not a page, but read (its links are harvested), so its body is archived
    const ctx = await granted(() => httpResponse(200, { headers: { 'content-type': 'application/pdf' }, body }), { maxPayloadBytes });
    const out = await fetch(ctx, grantFor('/a.pdf'));
    const x = onlyOn(out, 'crawl.exchanges', decodeExchange);
    assert.equal(x.body.length, 0);
    assert.deepEqual(new Uint8Array(await ctx.bodies.get(x.body_ref!)), body);
    for (const m of emitted(out)) assert.ok(m.data.length <= maxPayloadBytes, m.subject);
  });

  test('fetched again (its grant regranted after the fetcher died), the same body is not stored a second time', async () => {
    const html = `<p>${'x'.repeat(900 * 1024)}</p>`;
    const ctx = await granted(() => htmlResponse(html), { maxPayloadBytes: 1024 * 1024 });
    const first = onlyOn(await handleFetch(stageInput(grantFor('/big'), { subject: 'crawl.ready.0' }), ctx), 'crawl.fetched', decodeFetched);
    const stored = ctx.streams.on('crawl.bodies').length;
    // the fetcher died before its outputs went out: the host is freed, the gate grants the URL again
    await releaseSlot(ctx.kv.hosts, HOST, LEASE, ctx.clock.now(), { kind: 'ok', durationMs: 1, baseDelayMs: 0 }, pacingOf(ctx), Math.random, false);
    assert.equal((await acquireSlot(ctx.kv.hosts, HOST, ctx.clock.now() + 60_000, { leaseId: 'fetch:lease-2', leaseMs: 60_000, seq: 0 })).acquired, true);
    ctx.clock.advance(60_000);
    const again = onlyOn(await fetch(ctx, grantFor('/big', { lease_id: 'fetch:lease-2' })), 'crawl.fetched', decodeFetched);
    assert.equal(ctx.streams.on('crawl.bodies').length, stored, 'no second copy');
    assert.deepEqual(again.body_ref, first.body_ref, 'the same chunks');
  });

  test('storing a large body fails (the stream unavailable): the handler fails and the grant goes back to the gate, the host paced', async () => {
    const ctx = await granted(() => htmlResponse(`<p>${'x'.repeat(900 * 1024)}</p>`), { maxPayloadBytes: 1024 * 1024 });
    ctx.streams.failPublish = true;
    await assert.rejects(handleFetch(stageInput(grantFor('/big'), { subject: 'crawl.ready.0' }), ctx), /publish failed/);
    const slot = await slotOf(ctx);
    assert.equal(slot.lease_id, null, 'the host is free');
    assert.ok(!slot.done_leases.includes(LEASE), 'its redelivered grant is not taken for done: it goes back to the gate');
  });

  test('200 html → crawl.fetched with the body and response facts', async () => {
    const html = '<html><head><title>T</title></head><body><a href="/b">b</a></body></html>';
    const ctx = await granted(() => httpResponse(200, { headers: { 'Content-Type': 'text/html; charset=ISO-8859-1', etag: '"x"' }, body: html, truncated: true }));
    const start = ctx.clock.now();
    const out = await fetch(ctx, grantFor('/a'));
    assert.deepEqual(subjectsOf(out), [`crawl.fetched.${P(ctx)}`]);
    assert.equal(emitted(out)[0]!.msgId, 'fetched:fid/a');
    const f = onlyOn(out, 'crawl.fetched', decodeFetched);
    assert.equal(new TextDecoder().decode(f.body), html);
    assert.deepEqual(
      { ...f, body: undefined },
      {
        v: 1,
        fetch_id: 'fid/a',
        url: `https://${HOST}/a`,
        host: HOST,
        domain: 'example.com',
        depth: 2,
        fetch_time: start,
        fetch_status: 200,
        duration_ms: DURATION,
        content_type: 'text/html',
        charset: 'iso-8859-1',
        headers: { 'content-type': 'text/html; charset=ISO-8859-1', etag: '"x"' },
        body: undefined,
        truncated: true,
      },
    );
  });

  test('no Content-Type but markup → treated as HTML', async () => {
    const ctx = await granted(() => httpResponse(200, { body: '<!DOCTYPE html><html><body>x</body></html>' }));
    const f = onlyOn(await fetch(ctx, grantFor('/a')), 'crawl.fetched', decodeFetched);
    assert.equal(f.content_type, 'text/html');
  });

  const redirects: Array<{ status: number; location: string; target: string }> = [
    { status: 301, location: '/new', target: `https://${HOST}/new` },
    { status: 302, location: 'https://other.example.org/x?y=1', target: 'https://other.example.org/x?y=1' },
    { status: 307, location: 'rel', target: `https://${HOST}/dir/rel` },
    { status: 308, location: '//cdn.example.com/z', target: 'https://cdn.example.com/z' },
  ];
  for (const r of redirects) {
    test(`${r.status} Location ${r.location} → redirect outcome + crawl.links to ${r.target} at the same depth`, async () => {
      const ctx = await granted(() => httpResponse(r.status, { headers: { location: r.location } }));
      const out = await fetch(ctx, grantFor('/dir/page'));
      const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
      assert.equal(o.outcome, 'redirect');
      assert.equal(o.fetch_status, r.status);
      assert.equal(o.reason, `redirect to ${r.target}`);
      const l = onlyOn(out, 'crawl.links', decodeDiscoveredLinks);
      assert.deepEqual(l, {
        v: 1,
        source_url: `https://${HOST}/dir/page`,
        depth: 2,
        via: 'redirect',
        links: [{ url: r.target }],
        redirect_chain: [`https://${HOST}/dir/page`],
      });
      assert.deepEqual(subjectsOf(out), [`crawl.outcomes.${P(ctx)}`, `crawl.links.${P(ctx)}`, `crawl.exchanges.${P(ctx)}`]);
    });
  }

  const outcomes: Array<{ name: string; respond: Responder; outcome: OutcomeKind; status: number | null; reason: RegExp }> = [
    { name: '404', respond: () => htmlResponse('<h1>not found</h1>', 404), outcome: 'http_error', status: 404, reason: /^http 404$/ },
    { name: '500', respond: () => httpResponse(500), outcome: 'http_error', status: 500, reason: /^http 500; http 500: backing off \d+ ms \(1 failures in a row\)$/ },
    { name: '304', respond: () => httpResponse(304), outcome: 'http_error', status: 304, reason: /^http 304$/ },
    { name: '301 without Location', respond: () => httpResponse(301), outcome: 'http_error', status: 301, reason: /without a Location/ },
    { name: 'pdf', respond: () => httpResponse(200, { headers: { 'content-type': 'application/pdf' }, body: '%PDF-1.4' }), outcome: 'unsupported_content', status: 200, reason: /^application\/pdf: not stored; 0 links harvested$/ },
    { name: 'json', respond: () => httpResponse(200, { headers: { 'content-type': 'application/json' }, body: '{}' }), outcome: 'unsupported_content', status: 200, reason: /not HTML/ },
    { name: 'no type, not markup', respond: () => httpResponse(200, { body: 'plain words' }), outcome: 'unsupported_content', status: 200, reason: /\(none\) is not HTML/ },
    {
      name: 'network error (dns)',
      respond: (req) => {
        throw new HttpFetchError('dns', `fetching ${req.url}: getaddrinfo ENOTFOUND`);
      },
      outcome: 'network_error',
      status: null,
      reason: /^dns: .*ENOTFOUND; dns: backing off \d+ ms/,
    },
    {
      name: 'network error (timeout)',
      respond: (req) => {
        throw new HttpFetchError('timeout', `fetching ${req.url}: total timeout`);
      },
      outcome: 'network_error',
      status: null,
      reason: /^timeout: .*; timeout: backing off \d+ ms/,
    },
  ];
  /** failures worth retrying: terminal only once the retries are used up */
  const retryable = new Set(['500', 'network error (dns)', 'network error (timeout)']);
  for (const c of outcomes) {
    test(`${c.name} → ${c.outcome}${retryable.has(c.name) ? ' (last retry)' : ''}`, async () => {
      const ctx = await granted(c.respond);
      const start = ctx.clock.now();
      const out = await fetch(ctx, grantFor('/a', retryable.has(c.name) ? { attempt: ctx.settings.maxRetries } : {}));
      assert.deepEqual(subjectsOf(out), [`crawl.outcomes.${P(ctx)}`, `crawl.exchanges.${P(ctx)}`]);
      assert.equal(emitted(out)[0]!.msgId, `outcome:fid/a:${c.outcome}`);
      const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
      assert.equal(o.outcome, c.outcome);
      assert.equal(o.fetch_status, c.status);
      assert.match(o.reason, c.reason);
      assert.equal(o.fetch_id, 'fid/a');
      assert.equal(o.depth, 2);
      assert.equal(o.fetch_time, start);
      assert.equal(o.duration_ms, DURATION);
      const slot = await slotOf(ctx);
      assert.equal(slot.lease_id, null, 'released after a failure too');
      if (retryable.has(c.name)) {
        assert.equal(slot.failures, 1, 'a failure counts toward the backoff');
        assert.ok(slot.next_allowed_at >= start + DURATION + PACING_GUARD_MS + 1600, 'backoff: at least 0.8 x 2000 ms');
      } else {
        assert.equal(slot.next_allowed_at, start + DURATION + PACING_GUARD_MS + 1500);
      }
    });
  }

  test('a retryable failure with retries left: a retry row and the URL back in the frontier; Retry-After paces the host', async () => {
    const ctx = await granted(() => httpResponse(503, { headers: { 'retry-after': '7' } }));
    const out = await fetch(ctx, grantFor('/a', { attempt: 1 }));
    const end = ctx.clock.now();
    assert.deepEqual(subjectsOf(out), [`crawl.outcomes.${P(ctx)}`, `crawl.frontier.${P(ctx)}`, `crawl.exchanges.${P(ctx)}`]);
    const row = onlyOn(out, 'crawl.outcomes', decodeOutcome);
    assert.equal(row.outcome, 'retry');
    assert.equal(row.reason, `http 503: retry 2 of ${ctx.settings.maxRetries}; http 503: Retry-After 7000 ms honoured`);
    const again = onlyOn(out, 'crawl.frontier', decodeAdmitted);
    assert.equal(again.attempt, 2);
    assert.equal(again.fetch_id, 'fid/a', 'the same fetch: one page row when it finally succeeds');
    assert.equal(emitted(out)[1]!.msgId, 'retry:fid/a:2');
    const slot = await slotOf(ctx);
    assert.equal(slot.next_allowed_at, end + PACING_GUARD_MS + 7000);
    assert.match(slot.last_decision, /Retry-After 7000 ms honoured/);
  });

  test("a grant holding a place on its IP gives it back when the request ends", async () => {
    const ctx = await granted(() => htmlResponse('<p>x</p>'));
    await acquireIp(ctx.kv.hosts, '198.51.100.9', ctx.clock.now(), LEASE, ctx.clock.now() + 60_000, 1);
    await fetch(ctx, grantFor('/a', { ip: '198.51.100.9' }));
    assert.equal((await acquireIp(ctx.kv.hosts, '198.51.100.9', ctx.clock.now(), 'next', ctx.clock.now() + 60_000, 1)).acquired, true);
  });

  test('the host slot is released with next_allowed_at = end + guard + delay', async () => {
    const ctx = await granted(() => htmlResponse('<p>x</p>'));
    const start = ctx.clock.now();
    await fetch(ctx, grantFor('/a', { delay_ms: 4000 }));
    const slot = await slotOf(ctx);
    assert.equal(slot.lease_id, null);
    assert.equal(slot.lease_until, 0);
    assert.equal(slot.next_allowed_at, start + DURATION + PACING_GUARD_MS + 4000);
    assert.equal(slot.delay_ms, 4000);
    assert.equal(slot.last_duration_ms, DURATION);
  });

  test('the lease is extended to cover the request while it runs', async () => {
    let during: HostSlot | null = null;
    const ctx = await granted(async () => {
      const e = await ctx.kv.hosts.get(HOST);
      during = parseJsonValue<HostSlot>(e!.value);
      return htmlResponse('<p>x</p>');
    }, { settings: { totalTimeoutMs: 5000 } });
    const start = ctx.clock.now();
    await fetch(ctx, grantFor('/a'));
    assert.ok(during);
    assert.equal((during as HostSlot).lease_id, LEASE);
    assert.equal((during as HostSlot).lease_until, start + 5000 + 10_000);
  });

  const stale: Array<{ name: string; setup: (ctx: FakeContext) => Promise<void> | void; grant: Partial<FetchGrant> }> = [
    { name: 'lease id mismatch', setup: () => {}, grant: { lease_id: 'fetch:someone-else' } },
    { name: 'lease expired', setup: (ctx) => ctx.clock.advance(60_000), grant: {} },
    {
      name: 'lease expired and taken over',
      setup: async (ctx) => {
        ctx.clock.advance(60_001);
        await acquireSlot(ctx.kv.hosts, HOST, ctx.clock.now(), { leaseId: 'fetch:new', leaseMs: 60_000, seq: 0 });
      },
      grant: {},
    },
    { name: 'no slot at all', setup: (ctx) => ctx.kv.hosts.delete(HOST), grant: {} },
  ];
  for (const c of stale) {
    test(`stale grant (${c.name}) → back to crawl.frontier, no request, slot untouched`, async () => {
      const ctx = await granted(() => assert.fail('no request may be made'));
      await c.setup(ctx);
      const before = await ctx.kv.hosts.get(HOST);
      const g = grantFor('/a', c.grant);
      const out = await fetch(ctx, g);
      assert.equal(ctx.http.requests.length, 0);
      assert.deepEqual(subjectsOf(out), [`crawl.frontier.${P(ctx)}`]);
      assert.equal(emitted(out)[0]!.msgId, `regrant:fid/a:${g.lease_id}`);
      const { lease_id: _l, granted_at: _g, delay_ms: _d, ...admitted } = g;
      assert.deepEqual(onlyOn(out, 'crawl.frontier', decodeAdmitted), admitted);
      assert.deepEqual(await ctx.kv.hosts.get(HOST), before, 'the slot is not changed');
      assert.equal(ctx.metrics.total('fetch', 'grants', 'stale'), 1);
    });
  }

  test('an unexpected (non-HTTP) error propagates, and the slot is still released', async () => {
    const ctx = await granted(() => {
      throw new TypeError('bug');
    });
    await assert.rejects(fetch(ctx, grantFor('/a')), TypeError);
    assert.equal((await slotOf(ctx)).lease_id, null);
  });
});

describe('fetch: a grant redelivered after its request completed', () => {
  test('is dropped without a second request (its outputs were published before the host was released)', async () => {
    const ctx = await granted(() => httpResponse(200, { body: '<html><title>x</title></html>', headers: { 'content-type': 'text/html' } }));
    const g = grantFor('/again');
    await fetch(ctx, g);
    const again = await fetch(ctx, g);
    assert.deepEqual(emitted(again), []);
    assert.equal(ctx.http.requests.length, 1);
  });
});

describe('fetch: a grant redelivered before its request was recorded', () => {
  test("outputs that failed to publish: the host is paced by the answer (Retry-After) and the redelivery goes back to the gate without asking again", async () => {
    const ctx = await granted(() => httpResponse(429, { headers: { 'retry-after': '2' } }));
    const g = grantFor('/a');
    const first = await handleFetch(stageInput(g, { subject: 'crawl.ready.0' }), ctx);
    assert.equal(first.kind, 'emit');
    const end = ctx.clock.now();
    // the runner could not publish: it runs onPublishFailed, then naks the grant
    if (first.kind === 'emit') await first.onPublishFailed?.(new Error('publish failed: no responders'));
    const paced = await slotOf(ctx);
    assert.equal(paced.lease_id, null, 'the host is free for the gate to grant again');
    assert.equal(paced.next_allowed_at, end + PACING_GUARD_MS + 2000, 'not before the Retry-After');
    ctx.clock.advance(1000);
    const again = await fetch(ctx, g);
    assert.equal(ctx.http.requests.length, 1, 'no second request from the redelivery');
    assert.deepEqual(subjectsOf(again), [`crawl.frontier.${P(ctx)}`]);
    assert.equal(emitted(again)[0]!.msgId, `regrant:fid/a:${LEASE}`);
  });

  // a JetStream stall longer than the lease: the publish hangs, the lease lapses, and the gate
  // grants the host to another request before the publish ends, one way or the other
  const stalledPastLease = async () => {
    const ctx = await granted(() => htmlResponse('<html><title>x</title></html>'));
    const g = grantFor('/stalled');
    const first = await handleFetch(stageInput(g, { subject: 'crawl.ready.0' }), ctx);
    assert.equal(first.kind, 'emit');
    ctx.clock.advance(ctx.settings.totalTimeoutMs + 10_000 + 1);
    const other = await acquireSlot(ctx.kv.hosts, HOST, ctx.clock.now(), { leaseId: 'fetch:lease-2', leaseMs: 60_000, seq: 1 });
    assert.equal(other.acquired, true, 'the lapsed lease lets the gate grant the host again');
    return { ctx, g, first: first.kind === 'emit' ? first : assert.fail('an emit') };
  };

  test('outputs that failed to publish after the lease lapsed: the redelivery goes back to the gate, and the new holder keeps the host', async () => {
    const { ctx, g, first } = await stalledPastLease();
    await first.onPublishFailed?.(new Error('publish failed: no responders'));
    assert.equal((await slotOf(ctx)).lease_id, 'fetch:lease-2', 'the late release does not free a lease that is not ours');
    const again = await fetch(ctx, g);
    assert.deepEqual(subjectsOf(again), [`crawl.frontier.${P(ctx)}`], 'the URL is not lost: it is queued again');
    assert.equal(ctx.http.requests.length, 1, 'and not fetched while another request holds the host');
  });

  test('outputs published late, after the lease lapsed: a redelivery is recognised as done', async () => {
    const { ctx, g, first } = await stalledPastLease();
    await first.afterPublish?.([]);
    assert.equal((await slotOf(ctx)).lease_id, 'fetch:lease-2');
    assert.deepEqual(emitted(await fetch(ctx, g)), [], 'its page is out: nothing is queued or fetched twice');
    assert.equal(ctx.http.requests.length, 1);
  });

  test('a request whose end nobody recorded (its fetcher died): no second request; the host backs off as after a failure', async () => {
    const ctx = await granted(() => assert.fail('no request may be made'));
    const g = grantFor('/a', { delay_ms: 1500 });
    // the delivery that died had confirmed the lease and started its request
    await confirmLease(ctx.kv.hosts, HOST, LEASE, ctx.clock.now(), 60_000);
    ctx.clock.advance(5000);
    const now = ctx.clock.now();
    const out = await fetch(ctx, g);
    assert.deepEqual(subjectsOf(out), [`crawl.frontier.${P(ctx)}`]);
    assert.equal(ctx.metrics.total('fetch', 'grants', 'unrecorded'), 1);
    const slot = await slotOf(ctx);
    assert.equal(slot.lease_id, null);
    assert.equal(slot.failures, 1);
    assert.ok(slot.next_allowed_at >= now + PACING_GUARD_MS + 0.8 * ctx.settings.backoffBaseMs, `backed off (${slot.next_allowed_at - now} ms)`);
    assert.match(slot.last_decision, /outcome_unknown: backing off/);
  });
});

describe('fetch: redirects, refusals, PDFs', () => {
  test('a redirect carries its chain on, and the outcome names the target (fetch_redirect)', async () => {
    const ctx = await granted(() => httpResponse(302, { headers: { location: '/c' } }));
    const out = await fetch(ctx, grantFor('/b', { redirect_chain: [`https://${HOST}/a`] }));
    const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
    assert.equal(o.fetch_redirect, `https://${HOST}/c`);
    const l = onlyOn(out, 'crawl.links', decodeDiscoveredLinks);
    assert.deepEqual(l.redirect_chain, [`https://${HOST}/a`, `https://${HOST}/b`]);
  });

  test("a seed's redirect says so (the seed's scope goes with it), and so does its target's; a link's does not", async () => {
    const fromSeed = async (over: Partial<FetchGrant>) => {
      const ctx = await granted(() => httpResponse(301, { headers: { location: 'https://www.example.co.uk/' } }));
      return onlyOn(await fetch(ctx, grantFor('/', { depth: 0, ...over })), 'crawl.links', decodeDiscoveredLinks).from_seed;
    };
    assert.equal(await fromSeed({ via: 'seed', source_url: null }), true);
    assert.equal(await fromSeed({ via: 'redirect', from_seed: true }), true);
    assert.equal(await fromSeed({ via: 'link' }), undefined);
  });

  test('a redirect back into its own chain is a loop: recorded, not followed', async () => {
    const ctx = await granted(() => httpResponse(302, { headers: { location: '/a' } }));
    const out = await fetch(ctx, grantFor('/b', { redirect_chain: [`https://${HOST}/a`] }));
    assert.deepEqual(subjectsOf(out), [`crawl.outcomes.${P(ctx)}`, `crawl.exchanges.${P(ctx)}`]);
    assert.match(onlyOn(out, 'crawl.outcomes', decodeOutcome).reason, /^redirect loop: https:\/\/www\.example\.com\/a -> https:\/\/www\.example\.com\/b -> https:\/\/www\.example\.com\/a/);
  });

  test('the sixth redirect in a row is not followed', async () => {
    const chain = [1, 2, 3, 4, 5].map((i) => `https://${HOST}/r${i}`);
    const ctx = await granted(() => httpResponse(302, { headers: { location: '/next' } }));
    const five = await fetch(ctx, grantFor('/r5', { redirect_chain: chain.slice(0, 4) }));
    assert.equal(emitsOn(five, 'crawl.links').length, 1, 'the fifth hop is followed');
    const ctx2 = await granted(() => httpResponse(302, { headers: { location: '/next' } }));
    const six = await fetch(ctx2, grantFor('/r6', { redirect_chain: chain }));
    assert.equal(emitsOn(six, 'crawl.links').length, 0);
    assert.match(onlyOn(six, 'crawl.outcomes', decodeOutcome).reason, /^too many redirects: more than 5 from https:\/\/www\.example\.com\/r1/);
  });

  test('an address refused by the SSRF guard: a refused outcome, no retry, no backoff', async () => {
    const ctx = await granted(() => {
      throw new HttpFetchError('refused', `refused to connect to 10.0.0.5: private address (allow it with --allow-network)`);
    });
    const out = await fetch(ctx, grantFor('/a'));
    assert.deepEqual(subjectsOf(out), [`crawl.outcomes.${P(ctx)}`, `crawl.exchanges.${P(ctx)}`]);
    const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
    assert.equal(o.outcome, 'refused');
    assert.match(o.reason, /private address/);
    assert.equal((await slotOf(ctx)).failures, 0);
  });

  test('a PDF is not stored, but its links are sent on (one level deeper)', async () => {
    const pdf = '%PDF-1.4\n1 0 obj << /Type /Annot /A << /S /URI /URI (https://www.example.com/from-pdf) >> >> endobj\n%%EOF';
    const ctx = await granted(() => httpResponse(200, { headers: { 'content-type': 'application/pdf' }, body: pdf }));
    const out = await fetch(ctx, grantFor('/doc.pdf'));
    const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
    assert.equal(o.outcome, 'unsupported_content');
    assert.equal(o.reason, 'application/pdf: not stored; 1 links harvested');
    const l = onlyOn(out, 'crawl.links', decodeDiscoveredLinks);
    assert.deepEqual(l.links.map((x) => x.url), ['https://www.example.com/from-pdf']);
    assert.equal(l.depth, 3);
  });

  // a PDF has no meta tags: X-Robots-Tag is how it says nofollow
  const pdfHeaderCases: Array<{ header: string; followed: boolean; reason: string }> = [
    { header: 'nofollow', followed: false, reason: 'application/pdf: not stored; 1 links harvested, not followed (X-Robots-Tag: nofollow)' },
    { header: 'examplebot: none', followed: false, reason: 'application/pdf: not stored; 1 links harvested, not followed (X-Robots-Tag: none)' },
    { header: 'googlebot: nofollow', followed: true, reason: 'application/pdf: not stored; 1 links harvested' },
    { header: 'noindex', followed: true, reason: 'application/pdf: not stored; 1 links harvested' },
  ];
  for (const c of pdfHeaderCases) {
    test(`a PDF with X-Robots-Tag: ${c.header}: its links are ${c.followed ? '' : 'not '}followed`, async () => {
      const pdf = '%PDF-1.4\n1 0 obj << /Type /Annot /A << /S /URI /URI (https://www.example.com/from-pdf) >> >> endobj\n%%EOF';
      const ctx = await granted(() => httpResponse(200, { headers: { 'content-type': 'application/pdf', 'x-robots-tag': c.header }, body: pdf }), {
        settings: { userAgent: 'Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot)' },
      });
      const out = await fetch(ctx, grantFor('/doc.pdf'));
      assert.equal(onlyOn(out, 'crawl.outcomes', decodeOutcome).reason, c.reason);
      assert.equal(decodedOn(out, 'crawl.links', decodeDiscoveredLinks).length, c.followed ? 1 : 0);
    });
  }
});

describe('fetch: conditional GET', () => {
  test('a URL with validators is fetched with them; a 304 is not_modified and its kept links are followed', async () => {
    const ctx = await granted(() => htmlResponse('<p>x</p>'));
    await fetch(ctx, grantFor('/a'));
    assert.equal(ctx.http.requests[0]!.headers?.['if-none-match'], undefined, 'nothing to ask the first time');
    await storeValidators(ctx.kv.validators, `https://${HOST}/a`, { etag: '"v1"', 'last-modified': 'Mon, 01 Jan 2024 00:00:00 GMT' }, 5, [`https://${HOST}/b`]);

    const again = await granted(() => httpResponse(304), { kv: { validators: ctx.kv.validators } });
    const out = await fetch(again, grantFor('/a', { fetch_id: 'fid/a-recrawl' }));
    const req = again.http.requests[0]!;
    assert.equal(req.headers?.['if-none-match'], '"v1"');
    assert.equal(req.headers?.['if-modified-since'], 'Mon, 01 Jan 2024 00:00:00 GMT');
    assert.deepEqual(subjectsOf(out), [`crawl.outcomes.${P(again)}`, `crawl.links.${P(again)}`, `crawl.exchanges.${P(again)}`]);
    assert.deepEqual(onlyOn(out, 'crawl.links', decodeDiscoveredLinks).links, [{ url: `https://${HOST}/b` }]);
    const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
    assert.equal(o.outcome, 'not_modified');
    assert.match(o.reason, /^not modified since the fetch of \d{4}-\d\d-\d\dT.* \(ETag "v1"\)$/);
    assert.equal((await slotOf(again)).failures, 0);
  });

  test('validators this same fetch stored (its grant delivered again after its outputs went out) are not sent: it is fetched as the first time', async () => {
    const first = await granted(() => htmlResponse('<p>x</p>'));
    const g = grantFor('/a');
    await fetch(first, g);
    // extract kept the validators of that first answer, under its fetch id
    await storeValidators(first.kv.validators, `https://${HOST}/a`, { etag: '"v1"' }, 5, [], g.fetch_id);
    const again = await granted(() => htmlResponse('<p>x</p>'), { kv: { validators: first.kv.validators } });
    const out = await fetch(again, g);
    assert.equal(again.http.requests[0]!.headers?.['if-none-match'], undefined, 'no conditional GET against its own first answer');
    assert.equal(onlyOn(out, 'crawl.fetched', decodeFetched).fetch_id, g.fetch_id);
  });

  test("a job's revisit answered 304: its outcome row carries the next due time and the change estimate the revisit record has", async () => {
    const ctx = await granted(() => httpResponse(304));
    const record: JobRecord = { id: 'j1', spec: JobSpec.parse({ seeds: [`https://${HOST}/`], revisit: { strategy: 'estimate' } }), state: 'active', created_at: 1, runs: 1, last_run_at: null, next_run_at: null, via: 'http', scope_domains: [HOST], min_delay_ms: 0 };
    await ctx.kv.jobs.put(jobKey('j1'), jsonValue(record));
    const now = ctx.clock.now();
    // two checks seen before this one, one of them a change, over two hours
    const revisit = { interval_ms: 3_600_000, digest: 'sha1:A', simhash: '0000000000000000', fetched_at: now - 3_600_000, due_at: now, etag: '"v1"', checks: 2, changes: 1, observed_ms: 7_200_000 };
    const out = await fetch(ctx, grantFor('/a', { job: 'j1', revisit }));
    const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
    const scheduled = onlyOn(out, 'crawl.revisit', decodeRevisit).state;
    assert.equal(o.outcome, 'not_modified');
    assert.equal(o.next_due_at, scheduled.due_at);
    assert.ok(o.next_due_at! > now);
    assert.equal(o.change_rate, changeRatePerDay(scheduled));
    assert.ok(o.change_rate! > 0 && o.change_rate! < 24, `about one change in a few hours: ${o.change_rate}`);

    // a page that is gone ends its revisits: nothing scheduled, nothing on its row
    const gone = await granted(() => httpResponse(404), { kv: { jobs: ctx.kv.jobs } });
    const goneOut = await fetch(gone, grantFor('/b', { job: 'j1', revisit }));
    const row = onlyOn(goneOut, 'crawl.outcomes', decodeOutcome);
    assert.deepEqual([row.outcome, row.next_due_at, row.change_rate], ['http_error', undefined, undefined]);
    assert.equal(subjectsOf(goneOut).filter((s) => s.startsWith('crawl.revisit')).length, 0);
  });

  test('a 304 the crawler did not ask for stays an http_error', async () => {
    const ctx = await granted(() => httpResponse(304));
    assert.equal(onlyOn(await fetch(ctx, grantFor('/a')), 'crawl.outcomes', decodeOutcome).outcome, 'http_error');
  });
});

describe('fetch: content types', () => {
  test('text/plain is skipped by default and stored as a page when --page-type adds it', async () => {
    const plain = () => httpResponse(200, { headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'just words' });
    const skipped = await granted(plain);
    assert.match(onlyOn(await fetch(skipped, grantFor('/a.txt')), 'crawl.outcomes', decodeOutcome).reason, /^content type text\/plain is not HTML/);
    const kept = await granted(plain, { settings: { pageTypes: ['text/html', 'application/xhtml+xml', 'text/plain'] } });
    assert.equal(onlyOn(await fetch(kept, grantFor('/a.txt')), 'crawl.fetched', decodeFetched).content_type, 'text/plain');
  });
});

describe('fetch: stopping at the headers', () => {
  const video = () => httpResponse(200, { headers: { 'content-type': 'video/mp4', 'content-length': '104857600' }, body: 'x'.repeat(1000) });

  test('the client is asked to read only the bodies fetch keeps or reads', async () => {
    const ctx = await granted(() => htmlResponse('<p>x</p>'), { settings: { pageTypes: ['text/html', 'application/xhtml+xml', 'text/plain'] } });
    await fetch(ctx, grantFor('/a'));
    const wants = ctx.http.requests[0]!.wantBody!;
    const typed = (type: string, status = 200) => wants(status, { 'content-type': type });
    assert.equal(typed('text/html; charset=utf-8'), true);
    assert.equal(typed('text/plain'), true, 'a --page-type is stored');
    assert.equal(typed('application/pdf'), true, "a PDF's links are harvested");
    assert.equal(wants(200, {}), true, 'no Content-Type: sniffed, so read');
    assert.equal(typed('video/mp4'), false);
    assert.equal(typed('application/zip'), false);
    assert.equal(typed('video/mp4', 404), true, 'an error page is read (small, archived as it came)');
    assert.equal(typed('video/mp4', 301), true);
    const sitemap = await granted(() => htmlResponse('<p>x</p>'));
    await fetch(sitemap, grantFor('/sitemap.xml.gz', { fetch_as: 'sitemap' }));
    assert.equal(sitemap.http.requests[0]!.wantBody!(200, { 'content-type': 'application/octet-stream' }), true, 'a sitemap is read whatever its type');
  });

  test('a video: unsupported_content saying the body was not downloaded and its length; counted; archived without a body', async () => {
    const ctx = await granted(video);
    const out = await fetch(ctx, grantFor('/clip.mp4'));
    const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
    assert.equal(o.outcome, 'unsupported_content');
    assert.equal(o.reason, 'content type video/mp4 is not HTML (not stored; --page-type adds types); body not downloaded (Content-Length 104857600 bytes)');
    assert.equal(ctx.metrics.total('fetch', 'bodies_not_downloaded', 'unsupported_content'), 1);
    assert.equal(ctx.metrics.total('fetch', 'bytes_not_downloaded', 'unsupported_content'), 104_857_600);
    const x = onlyOn(out, 'crawl.exchanges', decodeExchange);
    assert.equal(x.body.length, 0);
    assert.equal(x.exchange?.body_not_read, 'body not downloaded (Content-Length 104857600 bytes)');
  });

  test('a body without a Content-Length is not downloaded either, and says so', async () => {
    const ctx = await granted(() => httpResponse(200, { headers: { 'content-type': 'application/zip' }, body: 'PK' }));
    const o = onlyOn(await fetch(ctx, grantFor('/a.zip')), 'crawl.outcomes', decodeOutcome);
    assert.match(o.reason, /; body not downloaded \(no Content-Length\)$/);
    assert.equal(ctx.metrics.total('fetch', 'bytes_not_downloaded', 'unsupported_content'), 0);
  });
});

describe('fetch: the address the request was charged to', () => {
  test('is the one the client tries first; a response from another address is counted', async () => {
    const ctx = await granted(() => htmlResponse('<p>x</p>'));
    await fetch(ctx, grantFor('/a', { ip: '192.0.2.1' }));
    assert.equal(ctx.http.requests[0]!.address, '192.0.2.1');
    assert.equal(ctx.metrics.total('fetch', 'address_fallbacks'), 0, 'the fake answers from 192.0.2.1');
    const other = await granted(() => htmlResponse('<p>x</p>'));
    await fetch(other, grantFor('/b', { ip: '192.0.2.7' }));
    assert.equal(other.metrics.total('fetch', 'address_fallbacks'), 1);
  });
});
