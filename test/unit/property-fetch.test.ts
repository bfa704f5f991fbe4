/**
 * Property-based tests of the fetch stage on hostile responses: random statuses (in and out
 * of 100-599), random header names and values (odd Content-Type, Location, Retry-After),
 * random bodies (empty, binary, markup, PDF-ish), the truncated flag, and network failures
 * with every HttpFetchError code; with or without validators kept by an earlier crawl
 * (conditional GET), and with different --page-type settings.
 *
 * The contract checked: `handleFetch` never throws for these, its outcome is `emit`, every
 * message decodes, and it is exactly one of
 *   - a page on crawl.fetched.*,
 *   - one terminal outcome on crawl.outcomes.* (plus crawl.links for a followed redirect, a
 *     PDF's links, or the kept links of a page a conditional GET found unchanged: 304),
 *   - a `retry` outcome plus the URL back on crawl.frontier.*;
 * and once `afterPublish` ran, the host's lease is released. `classifyResponse`,
 * `parseContentType`, `parseRetryAfter` and `judgeFetch` never throw on random input.
 * No sockets: HTTP answers come from the fake context's responder.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { deflateSync } from 'node:zlib';
import { handleFetch, PACING_GUARD_MS } from '../../stages/fetch/handle.js';
import { MAX_REDIRECTS } from '../../stages/fetch/attempt-messages.js';
import { classifyResponse } from '../../stages/fetch/classify-response.js';
import { parseContentType } from '../../stages/shared/content-type.js';
import { judgeFetch } from '../../stages/shared/politeness/failure-policy.js';
import { readValidators, storeValidators } from '../../stages/shared/conditional-get.js';
import { parseRetryAfter } from '../../stages/shared/politeness/host-pacing.js';
import { acquireSlot, type HostSlot } from '../../stages/shared/politeness/host-slot.js';
import { acquireIp } from '../../stages/shared/politeness/ip-slot.js';
import { parseJsonValue } from '../../pipeline/kv-store.js';
import { partitionOf } from '../../pipeline/partition.js';
import { HttpFetchError, type HttpFetchErrorCode, type HttpResponse } from '../../ports/http.js';
import {
  decodeAdmitted,
  decodeDiscoveredLinks,
  decodeExchange,
  decodeFetched,
  decodeOutcome,
  type AdmittedUrl,
  type DiscoveredLinks,
  type FetchedPage,
  type FetchGrant,
  type UrlOutcome,
} from '../../schemas/index.js';
import { createFakeContext, onSubject, stageInput, T0, type FakeContext } from '../support/fake-context.js';

// ---------------------------------------------------------------------------------------------
// Arbitraries

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const controlChar = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.constantFrom('\x7f', '\x85', '\xa0', '\u2028', '\ufeff', '\ufffd'),
);
const punct = fc.constantFrom('%', '%zz', '%41', ' ', '\\', '/', '//', '?', '#', '&', '=', '@', ':', ';', '"', "'", '<', '>', ',', '[', ']', '..');
/** any UTF-16 string; `surrogates: false` for strings that come out of a message decoder (never lone surrogates) */
const hostileString = (maxLength = 40, surrogates = true) =>
  fc.string({
    unit: fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
      { weight: surrogates ? 1 : 0, arbitrary: loneSurrogate },
      { weight: 1, arbitrary: controlChar },
      { weight: 2, arbitrary: punct },
    ),
    maxLength,
  });
/** header values as undici hands them over: latin1 (obs-text) is possible, so is anything else here */
const latin1String = (maxLength = 40) => fc.string({ unit: fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength });

const status = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 100, max: 599 }) },
  { weight: 4, arbitrary: fc.constantFrom(200, 200, 203, 204, 206, 301, 302, 303, 304, 307, 308, 300, 399, 429, 500, 503, 504) },
  { weight: 1, arbitrary: fc.constantFrom(0, 1, 99, 600, 999, 1000, 65535, -1, 2 ** 31 - 1, -(2 ** 31)) },
  { weight: 1, arbitrary: fc.integer({ min: -100_000, max: 100_000 }) },
);

const contentType = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constantFrom(
      'text/html', 'text/html; charset=utf-8', 'TEXT/HTML;CHARSET=ISO-8859-1', 'text/html;charset="utf-8"', "text/html; charset='x'", 'text/html; charset=',
      'text/html; charset', 'text/html;;;', ';', '', ' ', 'text/html; charset=utf-8; charset=latin1', 'text/html ; foo=bar=baz ; charset = "koi8-r" ',
      'application/xhtml+xml', 'application/pdf', 'APPLICATION/PDF; x=y', 'application/x-pdf', 'application/json', 'image/png', 'text/plain',
      '*/*', 'text/html\u0000', 'text/html, application/pdf', 'text/ html', 'html', 'text/html; charset=\ud800', 'text/html; charset=utf-16be',
      'multipart/x-mixed-replace; boundary=x', 'text/html; charset=x-user-defined', 'text/html; charset=replacement',
    ),
  },
  { weight: 1, arbitrary: latin1String(30) },
  { weight: 1, arbitrary: hostileString(30) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('text/html', 'application/pdf', ''), hostileString(20)).map(([t, p]) => `${t};${p}`) },
);

const location = fc.oneof(
  { weight: 3, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true, authoritySettings: { withIPv6: true, withPort: true, withUserInfo: true } }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '/new', 'rel', '../../../up', '//cdn.example.com/z', '?q=1', '#frag', '', ' ', 'http://', 'https://', 'http://[::1', 'http://[::1]:99999/', 'http://exa mple.com/',
      'javascript:alert(1)', 'data:text/html,<p>x</p>', 'mailto:a@b', 'ftp://example.com/', 'file:///etc/passwd', 'about:blank', 'http://%zz/', 'http://a:b@c/',
      'https://www.example.com/', 'https://www.example.com/a', 'http://www.example.com:443/a', 'http:\\\\www.example.com\\b', '\thttps://www.example.com/x\n',
      'https://münchen.example/ü?ä=ö', 'https://xn--/', `https://www.example.com/${'x'.repeat(5000)}`, '/%', '%00', 'http://0x7f.1/', 'https://example.com:-1/',
    ),
  },
  { weight: 2, arbitrary: hostileString(60) },
  { weight: 1, arbitrary: latin1String(60) },
);

const retryAfter = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '0', '1', '7', '120', '-1', '1.5', '1e3', ' 5 ', '', '  ', 'soon', '99999999999999999999', '9'.repeat(400), '0x10', '+5', '٣',
      'Wed, 21 Oct 2015 07:28:00 GMT', 'Fri, 31 Dec 9999 23:59:59 GMT', 'Mon, 01 Jan 2024 00:00:10 GMT', 'Sun, 06 Nov 1994 08:49:37 GMT',
      'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994', '2024-01-01T00:01:00Z', 'Thu, 01 Jan 1970 00:00:00 GMT', '-271821-04-20',
      '275760-09-13T00:00:00.000Z', 'Infinity', 'NaN', '1, 2',
    ),
  },
  { weight: 1, arbitrary: fc.nat().map(String) },
  { weight: 1, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()) },
  { weight: 1, arbitrary: hostileString(30) },
);

/** HTTP token characters (what a header name can be on the wire) */
const tokenChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789!#$%&\'*+-.^_`|~'.split(''));
const headerName = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: tokenChar, minLength: 1, maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'etag', 'content-encoding', 'x-ä', '', ' ') },
);
const headerValue = fc.oneof(latin1String(60), hostileString(60), fc.constant(''), fc.integer({ min: 1, max: 10_000 }).map((n) => 'v'.repeat(n)));

const pdfBody = fc
  .array(
    fc.oneof(
      fc.constantFrom('%PDF-1.4\n', '/URI (https://www.example.com/from-pdf)', '/URI <68747470733a2f2f782e6578616d706c652f>', '/URI (http://[::1', 'stream\n', 'endstream', 'https://a.example/x).', '\\(', '%%EOF'),
      hostileString(30),
      location.map((l) => `/URI (${l})`),
    ),
    { maxLength: 12 },
  )
  .map((parts) => new TextEncoder().encode(parts.join(' ')));
const body = fc.oneof(
  { weight: 2, arbitrary: fc.constant(new Uint8Array(0)) },
  { weight: 3, arbitrary: fc.uint8Array({ maxLength: 2048 }) },
  { weight: 3, arbitrary: fc.constantFrom('<!DOCTYPE html><p>x</p>', '  <html><body>', '<HEAD>', '\ufeff<html>', '<body', 'plain words', '{}', '\u0000\u0001').map((s) => new TextEncoder().encode(s)) },
  { weight: 2, arbitrary: hostileString(200).map((s) => new TextEncoder().encode(s)) },
  { weight: 2, arbitrary: pdfBody },
);

interface ResponseSpec {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  truncated: boolean;
  url: string;
}

function responseOf(r: {
  status: number;
  contentType: string | undefined;
  location: string | undefined;
  retryAfter: string | undefined;
  extra: Array<[string, string]>;
  body: Uint8Array;
  truncated: boolean;
  url: string;
}): ResponseSpec {
  // built like the real client: lower-case names on a plain object, later values win
  const headers: Record<string, string> = {};
  for (const [k, v] of r.extra) headers[k.toLowerCase()] = v;
  if (r.contentType !== undefined) headers['content-type'] = r.contentType;
  if (r.location !== undefined) headers['location'] = r.location;
  if (r.retryAfter !== undefined) headers['retry-after'] = r.retryAfter;
  return { status: r.status, headers, body: r.body, truncated: r.truncated, url: r.url };
}

const common = {
  extra: fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }),
  truncated: fc.boolean(),
  url: fc.constantFrom('', '', 'https://www.example.com/other', 'not a url'),
};

/** every field independent: mostly odd combinations */
const anyResponse = fc
  .record({
    status,
    contentType: fc.option(contentType, { nil: undefined }),
    location: fc.option(location, { nil: undefined }),
    retryAfter: fc.option(retryAfter, { nil: undefined }),
    body,
    ...common,
  })
  .map(responseOf);

/** coherent but hostile: a 2xx PDF or page, a 3xx with a Location, a 429/503 with Retry-After */
const shapedResponse = fc.oneof(
  fc
    .record({ status: fc.constantFrom(200, 203, 206), contentType: fc.constantFrom('application/pdf', 'application/x-pdf', 'APPLICATION/PDF; v=1'), body: pdfBody, ...common })
    .map((r) => responseOf({ ...r, location: undefined, retryAfter: undefined })),
  fc
    .record({ status: fc.integer({ min: 200, max: 299 }), contentType: fc.option(contentType, { nil: undefined }), body, ...common })
    .map((r) => responseOf({ ...r, location: undefined, retryAfter: undefined })),
  fc
    .record({ status: fc.constantFrom(300, 301, 302, 303, 307, 308, 399), location, body, ...common })
    .map((r) => responseOf({ ...r, contentType: undefined, retryAfter: undefined })),
  fc
    .record({ status: fc.constant(304), contentType: fc.option(contentType, { nil: undefined }), body, ...common })
    .map((r) => responseOf({ ...r, location: undefined, retryAfter: undefined })),
  fc
    .record({ status: fc.constantFrom(429, 503), retryAfter, body, ...common })
    .map((r) => responseOf({ ...r, contentType: undefined, location: undefined })),
);

const response: fc.Arbitrary<ResponseSpec> = fc.oneof({ weight: 1, arbitrary: anyResponse }, { weight: 1, arbitrary: shapedResponse });

const ERROR_CODES: readonly HttpFetchErrorCode[] = ['timeout', 'dns', 'connect', 'reset', 'tls', 'protocol', 'refused', 'other'];
// the real client's messages are never empty ("fetching <url>: ..."); an empty one is the known gap below
const networkFailure = fc.record({ code: fc.constantFrom(...ERROR_CODES), message: fc.oneof(hostileString(80), fc.constantFrom(' ', '\n', 'x')).filter((m) => m.length > 0) });

type Answer = { kind: 'response'; res: ResponseSpec } | { kind: 'error'; code: HttpFetchErrorCode; message: string };
const answer: fc.Arbitrary<Answer> = fc.oneof(
  { weight: 4, arbitrary: response.map((res) => ({ kind: 'response' as const, res })) },
  { weight: 1, arbitrary: networkFailure.map((e) => ({ kind: 'error' as const, ...e })) },
);

/** the grant: canonical URLs as normalize makes them, some odd but valid */
const HOSTS = ['www.example.com', 'example.com', '[::1]', '192.0.2.7', 'xn--mnchen-3ya.example', 'a_b.site.test'] as const;
const grantPath = fc.constantFrom('/', '/a', '/dir/page', '/%E2%82%AC?x=1', '/a%25b', `/${'p'.repeat(1900)}`, '/doc.pdf', '/r?a&b=c');
const grant = fc
  .record({
    host: fc.constantFrom(...HOSTS),
    scheme: fc.constantFrom('http', 'https'),
    port: fc.constantFrom('', ':8080'),
    path: grantPath,
    depth: fc.integer({ min: 0, max: 7 }),
    attempt: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    redirectChain: fc.option(
      fc.array(fc.oneof(fc.webUrl(), hostileString(30, false), fc.constantFrom('https://www.example.com/new', 'https://www.example.com/a', '/new')), { maxLength: MAX_REDIRECTS + 2 }),
      { nil: undefined },
    ),
    delayMs: fc.integer({ min: 0, max: 120_000 }),
    ip: fc.option(fc.constantFrom('198.51.100.9', '2001:db8::1'), { nil: undefined }),
    fetchId: fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), hostileString(12, false)),
  })
  .map((r): FetchGrant => ({
    v: 1,
    url: `${r.scheme}://${r.host}${r.port}${r.path}`,
    host: r.host,
    domain: r.host,
    depth: r.depth,
    source_url: null,
    via: 'link',
    fetch_id: r.fetchId,
    admitted_at: 1,
    lease_id: 'fetch:lease-1',
    granted_at: 2,
    delay_ms: r.delayMs,
    ...(r.attempt !== undefined ? { attempt: r.attempt } : {}),
    ...(r.redirectChain !== undefined ? { redirect_chain: r.redirectChain } : {}),
    ...(r.ip !== undefined ? { ip: r.ip } : {}),
  }));

interface FetchSettings {
  maxRetries: number;
  maxDepth: number;
  partitions: number;
  pageTypes: string[];
}
const settings: fc.Arbitrary<FetchSettings> = fc.record({
  maxRetries: fc.integer({ min: 0, max: 4 }),
  maxDepth: fc.integer({ min: 0, max: 8 }),
  partitions: fc.constantFrom(1, 16, 1024),
  pageTypes: fc.constantFrom(['text/html', 'application/xhtml+xml'], ['text/html'], ['text/html', 'text/plain', 'application/json'], ['application/pdf', 'text/html'], ['image/png']),
});

/**
 * What an earlier crawl kept for the URL (conditional GET): hostile validators (undici hands
 * header values over as latin1) and links; `null` keeps nothing (a first crawl).
 */
interface Previous {
  headers: Record<string, string>;
  fetchTime: number;
  links: string[];
}
const previous: fc.Arbitrary<Previous | null> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(null) },
  {
    weight: 1,
    arbitrary: fc
      .record({
        etag: fc.option(fc.oneof(fc.constantFrom('"abc"', 'W/"x"', '', '*', '"a", "b"'), latin1String(40)), { nil: undefined }),
        lastModified: fc.option(fc.oneof(fc.constantFrom('Wed, 21 Oct 2015 07:28:00 GMT', '', 'yesterday'), latin1String(40)), { nil: undefined }),
        fetchTime: fc.integer({ min: -8.64e15, max: 8.64e15 }),
        links: fc.array(fc.oneof(fc.webUrl(), hostileString(40, false)), { maxLength: 6 }),
      })
      .map(({ etag, lastModified, fetchTime, links }) => ({
        headers: { ...(etag !== undefined ? { etag } : {}), ...(lastModified !== undefined ? { 'last-modified': lastModified } : {}) },
        fetchTime,
        links,
      })),
  },
);

// ---------------------------------------------------------------------------------------------
// Helpers

const DURATION = 137;

/** a context where the gate granted the grant's lease (and its IP place); the responder takes DURATION ms */
async function granted(g: FetchGrant, s: Partial<FetchSettings>, a: Answer, prev: Previous | null = null): Promise<FakeContext> {
  const ctx = createFakeContext({ settings: s });
  if (prev) await storeValidators(ctx.kv.validators, g.url, prev.headers, prev.fetchTime, prev.links);
  ctx.http.respond = (req) => {
    ctx.clock.advance(DURATION);
    if (a.kind === 'error') throw new HttpFetchError(a.code, a.message);
    const res: HttpResponse = { status: a.res.status, headers: a.res.headers, body: a.res.body, truncated: a.res.truncated, durationMs: DURATION, remoteAddress: '192.0.2.1', url: a.res.url || req.url };
    return res;
  };
  const got = await acquireSlot(ctx.kv.hosts, g.host, ctx.clock.now(), { leaseId: g.lease_id, leaseMs: 60_000, seq: 0 });
  assert.equal(got.acquired, true);
  if (g.ip) await acquireIp(ctx.kv.hosts, g.ip, ctx.clock.now(), g.lease_id, ctx.clock.now() + 60_000, 1);
  return ctx;
}

async function slotOf(ctx: FakeContext, host: string): Promise<HostSlot> {
  const e = await ctx.kv.hosts.get(host);
  assert.ok(e, 'the host has a slot');
  return parseJsonValue<HostSlot>(e.value);
}

interface Decoded {
  fetched: FetchedPage[];
  outcomes: UrlOutcome[];
  links: DiscoveredLinks[];
  frontier: AdmittedUrl[];
}

const TERMINAL = new Set(['redirect', 'http_error', 'network_error', 'unsupported_content', 'refused', 'not_modified']);

// every property runs its full number of runs (no time limit that would end it early and pass)
const opts = (numRuns: number) => ({ numRuns });

/** what the handler property saw, across its runs */
const coverage = new Map<string, number>();
const note = (key: string) => coverage.set(key, (coverage.get(key) ?? 0) + 1);

// ---------------------------------------------------------------------------------------------

describe('fetch: properties (hostile responses)', () => {
  test('handleFetch: never throws; emit; messages decode; exactly one of page / terminal outcome / retry + re-queue; lease released', async () => {
    await fc.assert(
      fc.asyncProperty(grant, settings, answer, previous, async (g, s, a, prev) => {
        const ctx = await granted(g, s, a, prev);
        const kept = await readValidators(ctx.kv.validators, g.url);
        assert.equal(kept !== null, prev !== null && ('etag' in prev.headers || 'last-modified' in prev.headers), 'validators kept when there were any');
        const start = ctx.clock.now();
        const outcome = await handleFetch(stageInput(g, { subject: 'crawl.ready.0' }), ctx);
        assert.equal(outcome.kind, 'emit', `expected emit, got ${JSON.stringify(outcome)}`);
        if (outcome.kind !== 'emit') return;
        assert.equal(ctx.http.requests.length, 1, 'one request');
        // a conditional GET with what was kept
        const sent = ctx.http.requests[0]!.headers ?? {};
        assert.equal(sent['if-none-match'], kept?.etag || undefined);
        assert.equal(sent['if-modified-since'], kept?.last_modified || undefined);

        const P = partitionOf(g.host, s.partitions);
        const d: Decoded = { fetched: [], outcomes: [], links: [], frontier: [] };
        let exchanges = 0;
        for (const e of outcome.messages) {
          assert.ok(e.msgId, `${e.subject} carries a msgId`);
          if (onSubject(e.subject, 'crawl.fetched')) d.fetched.push(decodeFetched(e.data));
          else if (onSubject(e.subject, 'crawl.outcomes')) d.outcomes.push(decodeOutcome(e.data));
          else if (onSubject(e.subject, 'crawl.links')) d.links.push(decodeDiscoveredLinks(e.data));
          else if (onSubject(e.subject, 'crawl.frontier')) d.frontier.push(decodeAdmitted(e.data));
          // every exchange that is not an HTML page goes to the archive, whole
          else if (onSubject(e.subject, 'crawl.exchanges')) {
            assert.equal(decodeExchange(e.data).url, g.url);
            exchanges += 1;
          }
          else assert.fail(`unexpected subject ${e.subject}`);
          assert.equal(e.subject.slice(e.subject.lastIndexOf('.') + 1), String(P), 'the host partition');
        }
        const msgIds = outcome.messages.map((e) => e.msgId);
        assert.equal(new Set(msgIds).size, msgIds.length, 'distinct msgIds');

        const status = a.kind === 'response' ? a.res.status : null;
        const retryable =
          a.kind === 'response' ? a.res.status === 429 || a.res.status >= 500 : a.code === 'timeout' || a.code === 'reset' || a.code === 'connect';
        const notModified = status === 304 && kept !== null;
        const willRetry = !notModified && retryable && (g.attempt ?? 0) < s.maxRetries;

        if (d.fetched.length > 0) {
          // a page
          note('fetched');
          assert.equal(outcome.messages.length, 1, 'a page comes alone (it carries its exchange for the archive)');
          assert.ok(a.kind === 'response' && status !== null && status >= 200 && status < 300, `a page only for a 2xx (got ${status})`);
          assert.ok(!willRetry);
          const f = d.fetched[0]!;
          assert.equal(f.fetch_id, g.fetch_id);
          assert.equal(f.url, g.url);
          assert.equal(f.fetch_status, status);
          assert.equal(f.truncated, a.res.truncated);
          assert.deepEqual(Buffer.from(f.body), Buffer.from(a.res.body), 'the body, byte for byte');
          assert.equal(f.fetch_time, start);
          assert.equal(f.duration_ms, DURATION);
          assert.equal(classifyResponse(a.res as HttpResponse, g.url, s.pageTypes).kind, 'html');
        } else if (d.frontier.length > 0) {
          // a retry
          note('retry');
          assert.ok(willRetry, 'a re-queue only for a retryable failure with retries left');
          assert.equal(d.outcomes.length, 1);
          assert.equal(d.frontier.length, 1);
          assert.equal(d.links.length, 0);
          assert.equal(exchanges, 1, 'the failed attempt is archived');
          assert.equal(outcome.messages.length, 3);
          const o = d.outcomes[0]!;
          assert.equal(o.outcome, 'retry');
          assert.equal(o.fetch_status, status);
          const again = d.frontier[0]!;
          assert.equal(again.attempt, (g.attempt ?? 0) + 1);
          assert.equal(again.fetch_id, g.fetch_id);
          assert.equal(again.url, g.url);
          assert.equal(again.depth, g.depth);
          assert.ok(!('lease_id' in again), 'the re-queued URL holds no lease');
        } else {
          // a terminal outcome
          assert.ok(!willRetry, 'no retry left or not retryable');
          assert.equal(d.outcomes.length, 1, 'exactly one outcome');
          const o = d.outcomes[0]!;
          note(o.outcome);
          assert.ok(TERMINAL.has(o.outcome), `terminal outcome, got ${o.outcome}`);
          assert.equal(o.fetch_status, status);
          assert.equal(o.outcome === 'not_modified', notModified, 'not_modified exactly for a 304 to a conditional GET');
          if (a.kind === 'error') assert.equal(o.outcome, a.code === 'refused' ? 'refused' : 'network_error');
          else assert.ok(o.outcome !== 'network_error' && o.outcome !== 'refused');
          assert.ok(d.links.length <= 1);
          if (notModified) assert.equal(d.links.length, kept!.links!.length > 0 && g.depth + 1 <= s.maxDepth ? 1 : 0, 'a 304 follows the kept links');
          assert.equal(exchanges, 1, 'the exchange is archived');
          assert.equal(outcome.messages.length, 2 + d.links.length);
          if (d.links.length === 1) {
            const l = d.links[0]!;
            note(`${o.outcome}+links`);
            assert.equal(l.source_url, g.url);
            assert.ok(l.links.length > 0);
            if (o.outcome === 'redirect') {
              assert.equal(l.via, 'redirect');
              assert.equal(l.depth, g.depth);
              assert.equal(l.links.length, 1);
              assert.equal(o.fetch_redirect, l.links[0]!.url);
              assert.deepEqual(l.redirect_chain, [...(g.redirect_chain ?? []), g.url]);
              assert.ok(!l.redirect_chain!.slice(0, -1).includes(l.links[0]!.url) && l.links[0]!.url !== g.url, 'a loop is not followed');
              assert.ok(l.redirect_chain!.length <= MAX_REDIRECTS + 1, 'too many redirects are not followed');
              assert.doesNotThrow(() => new URL(l.links[0]!.url), 'the redirect target is absolute');
            } else if (o.outcome === 'not_modified') {
              // an unchanged page's links, as the earlier crawl kept them
              assert.equal(l.via, 'link');
              assert.equal(l.depth, g.depth + 1);
              assert.ok(l.depth <= s.maxDepth);
              assert.deepEqual(l.links.map((x) => x.url), kept!.links);
            } else {
              assert.equal(o.outcome, 'unsupported_content', 'links only with a redirect, a PDF or a 304');
              assert.equal(l.via, 'link');
              assert.equal(l.depth, g.depth + 1);
              assert.ok(l.depth <= s.maxDepth);
              for (const link of l.links) assert.match(link.url, /^https?:\/\//, 'PDF links are absolute http(s)');
            }
          }
        }
        for (const o of d.outcomes) {
          assert.ok(o.reason.length > 0, 'an outcome has a reason');
          assert.equal(o.fetch_id, g.fetch_id);
          assert.equal(o.url, g.url);
          assert.equal(o.host, g.host);
          assert.equal(o.depth, g.depth);
          assert.equal(o.fetch_time, start);
          assert.equal(o.duration_ms, DURATION);
        }

        // the runner publishes, then runs afterPublish: the host is free again, paced
        await outcome.afterPublish?.([]);
        const slot = await slotOf(ctx, g.host);
        assert.equal(slot.lease_id, null, 'lease released');
        assert.equal(slot.lease_until, 0);
        assert.ok(slot.done_leases.includes(g.lease_id));
        assert.ok(Number.isFinite(slot.next_allowed_at) && slot.next_allowed_at >= start + DURATION, `next_allowed_at ${slot.next_allowed_at}`);
        assert.ok(slot.next_allowed_at <= start + DURATION + PACING_GUARD_MS + Math.max(g.delay_ms, ctx.settings.maxBackoffMs, ctx.settings.pauseMs) + 1, 'the wait is bounded');
        if (g.ip) {
          const next = await acquireIp(ctx.kv.hosts, g.ip, ctx.clock.now(), 'next', ctx.clock.now() + 60_000, 1);
          assert.equal(next.acquired, true, 'the IP place is given back');
        }
        // a redelivery after this is recognised as done: no second request, nothing emitted
        const again = await handleFetch(stageInput(g, { subject: 'crawl.ready.0' }), ctx);
        assert.deepEqual(again, { kind: 'emit', messages: [] });
        assert.equal(ctx.http.requests.length, 1);
      }),
      opts(600),
    );
  });

  test('handleFetch: the random responses reached every kind of result', (t) => {
    t.diagnostic(JSON.stringify(Object.fromEntries(coverage)));
    for (const key of ['fetched', 'retry', 'redirect', 'redirect+links', 'http_error', 'network_error', 'refused', 'unsupported_content', 'unsupported_content+links', 'not_modified', 'not_modified+links']) {
      assert.ok((coverage.get(key) ?? 0) > 0, `no run produced ${key}`);
    }
  });

  // Found by the property above (counterexample shrunk to: any grant, maxRetries 0,
  // HttpFetchError('refused', '')): a `refused` outcome takes the error's message verbatim as
  // its reason, so an empty message gives a fetch_log row with an empty reason (network_error
  // rows are prefixed with the code and never empty). The real client never throws an empty
  // message, so this needs another HttpClient; left for the stage's owner to decide.
  test('HttpFetchError("refused", "") still gives a refused outcome with a reason (was a bug)', async () => {
    const g: FetchGrant = {
      v: 1, url: 'http://www.example.com/', host: 'www.example.com', domain: 'example.com', depth: 0, source_url: null, via: 'link',
      fetch_id: 'f', admitted_at: 1, lease_id: 'fetch:lease-1', granted_at: 2, delay_ms: 0,
    };
    const ctx = await granted(g, { maxRetries: 0, maxDepth: 0, partitions: 1 }, { kind: 'error', code: 'refused', message: '' });
    const out = await handleFetch(stageInput(g), ctx);
    assert.equal(out.kind, 'emit');
    const o = decodeOutcome((out as Extract<typeof out, { kind: 'emit' }>).messages[0]!.data);
    assert.equal(o.outcome, 'refused');
    assert.ok(o.reason.length > 0, 'a refused outcome has a reason');
  });

  // Found while checking message sizes (not by the random property: it needs a crafted
  // stream). StageContext.maxPayloadBytes exists "so a stage can cap what it emits", and fetch
  // caps the page body by it, but not the links harvested from a PDF: up to 1000 links of up to
  // 4096 characters, and they may come out of a FlateDecode stream, so an 8 KB PDF gives a 4 MB
  // crawl.links message. Above the server's max_payload (1 MiB by default for a plain
  // nats-server) the publish fails, and the runner naks and retries the grant forever
  // (max_deliver -1; publish errors never dead-letter).
  test('an 8 KB PDF with 1000 huge URLs never yields a message larger than maxPayloadBytes (was a bug)', async () => {
    const urls = Array.from({ length: 1000 }, (_, i) => `https://x.example/${'a'.repeat(4000)}${i}`).join(' ');
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n1 0 obj<</Filter/FlateDecode>>stream\n'), deflateSync(Buffer.from(urls)), Buffer.from('\nendstream\nendobj\n%%EOF')]);
    const g: FetchGrant = {
      v: 1, url: 'https://www.example.com/a.pdf', host: 'www.example.com', domain: 'example.com', depth: 0, source_url: null, via: 'link',
      fetch_id: 'f', admitted_at: 1, lease_id: 'fetch:lease-1', granted_at: 2, delay_ms: 0,
    };
    const ctx = await granted(g, { maxRetries: 0, maxDepth: 5, partitions: 16 }, {
      kind: 'response',
      res: { status: 200, headers: { 'content-type': 'application/pdf' }, body: new Uint8Array(pdf), truncated: false, url: '' },
    });
    const maxPayloadBytes = 1024 * 1024;
    ctx.maxPayloadBytes = maxPayloadBytes;
    const out = await handleFetch(stageInput(g), ctx);
    assert.ok(pdf.length <= ctx.http.requests[0]!.maxBodyBytes, 'the body is within the request cap');
    assert.equal(out.kind, 'emit');
    for (const m of (out as Extract<typeof out, { kind: 'emit' }>).messages) {
      assert.ok(m.data.length <= maxPayloadBytes, `${m.subject}: ${m.data.length} bytes > max payload ${maxPayloadBytes}`);
    }
  });

  test('handleFetch: an unexpected (non-HTTP) error is rethrown as is, and the lease is still released', async () => {
    await fc.assert(
      fc.asyncProperty(grant, fc.oneof(fc.constant(new TypeError('bug')), fc.string(), fc.constant(undefined), fc.constant(null), fc.integer()), async (g, thrown) => {
        const ctx = await granted(g, { maxRetries: 3, maxDepth: 5, partitions: 16 }, { kind: 'response', res: { status: 200, headers: {}, body: new Uint8Array(0), truncated: false, url: '' } });
        ctx.http.respond = () => {
          throw thrown;
        };
        await assert.rejects(handleFetch(stageInput(g), ctx), (err) => err === thrown);
        assert.equal((await slotOf(ctx, g.host)).lease_id, null);
      }),
      opts(50),
    );
  });

  test('classifyResponse and parseContentType never throw; the verdict is consistent with the status', () => {
    fc.assert(
      fc.property(response, fc.oneof(fc.webUrl(), hostileString(40), fc.constant('')), (r, url) => {
        const res: HttpResponse = { ...r, durationMs: 0, remoteAddress: null };
        const v = classifyResponse(res, url);
        const isRedirectStatus = r.status >= 300 && r.status < 400 && r.status !== 304;
        if (v.kind === 'redirect') {
          assert.ok(isRedirectStatus);
          assert.doesNotThrow(() => new URL(v.location));
        } else if (v.kind === 'http_error') {
          assert.ok(v.reason.length > 0);
          assert.ok(isRedirectStatus || r.status < 200 || r.status >= 300);
        } else {
          assert.ok(r.status >= 200 && r.status < 300, `${v.kind} for status ${r.status}`);
        }
        const ct = parseContentType(r.headers['content-type']);
        assert.equal(typeof ct.mimeType, 'string');
        assert.ok(ct.charset === null || typeof ct.charset === 'string');
      }),
      opts(3000),
    );
  });

  test('parseRetryAfter never throws and is null or a non-negative number', () => {
    fc.assert(
      fc.property(
        fc.option(fc.oneof(retryAfter, hostileString(40), latin1String(40)), { nil: undefined }),
        fc.oneof(fc.constant(T0), fc.integer({ min: -8.64e15, max: 8.64e15 })),
        (value, now) => {
          const ms = parseRetryAfter(value, now);
          assert.ok(ms === null || (typeof ms === 'number' && ms >= 0), `parseRetryAfter(${JSON.stringify(value)}, ${now}) = ${ms}`);
          if (value === undefined) assert.equal(ms, null);
        },
      ),
      opts(3000),
    );
  });

  test('judgeFetch never throws; only 429, 5xx and timeout/reset/connect are retryable', () => {
    fc.assert(
      fc.property(fc.oneof(response.map((r) => ({ res: r, err: null })), networkFailure.map((e) => ({ res: null, err: e }))), fc.nat(100_000), fc.nat(100_000), (a, base, duration) => {
        const res: HttpResponse | null = a.res ? { ...a.res, durationMs: duration, remoteAddress: null } : null;
        const err = a.err ? new HttpFetchError(a.err.code, a.err.message) : null;
        const v = judgeFetch(res, err, base, duration, T0);
        const expected = res ? res.status === 429 || res.status >= 500 : ['timeout', 'reset', 'connect'].includes(err!.code);
        assert.equal(v.retryable, expected);
        if (v.feedback.kind === 'throttled') assert.ok(v.feedback.retryAfterMs === null || v.feedback.retryAfterMs >= 0);
      }),
      opts(2000),
    );
  });
});
