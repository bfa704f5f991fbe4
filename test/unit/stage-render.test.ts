/**
 * The render stage's handle against the fake context and a fake browser: which of a page's
 * requests are made (and how: robots.txt first, one at a time per host, the host's delay
 * between them, through the crawler's HTTP client), what the outcome holds (the DOM for
 * extract, every exchange for the archive), and what a failed render ends in.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRenderHandler } from '../../stages/render/handle.js';
import { blockedByPolicy } from '../../stages/render/request-policy.js';
import { SubresourceCache } from '../../stages/render/subresource-cache.js';
import { MAX_RENDER_ATTEMPTS } from '../../stages/render/spec.js';
import { RenderFailure, type BrowserAnswer, type BrowserRequest, type Renderer, type RenderJob, type RenderResult } from '../../ports/browser.js';
import { HttpFetchError, type HttpRequest } from '../../ports/http.js';
import { decodeExchange, type ArchivedExchange, type RenderRequest } from '../../schemas/index.js';
import { readSlot } from '../../stages/shared/politeness/host-slot.js';
import { PACING_GUARD_MS } from '../../stages/shared/politeness/host-pacing.js';
import { createFakeContext, decodedOn, emitted, httpResponse, retried, stageInput, type FakeContext } from '../support/fake-context.js';

const HOST = 'app.example.com';
const PAGE_URL = `https://${HOST}/page`;
const ROBOTS = 'User-agent: *\nDisallow: /private/\n';

function renderRequest(over: Partial<RenderRequest> = {}): RenderRequest {
  return {
    v: 1,
    fetch_id: 'fid-1',
    url: PAGE_URL,
    host: HOST,
    domain: 'example.com',
    depth: 1,
    fetch_time: 1_700_000_000_000,
    fetch_status: 200,
    duration_ms: 40,
    content_type: 'text/html',
    charset: 'iso-8859-1',
    headers: { 'content-type': 'text/html; charset=iso-8859-1', etag: '"v1"' },
    body: new TextEncoder().encode('<!DOCTYPE html><div id="root"></div><script src="/app.js"></script>'),
    truncated: false,
    render_reason: '--render https://app.example.com/*',
    ...over,
  };
}

const req = (url: string, resourceType = 'script', over: Partial<BrowserRequest> = {}): BrowserRequest => ({ url, method: 'GET', resourceType, navigation: false, subframe: false, headers: { accept: '*/*', referer: PAGE_URL }, ...over });

/** A browser that makes the page's requests in order, one after the other, and returns `html`. */
class FakeBrowser implements Renderer {
  jobs: RenderJob[] = [];
  answers: Array<[BrowserRequest, BrowserAnswer]> = [];
  /** make the requests all at once, as a page's parser does, instead of one after the other */
  parallel = false;
  /** what happens before the browser has a page for the render (starting, waiting for a free page) */
  beforeStart = () => {};
  constructor(
    private readonly requests: BrowserRequest[],
    private readonly result: Partial<RenderResult> = {},
    private readonly failure?: RenderFailure,
  ) {}
  async render(job: RenderJob): Promise<RenderResult> {
    this.jobs.push(job);
    this.beforeStart();
    job.onStart?.();
    if (this.parallel) this.answers.push(...(await Promise.all(this.requests.map(async (r) => [r, await job.onRequest(r)] as [BrowserRequest, BrowserAnswer]))));
    else for (const r of this.requests) this.answers.push([r, await job.onRequest(r)]);
    if (this.failure) throw this.failure;
    return { html: '<html><body><h1>Rendered</h1><a href="/next">next</a></body></html>', settled: true, loaded: true, durationMs: 900, pending: 0, ...this.result };
  }
  async close() {}
}

/** The fake clock moves only when the session waits: a wait is the time passing. */
function contextFor(respond: (r: HttpRequest) => ReturnType<typeof httpResponse>, settings = {}) {
  const ctx = createFakeContext({ settings: { minDelayMs: 1000, renderTimeoutMs: 15_000, ...settings }, respond: (r) => respond(r) });
  const sleep = async (ms: number) => ctx.clock.advance(ms);
  return { ctx, sleep };
}

const okFor = (r: HttpRequest) => {
  const path = new URL(r.url).pathname;
  if (path === '/robots.txt') return httpResponse(200, { body: ROBOTS, headers: { 'content-type': 'text/plain' } });
  if (path.endsWith('.js')) return httpResponse(200, { body: 'console.log(1)', headers: { 'content-type': 'text/javascript', 'content-encoding': 'gzip' } });
  return httpResponse(200, { body: '{"ok":true}', headers: { 'content-type': 'application/json' } });
};

async function render(ctx: FakeContext, browser: Renderer, sleep: (ms: number) => Promise<void>, opts: { deliveryCount?: number; cache?: SubresourceCache; page?: RenderRequest } = {}) {
  const handle = createRenderHandler({ renderer: browser, sleep, ...(opts.cache ? { cache: opts.cache } : {}) });
  return handle(stageInput(opts.page ?? renderRequest(), { subject: 'crawl.render.0', deliveryCount: opts.deliveryCount ?? 1 }), ctx);
}

const exchangesOf = (out: Awaited<ReturnType<typeof render>>) => decodedOn(out, 'crawl.exchanges', decodeExchange);
const renderedOf = (out: Awaited<ReturnType<typeof render>>): ArchivedExchange => {
  const pages = decodedOn(out, 'crawl.fetched.rendered', decodeExchange);
  assert.equal(pages.length, 1);
  return pages[0]!;
};

describe('render stage: request policy', () => {
  for (const [what, r, blocked] of [
    ['a script', req('https://a.test/x.js'), null],
    ['a stylesheet', req('https://a.test/x.css', 'stylesheet'), null],
    ['XHR and fetch', req('https://a.test/api', 'xhr'), null],
    ['an image', req('https://a.test/x.png', 'image'), /^type: image/],
    ['a font', req('https://a.test/x.woff2', 'font'), /^type: font/],
    ['media', req('https://a.test/x.mp4', 'media'), /^type: media/],
    ['a beacon', req('https://a.test/b', 'ping', { method: 'POST' }), /^method: POST/],
    ['an event stream', req('https://a.test/events', 'eventsource'), /^type: eventsource/],
    ['a POST fetch', req('https://a.test/api', 'fetch', { method: 'POST' }), /^method: POST/],
    ['a navigation away', req('https://b.test/', 'document', { navigation: true }), /^navigation/],
    ['a frame', req('https://b.test/frame', 'document', { subframe: true }), /^frame/],
    ['another scheme', req('ftp://a.test/x.js'), /^scheme: ftp/],
  ] as const) {
    test(`${what}: ${blocked ? 'blocked' : 'made'}`, () => {
      const verdict = blockedByPolicy(r);
      if (blocked === null) assert.equal(verdict, null);
      else assert.match(verdict ?? '', blocked);
    });
  }
});

describe('render stage: handle', () => {
  test('the DOM goes on to extract marked rendered, as UTF-8, with the note; the made requests go to the archive', async () => {
    const { ctx, sleep } = contextFor(okFor);
    const browser = new FakeBrowser([req(`https://${HOST}/app.js`), req(`https://${HOST}/api/data`, 'fetch'), req(`https://${HOST}/hero.png`, 'image'), req(`https://${HOST}/private/track`, 'fetch')]);
    const out = await render(ctx, browser, sleep);
    const page = renderedOf(out);
    assert.equal(page.rendered, true);
    assert.equal(new TextDecoder().decode(page.body), '<html><body><h1>Rendered</h1><a href="/next">next</a></body></html>');
    assert.deepEqual([page.charset, page.headers['content-type'], page.headers.etag], ['utf-8', 'text/html; charset=utf-8', '"v1"']);
    assert.equal(page.render_note, 'rendered (--render https://app.example.com/*): settled after 900 ms; 2 requests made, 2 blocked (type 1, robots 1)');
    assert.equal(page.exchange?.kind, 'rendered');
    assert.equal(page.exchange?.capture_id, 'fid-1:rendered');
    assert.match(page.exchange!.refers_to_digest!, /^sha1:/);
    assert.ok(page.exchange!.render_log!.some((l) => /^blocked image .*hero\.png: type: image/.test(l)));
    assert.equal(emitted(out)[0]!.msgId, 'rendered:fid-1');
    // the document is not fetched again; robots.txt first, then the two allowed requests
    assert.deepEqual(ctx.http.requests.map((r) => new URL(r.url).pathname), ['/robots.txt', '/app.js', '/api/data']);
    assert.equal(ctx.http.requests[1]!.headers?.referer, PAGE_URL, "the page's referer goes along");
    assert.equal(ctx.http.requests[1]!.headers?.['user-agent'], undefined, "the browser's user agent does not: the client sends the crawler's");
    const answered = browser.answers.map(([r, a]) => `${r.resourceType}:${a.kind}`);
    assert.deepEqual(answered, ['script:response', 'fetch:response', 'image:blocked', 'fetch:blocked']);
    const [, jsAnswer] = browser.answers[0]!;
    assert.equal(jsAnswer.kind === 'response' && jsAnswer.headers['content-encoding'], 'gzip', 'headers pass as the client saw them (the adapter drops transfer headers)');
    const ex = exchangesOf(out);
    assert.deepEqual(ex.map((e) => [e.url, e.fetch_id, e.exchange?.kind]), [
      [`https://${HOST}/robots.txt`, ex[0]!.fetch_id, 'robots'],
      [`https://${HOST}/app.js`, 'fid-1', 'response'],
      [`https://${HOST}/api/data`, 'fid-1', 'response'],
    ]);
  });

  test("requests wait their host's turn: robots.txt of a new origin first, then the host's delay between any two requests", async () => {
    const at: Array<[string, number]> = [];
    const { ctx, sleep } = contextFor((r) => {
      at.push([r.url, ctx.clock.now()]);
      return okFor(r);
    });
    // the page's host had its robots.txt fetched by the gate, and was just fetched (the document)
    await ctx.kv.robots.put(`https://${HOST}`, new TextEncoder().encode(JSON.stringify({ kind: 'rules', body: ROBOTS, fetchedAt: ctx.clock.now(), status: 200, reason: 'fetched' })));
    await ctx.kv.hosts.put(HOST, new TextEncoder().encode(JSON.stringify({ host: HOST, next_allowed_at: ctx.clock.now() + 1000 })));
    const t0 = ctx.clock.now();
    const G = PACING_GUARD_MS;
    const browser = new FakeBrowser([req(`https://${HOST}/a.js`), req('https://cdn.example.net/lib.js'), req(`https://${HOST}/api`, 'xhr'), req('https://cdn.example.net/lib2.js')]);
    const out = await render(ctx, browser, sleep);
    const times = at.map(([u, t]) => `${new URL(u).host}${new URL(u).pathname} +${t - t0}`);
    assert.deepEqual(times, [
      `${HOST}/a.js +1000`,
      'cdn.example.net/robots.txt +1000',
      // each delay runs from a little after the answer before it (robots.txt's too)
      `cdn.example.net/lib.js +${2000 + G}`,
      `${HOST}/api +${2000 + G}`,
      `cdn.example.net/lib2.js +${3000 + 2 * G}`,
    ]);
    // robots.txt of the new origin is archived with the page's requests
    assert.ok(exchangesOf(out).some((e) => e.exchange?.kind === 'robots' && e.url === 'https://cdn.example.net/robots.txt'));
    const slot = await readSlot(ctx.kv.hosts, HOST);
    assert.equal(slot!.lease_id, null, 'the host is released');
    assert.equal(slot!.next_allowed_at, t0 + 2000 + G + G + 1000, 'its next request is due a delay after the last one ended');
  });

  test('a host busy past the deadline and a refused address are blocked, with their reasons; nothing else is asked for them', async () => {
    const { ctx, sleep } = contextFor((r) => {
      if (new URL(r.url).hostname === '127.0.0.1') throw new HttpFetchError('refused', `fetching ${r.url}: connect: 127.0.0.1 is a loopback address (SSRF guard)`);
      return okFor(r);
    });
    // another request holds the slow host for the whole render
    await ctx.kv.hosts.put('slow.example.org', new TextEncoder().encode(JSON.stringify({ host: 'slow.example.org', lease_id: 'fetch:x', lease_until: ctx.clock.now() + 60_000 })));
    const browser = new FakeBrowser([req('http://127.0.0.1:9999/steal', 'fetch'), req('http://127.0.0.1:9999/again', 'fetch'), req('https://slow.example.org/x.js')]);
    const out = await render(ctx, browser, sleep);
    const [steal, again, slow] = browser.answers.map(([, a]) => a);
    assert.match(steal!.kind === 'blocked' ? steal!.reason : '', /^ssrf: http:\/\/127\.0\.0\.1:9999 cannot be reached in this crawl \(refused: .*SSRF guard/);
    assert.match(again!.kind === 'blocked' ? again!.reason : '', /cannot be reached in this crawl/);
    // its robots.txt would need the slot too: the render waits for it until its deadline
    assert.equal(slow!.kind === 'blocked' ? slow!.reason : '', 'robots: https://slow.example.org/robots.txt not known before the render timeout');
    assert.deepEqual(
      ctx.http.requests.map((r) => r.url),
      ['http://127.0.0.1:9999/robots.txt'],
      'the refused robots.txt ends the address: its page request is never tried, the busy host never asked',
    );
    assert.match(renderedOf(out).render_note!, /; 0 requests made, 3 blocked \(ssrf 2, robots 1\)$/);
  });

  test("the requests' deadline runs from when the browser starts the page, not from when the render was asked for", async () => {
    const { ctx, sleep } = contextFor(okFor, { renderTimeoutMs: 4000 });
    const browser = new FakeBrowser([req(`https://${HOST}/a.js`)]);
    // starting the browser took most of the render timeout: the browser still gives the page 4 s
    browser.beforeStart = () => ctx.clock.advance(3500);
    const out = await render(ctx, browser, sleep);
    // robots.txt at +3500, the script a delay later: past 4 s from the ask, within the browser's 4 s
    assert.equal(browser.answers[0]![1].kind, 'response', 'the script is made, not blocked as past the deadline');
    assert.match(renderedOf(out).render_note!, /; 1 request made$/);
  });

  test('requests the page makes at once are made one at a time, each archived under a capture of its own', async () => {
    const { ctx, sleep } = contextFor(okFor);
    const browser = new FakeBrowser([req(`https://${HOST}/a.js`), req(`https://${HOST}/b.css`, 'stylesheet'), req(`https://${HOST}/private/x`, 'fetch'), req(`https://${HOST}/api`, 'fetch')]);
    browser.parallel = true;
    const out = await render(ctx, browser, sleep);
    const ids = exchangesOf(out).filter((e) => e.exchange?.kind === 'response').map((e) => e.exchange!.capture_id);
    assert.equal(ids.length, 3);
    assert.equal(new Set(ids).size, 3, `distinct capture ids: ${ids.join(', ')}`);
    assert.equal(new Set(emitted(out).map((m) => m.msgId)).size, emitted(out).length, 'distinct msgIds: none is taken for a duplicate');
  });

  test("scripts and stylesheets are kept for the process's next renders; XHR answers are not", async () => {
    const { ctx, sleep } = contextFor(okFor);
    const cache = new SubresourceCache();
    const requests = [req(`https://${HOST}/app.js`), req(`https://${HOST}/api`, 'xhr')];
    await render(ctx, new FakeBrowser(requests), sleep, { cache });
    const second = await render(ctx, new FakeBrowser(requests), sleep, { cache, page: renderRequest({ fetch_id: 'fid-2', url: `https://${HOST}/other` }) });
    assert.deepEqual(ctx.http.requests.map((r) => new URL(r.url).pathname), ['/robots.txt', '/app.js', '/api', '/api']);
    assert.match(renderedOf(second).render_note!, /1 request made, 1 from cache/);
    assert.equal(exchangesOf(second).length, 1, 'a cached script is not archived again');
  });

  test("a crawl job's page keeps its job fields, rendered or not; the page's requests are archived as the job's", async () => {
    const { ctx, sleep } = contextFor(okFor);
    const revisit = { interval_ms: 3_600_000, digest: 'sha1:OLD', simhash: '0123456789abcdef', fetched_at: 1_699_990_000_000, due_at: 1_700_000_000_000 };
    const jobFields = { job: 'job-7', revisit, hint_interval_ms: 86_400_000, validators: { etag: '"v1"', last_modified: null } };
    const fieldsOf = (p: ArchivedExchange) => ({ job: p.job, revisit: p.revisit, hint_interval_ms: p.hint_interval_ms, validators: p.validators });
    const out = await render(ctx, new FakeBrowser([req(`https://${HOST}/app.js`)]), sleep, { page: renderRequest(jobFields) });
    assert.deepEqual(fieldsOf(renderedOf(out)), jobFields);
    const ex = exchangesOf(out).filter((e) => e.exchange?.kind === 'response');
    assert.deepEqual(ex.map((e) => e.job), ['job-7']);
    const crash = new RenderFailure('browser_crashed', 'the browser died', true);
    const failed = await render(ctx, new FakeBrowser([], {}, crash), sleep, { page: renderRequest({ ...jobFields, fetch_id: 'fid-2' }), deliveryCount: MAX_RENDER_ATTEMPTS });
    assert.equal(renderedOf(failed).rendered, false);
    assert.deepEqual(fieldsOf(renderedOf(failed)), jobFields);
  });

  test('a page that did not settle is stored as it was at the timeout, and the note says so', async () => {
    const { ctx, sleep } = contextFor(okFor);
    const out = await render(ctx, new FakeBrowser([], { settled: false, durationMs: 15_002, pending: 1 }), sleep);
    assert.equal(renderedOf(out).render_note, 'rendered (--render https://app.example.com/*): stopped at the render timeout (15000 ms) before the page settled, 1 request still open; 0 requests made');
  });

  test(`a browser crash is retried up to ${MAX_RENDER_ATTEMPTS} times, then the page goes on as fetched with the reason; an unresponsive page at once`, async () => {
    const { ctx, sleep } = contextFor(okFor);
    const crash = new RenderFailure('browser_crashed', 'the browser died while rendering x', true);
    const r = retried(await render(ctx, new FakeBrowser([], {}, crash), sleep, { deliveryCount: 1 }));
    assert.match(r.reason, /browser_crashed: the browser died .* \(1 of 3 attempts\)/);
    const last = await render(ctx, new FakeBrowser([req(`https://${HOST}/app.js`)], {}, crash), sleep, { deliveryCount: MAX_RENDER_ATTEMPTS });
    const page = renderedOf(last);
    assert.equal(page.rendered, false);
    assert.equal(page.exchange, undefined, 'nothing for the archive to add: the response is archived already');
    assert.equal(new TextDecoder().decode(page.body), new TextDecoder().decode(renderRequest().body), 'the page as fetched');
    assert.match(page.render_note!, /^not rendered \(--render .*\): the browser died while rendering x \(3 of 3 attempts\)$/);
    assert.deepEqual(exchangesOf(last).map((e) => new URL(e.url).pathname), ['/robots.txt', '/app.js'], 'requests the failed render made are archived');
    const hang = await render(ctx, new FakeBrowser([], {}, new RenderFailure('unresponsive', 'main thread did not answer', false)), sleep, { deliveryCount: 1 });
    assert.match(renderedOf(hang).render_note!, /main thread did not answer \(not retried\)/);
  });

  test('on a server that takes 1 MiB messages: the browser gets a body stored beside its message whole, and a large DOM or response is stored beside its own', async () => {
    const MIB = 1024 * 1024;
    const script = new Uint8Array(900 * 1024).fill(0x3b); // ';'
    const ctx = createFakeContext({
      maxPayloadBytes: MIB,
      settings: { minDelayMs: 1000, renderTimeoutMs: 15_000 },
      respond: (r) => (new URL(r.url).pathname === '/big.js' ? httpResponse(200, { body: script, headers: { 'content-type': 'text/javascript' } }) : okFor(r)),
    });
    const sleep = async (ms: number) => ctx.clock.advance(ms);
    const fetchedHtml = new TextEncoder().encode(`<!DOCTYPE html><div id="root"></div><script src="/big.js"></script><!-- ${'x'.repeat(2 * MIB)} -->`);
    const ref = await ctx.bodies.put('crawl.bodies.0', fetchedHtml);
    const dom = `<html><body><p>${'rendered words '.repeat(100_000)}</p></body></html>`;
    const browser = new FakeBrowser([req(`https://${HOST}/big.js`)], { html: dom });
    const out = await render(ctx, browser, sleep, { page: renderRequest({ body: new Uint8Array(0), body_ref: ref }) });
    assert.deepEqual(Buffer.from(browser.jobs[0]!.document.body), Buffer.from(fetchedHtml), 'the page as fetched, whole');
    for (const m of emitted(out)) assert.ok(m.data.length <= MIB, `${m.subject}: ${m.data.length} bytes`);
    const page = renderedOf(out);
    assert.equal(page.body.length, 0);
    assert.notDeepEqual(page.body_ref, ref, "the DOM's own, not the fetched body's");
    assert.equal(new TextDecoder().decode(await ctx.bodies.get(page.body_ref!)), dom);
    assert.equal(page.truncated, false);
    const js = exchangesOf(out).find((e) => e.url.endsWith('/big.js'))!;
    assert.deepEqual(new Uint8Array(await ctx.bodies.get(js.body_ref!)), script);
  });
});
