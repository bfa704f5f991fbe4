import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { createExtractStage } from '../../stages/extract/index.js';
import { encodeFetched, SchemaError, type FetchedPage } from '../../schemas/index.js';
import { readValidators } from '../../stages/shared/conditional-get.js';
import type { Disposition, ConsumerStage } from '../../pipeline/stage.js';
import { FIXTURE_DIR } from '../../scripts/extraction-eval.js';
import { renderPage } from '../../testweb/render-page.js';
import { buildSiteModel } from '../../testweb/site-model.js';
import type { HtmlResource } from '../../testweb/model-types.js';
import { createFakeContext, MemoryStreams, type FakeContextOptions } from '../support/fake-context.js';

function fetched(url: string, html: string, over: Partial<FetchedPage> = {}): FetchedPage {
  const host = new URL(url).hostname;
  return {
    v: 1,
    fetch_id: `fid-${url}`,
    url,
    host,
    domain: host,
    depth: 1,
    fetch_time: 1_700_000_000_000,
    fetch_status: 200,
    duration_ms: 50,
    content_type: 'text/html',
    charset: null,
    headers: { 'content-type': 'text/html', etag: `"${url.length}"` },
    body: new TextEncoder().encode(html),
    truncated: false,
    ...over,
  };
}

/** One message through a stage as the runner does it: decode, then handle; a SchemaError from either is the runner's dead letter. */
async function runLikeRunner(def: ConsumerStage<any>, data: Uint8Array, ctxOptions: FakeContextOptions) {
  const ctx = createFakeContext(ctxOptions);
  let disposition: Disposition | { kind: 'schema-error'; reason: string };
  try {
    disposition = await def.handle({ subject: 'crawl.fetched.0', message: def.decode('crawl.fetched.0', data), deliveryCount: 1, streamSeq: 1 }, ctx);
  } catch (err) {
    if (!(err instanceof SchemaError)) throw err;
    disposition = { kind: 'schema-error', reason: err.message };
  }
  if (disposition.kind === 'emit') await disposition.afterPublish?.([]);
  return { disposition, ctx };
}

/** What a disposition does, as plain data: the bytes it would publish, the counts, the validators it keeps. */
async function effects(def: ConsumerStage<any>, data: Uint8Array, url: string, ctxOptions: FakeContextOptions = {}) {
  const { disposition, ctx } = await runLikeRunner(def, data, ctxOptions);
  const messages = disposition.kind === 'emit' ? disposition.messages.map((m) => ({ subject: m.subject, msgId: m.msgId, hex: Buffer.from(m.data).toString('hex') })) : [];
  const counts = ['pages', 'json_ld'].flatMap((what) => ['ok', 'noindex', 'invalid'].map((o) => ctx.metrics.total('extract', what, o)));
  return { kind: disposition.kind, reason: 'reason' in disposition ? disposition.reason : undefined, messages, counts, validators: await readValidators(ctx.kv.validators, url) };
}

async function samplePages(): Promise<FetchedPage[]> {
  const pages: FetchedPage[] = [];
  for (const file of (await fsp.readdir(FIXTURE_DIR)).filter((f) => f.endsWith('.html')).sort()) {
    pages.push(fetched(`https://fixture.test/${file}`, await fsp.readFile(path.join(FIXTURE_DIR, file), 'utf8')));
  }
  const model = buildSiteModel({ hosts: 3, seed: 1 });
  for (const host of model.hosts.filter((h) => h.group === 'site')) {
    for (const page of [...host.resources.values()].filter((r): r is HtmlResource => r.kind === 'html').slice(0, 4)) {
      pages.push(fetched(`http://${host.name}${page.path}`, renderPage(host.name, page)));
    }
  }
  const robots = (content: string) => `<html><head><meta name="robots" content="${content}"><title>R</title></head><body><p>Text.</p><a href="/x">x</a></body></html>`;
  pages.push(fetched('https://edge.test/noindex', robots('noindex')), fetched('https://edge.test/nofollow', robots('nofollow')));
  pages.push(fetched('https://edge.test/deepest', robots('all'), { depth: 5 }));
  pages.push(fetched('https://edge.test/latin1', '', { body: new Uint8Array(Buffer.from('<p>caf\xe9</p>', 'latin1')), charset: 'iso-8859-1', headers: {} }));
  return pages;
}

describe('extract in a worker pool', () => {
  const inline = createExtractStage({ threads: 0 });
  const pooled = createExtractStage({ threads: 2 });
  const pooledNoTitles = createExtractStage({ threads: 1, titles: false });
  let pages: FetchedPage[] = [];

  before(async () => {
    pages = await samplePages();
  });
  after(async () => {
    const ctx = createFakeContext();
    await pooled.close?.(ctx);
    await pooledNoTitles.close?.(ctx);
  });

  test('the pooled stage passes the message bytes through decode and needs more in flight', () => {
    const data = encodeFetched(pages[0] ?? fetched('https://a.test/', '<p>x</p>'));
    assert.equal(pooled.decode('crawl.fetched.0', data), data);
    assert.ok(pooled.defaultConcurrency >= 2 * 2 + 4);
    assert.equal(inline.defaultConcurrency, 8);
  });

  test('publishes the same bytes, counts and validators as inline extraction', async () => {
    assert.ok(pages.length > 20);
    // all at once, so jobs queue and spread over both workers
    const all = await Promise.all(pages.map(async (p) => {
      const data = encodeFetched(p);
      return { url: p.url, inline: await effects(inline, data, p.url), pooled: await effects(pooled, data, p.url) };
    }));
    for (const r of all) {
      assert.equal(r.pooled.kind, 'emit', r.url);
      assert.deepEqual(r.pooled, r.inline, r.url);
    }
    assert.ok(all.some((r) => r.inline.messages.length === 2) && all.some((r) => r.inline.messages.length === 1), 'pages with and without links to follow');
    assert.ok(all.some((r) => r.inline.validators !== null), 'some pages leave validators');
  });

  test('the same with a small message size (budgets cut texts and links) and with titles off', async () => {
    for (const p of pages.slice(0, 8)) {
      const data = encodeFetched(p);
      assert.deepEqual(await effects(pooled, data, p.url, { maxPayloadBytes: 6000, settings: { maxDepth: 1, partitions: 3 } }), await effects(inline, data, p.url, { maxPayloadBytes: 6000, settings: { maxDepth: 1, partitions: 3 } }), p.url);
      assert.deepEqual(await effects(pooledNoTitles, data, p.url), await effects(createExtractStage({ titles: false }), data, p.url), p.url);
    }
  });

  test('an undecodable message is a SchemaError with the same reason (the runner dead-letters it)', async () => {
    for (const data of [new Uint8Array([0xc1, 0xff, 0x00]), new Uint8Array(Buffer.from('82a17601a3757266a378', 'hex'))]) {
      const got = await effects(pooled, data, 'x');
      assert.equal(got.kind, 'schema-error');
      assert.deepEqual(got, await effects(inline, data, 'x'));
    }
  });

  test('a page whose body is stored beside its message: the same messages as with the body inline, pooled or not', async () => {
    for (const p of pages.slice(0, 6)) {
      const streams = new MemoryStreams();
      const beside = encodeFetched({ ...p, body: new Uint8Array(0), body_ref: await streams.bodyStore(8 * 1024 * 1024).put('crawl.bodies.0', p.body) });
      const asInline = await effects(inline, encodeFetched(p), p.url);
      assert.deepEqual(await effects(inline, beside, p.url, { streams }), asInline, p.url);
      assert.deepEqual(await effects(pooled, beside, p.url, { streams }), asInline, p.url);
    }
  });

  test('a body no longer stored (retention removed it) is a SchemaError with the same reason, pooled or not', async () => {
    const p = pages[0]!;
    const streams = new MemoryStreams();
    const beside = encodeFetched({ ...p, body: new Uint8Array(0), body_ref: await streams.bodyStore(8 * 1024 * 1024).put('crawl.bodies.0', p.body) });
    streams.remove((m) => m.subject.startsWith('crawl.bodies.'));
    const got = await effects(pooled, beside, p.url, { streams });
    assert.equal(got.kind, 'schema-error');
    assert.match(got.reason!, /reading the body of .*no longer in CRAWL_BODIES/);
    assert.deepEqual(got, await effects(inline, beside, p.url, { streams }));
  });

  test('the message bytes given to the pool stay intact (a dead letter carries them)', async () => {
    const data = encodeFetched(pages[0]!);
    const before = Buffer.from(data).toString('hex');
    await effects(pooled, data, pages[0]!.url);
    assert.equal(Buffer.from(data).toString('hex'), before);
  });
});
