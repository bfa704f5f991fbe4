/**
 * Which pages go to the render stage (extract decides: a --render pattern, or with
 * --render-auto an application shell), what comes back is extracted like any page, and how
 * the archive keeps a rendered page's DOM.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createExtractHandler } from '../../stages/extract/handle.js';
import { appShellReason, SHELL_MAX_WORDS } from '../../stages/extract/app-shell.js';
import { extractHtml } from '../../stages/extract/extract-html.js';
import { renderPatternReason } from '../../stages/extract/render-route.js';
import { decodeDiscoveredLinks, decodeExtracted, decodeRenderRequest, type ArchivedExchange, type FetchedPage } from '../../schemas/index.js';
import { renderedRecords } from '../../stages/archive/rendered-records.js';
import { createArchiveHandler } from '../../stages/archive/handle.js';
import { captureRow } from '../../stages/archive/capture-row.js';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { readWarcBytes } from '../support/warc-reader.js';
import { createFakeContext, emitted, onlyOn, stageInput, subjectsOf } from '../support/fake-context.js';

const SHELL = '<!DOCTYPE html><html><head><title>App</title><script src="/app.js"></script></head><body><div id="root"></div><noscript>You need to enable JavaScript to run this app, which has a lot to say about it.</noscript></body></html>';
const ARTICLE = `<!DOCTYPE html><html><head><title>News</title><script src="/ads.js"></script></head><body><div id="fb-root"></div><article><h1>Seals</h1><p>${'The seals came back to the harbour this spring. '.repeat(12)}</p></article></body></html>`;

function page(html: string, over: Partial<FetchedPage> = {}): FetchedPage {
  return {
    v: 1,
    fetch_id: 'fid-1',
    url: 'http://app.render.test/p/1',
    host: 'app.render.test',
    domain: 'render.test',
    depth: 1,
    fetch_time: 1_700_000_000_000,
    fetch_status: 200,
    duration_ms: 20,
    content_type: 'text/html',
    charset: 'utf-8',
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: new TextEncoder().encode(html),
    truncated: false,
    ...over,
  };
}

const signals = (html: string) => {
  const doc = extractHtml(html, 'http://x.test/');
  return { text: doc.text, ...doc.shell };
};

describe('application shells (--render-auto)', () => {
  for (const [what, html, shell] of [
    ['an empty root div and a script', SHELL, true],
    ['a custom element and a module script', '<html><body><app-root></app-root><script type="module" src="/main.js"></script></body></html>', true],
    ['"Loading…" in the mount and a script', '<html><body><div id="app"> </div><p>Loading…</p><script>boot()</script></body></html>', true],
    ['an article with an empty fb-root and scripts', ARTICLE, false],
    ['no script', '<html><body><div id="root"></div></body></html>', false],
    ['only JSON data scripts', '<html><body><div id="root"></div><script type="application/json">{}</script><script type="application/ld+json">{}</script></body></html>', false],
    ['no empty element: the server rendered into the root', '<html><body><div id="root"><p>Hi</p></div><script src="/app.js"></script></body></html>', false],
    ['an empty hidden element only', '<html><body><div id="x" hidden></div><script src="/a.js"></script></body></html>', false],
  ] as const) {
    test(`${what}: ${shell ? 'a shell' : 'not a shell'}`, () => {
      const reason = appShellReason(signals(html));
      if (shell) assert.match(reason ?? '', /^application shell: \d+ words of text, \d+ empty mount elements?, \d+ scripts?$/);
      else assert.equal(reason, null);
    });
  }

  test(`the word bound: ${SHELL_MAX_WORDS - 1} words is little text, ${SHELL_MAX_WORDS} is not`, () => {
    const withWords = (n: number) => `<html><body><div id="root"></div><p>${'word '.repeat(n)}</p><script src="/a.js"></script></body></html>`;
    assert.notEqual(appShellReason(signals(withWords(SHELL_MAX_WORDS - 1))), null);
    assert.equal(appShellReason(signals(withWords(SHELL_MAX_WORDS))), null);
  });
});

describe('extract routes pages to the render stage', () => {
  // a page back from the render stage comes on its own subject
  const subjectOf = (p: FetchedPage) => (p.rendered === undefined ? 'crawl.fetched.0' : 'crawl.fetched.rendered.0');
  const extract = (p: FetchedPage, settings: Record<string, unknown>) => createExtractHandler()(stageInput(p, { subject: subjectOf(p) }), createFakeContext({ settings }));

  test('a --render pattern: the page goes to render whole, with the reason; nothing is extracted or followed yet', async () => {
    const p = page(SHELL);
    const out = await extract(p, { render: ['http://app.render.test/*'] });
    assert.deepEqual(subjectsOf(out).map((s) => s.replace(/\.\d+$/, '')), ['crawl.render']);
    assert.equal(emitted(out)[0]!.msgId, 'render:fid-1');
    const r = onlyOn(out, 'crawl.render', decodeRenderRequest);
    assert.equal(r.render_reason, '--render http://app.render.test/*');
    assert.deepEqual(Buffer.from(r.body), Buffer.from(p.body));
    assert.equal(out.kind === 'emit' && out.afterPublish, undefined, 'validators wait for the rendered version');
  });

  test('a shell whose body is stored beside its message goes to render referring to it, not carrying it (--render-auto decides on the whole body)', async () => {
    const ctx = createFakeContext({ settings: { renderAuto: true } });
    const ref = await ctx.bodies.put('crawl.bodies.0', new TextEncoder().encode(SHELL));
    const out = await createExtractHandler()(stageInput(page('', { body: new Uint8Array(0), body_ref: ref }), { subject: 'crawl.fetched.0' }), ctx);
    const r = onlyOn(out, 'crawl.render', decodeRenderRequest);
    assert.match(r.render_reason, /^application shell: /);
    assert.equal(r.body.length, 0);
    assert.deepEqual(r.body_ref, ref);
  });

  test('--render-auto sends shells and keeps articles; without it, a shell is extracted as it is', async () => {
    const shell = await extract(page(SHELL), { renderAuto: true });
    assert.match(onlyOn(shell, 'crawl.render', decodeRenderRequest).render_reason, /^application shell: /);
    const article = await extract(page(ARTICLE), { renderAuto: true });
    assert.match(onlyOn(article, 'crawl.extracted', decodeExtracted).text, /seals came back/);
    const off = await extract(page(SHELL), {});
    assert.equal(onlyOn(off, 'crawl.extracted', decodeExtracted).text, '');
  });

  test('a page back from the render stage is extracted, never sent again; rendered and its note go on', async () => {
    const back = page('<html><body><h1>Built</h1><p>Now with text.</p><a href="/p/2">two</a></body></html>', { rendered: true, render_note: 'rendered (--render x): settled after 300 ms' });
    const out = await extract(back, { render: ['http://app.render.test/*'], renderAuto: true });
    const e = onlyOn(out, 'crawl.extracted', decodeExtracted);
    assert.equal(e.rendered, true);
    assert.equal(e.render_note, 'rendered (--render x): settled after 300 ms');
    assert.deepEqual(e.links.map((l) => l.url), ['http://app.render.test/p/2']);
    const failed = await extract(page(SHELL, { rendered: false, render_note: 'not rendered: crashed' }), { render: ['http://app.render.test/*'] });
    assert.equal(onlyOn(failed, 'crawl.extracted', decodeExtracted).rendered, false);
  });

  test("a crawl job's page keeps its job fields on the way to render and back: the rendered page is extracted as the job's, its links the job's", async () => {
    const revisit = { interval_ms: 3_600_000, digest: 'sha1:OLD', simhash: '0123456789abcdef', fetched_at: 1_699_990_000_000, due_at: 1_700_000_000_000, etag: '"v0"' };
    const jobFields = { job: 'job-7', revisit, hint_interval_ms: 86_400_000, validators: { etag: '"v1"', last_modified: null }, last_modified: 1_699_000_000_000 };
    const toRender = onlyOn(await extract(page(SHELL, jobFields), { render: ['http://app.render.test/*'] }), 'crawl.render', decodeRenderRequest);
    assert.deepEqual(
      { job: toRender.job, revisit: toRender.revisit, hint_interval_ms: toRender.hint_interval_ms, validators: toRender.validators, last_modified: toRender.last_modified },
      jobFields,
    );
    const back = page('<html><body><h1>Built</h1><a href="/p/2">two</a></body></html>', { ...jobFields, rendered: true, render_note: 'rendered (--render x): settled after 300 ms' });
    const out = await extract(back, { render: ['http://app.render.test/*'] });
    const e = onlyOn(out, 'crawl.extracted', decodeExtracted);
    assert.deepEqual([e.job, e.revisit, e.rendered], ['job-7', revisit, true]);
    assert.equal(onlyOn(out, 'crawl.links', decodeDiscoveredLinks).job, 'job-7');
  });

  test('patterns are globs or /regex/ like --include', () => {
    assert.equal(renderPatternReason('https://a.test/app/x', ['/app/*']), '--render /app/*');
    assert.equal(renderPatternReason('https://a.test/docs/x', ['/app/*', '/\\/docs\\//']), '--render /\\/docs\\//');
    assert.equal(renderPatternReason('https://a.test/other', ['/app/*']), null);
  });
});

describe('archive: a rendered page', () => {
  const rendered = (over: Partial<ArchivedExchange> = {}): ArchivedExchange => ({
    ...page('<html><body><h1>Built</h1></body></html>'),
    rendered: true,
    render_note: 'rendered (--render x): settled after 300 ms; 2 requests made, 1 blocked (type 1)',
    exchange: {
      kind: 'rendered',
      capture_id: 'fid-1:rendered',
      method: 'GET',
      request_headers: [],
      status_text: '',
      remote_ip: null,
      failure: null,
      redirect: null,
      robots: null,
      refers_to_date: 1_700_000_000_000,
      attempt: 0,
      refers_to_digest: 'sha1:ORIGINAL',
      render_log: ['200 script http://app.render.test/static/app.js', 'blocked image http://app.render.test/static/hero.png: type: image'],
    },
    ...over,
  });

  test('a conversion record with the DOM, pointing at the response it came from, and a metadata record of its requests', async () => {
    const e = rendered();
    const built = await renderedRecords(e, '<urn:uuid:info>', '<urn:uuid:response>');
    const records = await readWarcBytes(Buffer.concat(built.members));
    assert.deepEqual(records.map((r) => r.type), ['conversion', 'metadata']);
    const [conv, meta] = records;
    assert.equal(conv!.uri, 'http://app.render.test/p/1');
    assert.equal(conv!.headers.get('warc-refers-to'), '<urn:uuid:response>');
    assert.equal(conv!.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(Buffer.from(conv!.payload).toString(), '<html><body><h1>Built</h1></body></html>');
    assert.equal(meta!.headers.get('warc-concurrent-to'), conv!.id);
    const fields = Buffer.from(meta!.payload).toString();
    assert.match(fields, /renderedFrom: sha1:ORIGINAL\r\n/);
    assert.match(fields, /request: blocked image http:\/\/app\.render\.test\/static\/hero\.png: type: image\r\n/);
    const row = captureRow(e, built, { filename: 'warc/x.warc.gz', offset: 0, length: 10 }, 'c1');
    assert.deepEqual([row.warc_type, row.subset, row.capture_id, row.fetch_id, row.content_mime_type], ['conversion', 'rendered', 'fid-1:rendered', 'fid-1', 'text/html']);
  });

  test('the handler finds the response record by its payload digest; a page that could not be rendered adds nothing', async () => {
    const added: Array<{ refers: string | undefined }> = [];
    const sink = {
      add: async (build: (id: string) => Promise<{ members: Buffer[] }>) => {
        const b = await build('<urn:uuid:info>');
        const [conv] = await readWarcBytes(Buffer.concat(b.members));
        added.push({ refers: conv!.headers.get('warc-refers-to') });
        return b;
      },
    };
    const digests = new MemoryKvStore();
    await digests.put('sha1:ORIGINAL', new TextEncoder().encode(JSON.stringify({ url: 'u', date: 1, record_id: '<urn:uuid:first>', capture_id: 'fid-1:0' })));
    const ctx = createFakeContext({ kv: { digests } });
    const handle = createArchiveHandler(sink as never);
    await handle(stageInput(rendered(), { subject: 'crawl.fetched.rendered.0' }), ctx);
    await handle(stageInput({ ...page('<p>as fetched</p>'), rendered: false, render_note: 'not rendered: x' }, { subject: 'crawl.fetched.rendered.0' }), ctx);
    assert.deepEqual(added, [{ refers: '<urn:uuid:first>' }]);
  });
});
