import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createExtractHandler } from '../../stages/extract/handle.js';
import { readValidators } from '../../stages/shared/conditional-get.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';
import { partitionOf } from '../../pipeline/partition.js';
import { decodeDiscoveredLinks, decodeExtracted, type FetchedPage } from '../../schemas/index.js';
import { simhashAndWords, simhashToHex } from '../../stages/shared/content-identity/simhash.js';
import { encodeMessage } from '../../schemas/codec.js';
import { pageRows } from '../../stages/persist/rows.js';
import { createFakeContext, decodedOn, emitted, onlyOn, stageInput, subjectsOf, type FakeContext, type FakeContextOptions } from '../support/fake-context.js';

const HOST = 'www.example.com';

function page(html: string | Uint8Array, over: Partial<FetchedPage> = {}): FetchedPage {
  return {
    v: 1,
    fetch_id: 'fid-1',
    url: `https://${HOST}/dir/page.html`,
    host: HOST,
    domain: 'example.com',
    depth: 1,
    fetch_time: 1_700_000_000_000,
    fetch_status: 200,
    duration_ms: 120,
    content_type: 'text/html',
    charset: 'utf-8',
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: typeof html === 'string' ? new TextEncoder().encode(html) : html,
    truncated: false,
    ...over,
  };
}

const doc = (head: string, body: string) => `<!DOCTYPE html><html lang="en-US"><head>${head}</head><body>${body}</body></html>`;

const BASIC = doc(
  '<title> Hello   World </title><meta name="description" content="A page."><link rel="canonical" href="/canon">',
  '<h1>Heading</h1><p>First para.</p><script>var x = 1;</script><a href="other.html">Other page</a> <a href="https://ext.example.org/x" rel="nofollow">Ext</a>',
);

const extract = (ctx: FakeContext, p: FetchedPage, opts?: { titles: boolean }) => createExtractHandler(opts)(stageInput(p, { subject: 'crawl.fetched.0' }), ctx);

function ctxWith(settings: FakeContextOptions['settings'] = {}) {
  return createFakeContext({ settings });
}

describe('extract', () => {
  test('html → extracted page with title, text, links and metadata', async () => {
    const ctx = ctxWith();
    const p = page(BASIC);
    const out = await extract(ctx, p);
    const P = partitionOf(HOST, ctx.settings.partitions);
    assert.deepEqual(subjectsOf(out), [`crawl.extracted.${P}`, `crawl.links.${P}`]);
    assert.equal(emitted(out)[0]!.msgId, 'extracted:fid-1');
    assert.equal(emitted(out)[1]!.msgId, 'links:fid-1');
    const e = onlyOn(out, 'crawl.extracted', decodeExtracted);
    assert.equal(e.title, 'Hello World');
    assert.match(e.text, /Heading/);
    assert.match(e.text, /First para\./);
    assert.doesNotMatch(e.text, /var x/, 'script content is not text');
    const fingerprint = simhashAndWords(e.text);
    assert.deepEqual([e.simhash, e.text_words], [simhashToHex(fingerprint.hash), fingerprint.words], 'the main text\'s fingerprint, for the simhash stage');
    assert.equal(e.description, 'A page.');
    assert.equal(e.language, 'en-us');
    assert.equal(e.canonical_url, `https://${HOST}/canon`);
    assert.equal(e.noindex, false);
    assert.equal(e.nofollow, false);
    assert.deepEqual(e.links, [
      { url: `https://${HOST}/dir/other.html`, anchor: 'Other page', rel: '', source: 'a' },
      { url: 'https://ext.example.org/x', anchor: 'Ext', rel: 'nofollow', source: 'a' },
    ]);
    // carried over from the fetched page; no body or headers
    assert.equal(e.fetch_id, p.fetch_id);
    assert.equal(e.url, p.url);
    assert.equal(e.depth, 1);
    assert.equal(e.fetch_time, p.fetch_time);
    assert.equal(e.content_length, p.body.length);
    assert.equal(e.content_digest, contentDigest(p.body));
    assert.equal(e.charset, 'utf-8');
    assert.equal((e as Record<string, unknown>)['body'], undefined);
    assert.equal((e as Record<string, unknown>)['headers'], undefined);

    const l = onlyOn(out, 'crawl.links', decodeDiscoveredLinks);
    assert.deepEqual(l, {
      v: 1,
      source_url: p.url,
      depth: 2,
      via: 'link',
      links: [
        { url: `https://${HOST}/dir/other.html`, anchor: 'Other page', rel: '' },
        { url: 'https://ext.example.org/x', anchor: 'Ext', rel: 'nofollow' },
      ],
    });
  });

  test('article fields: author, published_at and site_name from JSON-LD and meta tags; text_source says where text came from', async () => {
    const head =
      '<title>Seals return | Coast News</title><meta property="og:site_name" content="Coast News">' +
      '<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Seals return",' +
      '"datePublished":"2019-11-19T10:02:00-05:00","author":[{"@type":"Person","name":"Ann Berg"},{"@type":"Person","name":"Tom Ruiz"}]}</script>';
    const body = '<article><h1>Seals return</h1><p class="byline">By Ann Berg and Tom Ruiz</p><p>The harbour seals are back in the bay, and more of them than in any year since counting began.</p></article>';
    const e = onlyOn(await extract(ctxWith(), page(doc(head, body))), 'crawl.extracted', decodeExtracted);
    assert.equal(e.author, 'Ann Berg, Tom Ruiz');
    assert.equal(e.published_at, Date.UTC(2019, 10, 19, 15, 2));
    assert.equal(e.site_name, 'Coast News');
    assert.equal(e.text_source, 'main');
    // the headline is the title and the byline the author: neither is main text
    assert.equal(e.text, 'The harbour seals are back in the bay, and more of them than in any year since counting began.');
    const row = pageRows({ ...e, simhash: '0', near_duplicate_of: null }, 'c').pages[0]!;
    assert.deepEqual([row.author, row.published_at, row.site_name, row.text_source], [e.author, e.published_at, e.site_name, 'main']);

    // without metadata: the byline element and a <time> after the headline; none of it when the page does not say
    const plain = doc('<title>Seals</title>', '<h1>Seals</h1><span class="author">By Ann Berg</span><time datetime="2019-11-19">Nov 19</time><p>Seals.</p>');
    const p2 = onlyOn(await extract(ctxWith(), page(plain)), 'crawl.extracted', decodeExtracted);
    assert.deepEqual([p2.author, p2.published_at, p2.site_name], ['Ann Berg', Date.UTC(2019, 10, 19), null]);
    const bare = onlyOn(await extract(ctxWith(), page(doc('<title>T</title>', '<p>Seals.</p>'))), 'crawl.extracted', decodeExtracted);
    assert.deepEqual([bare.author, bare.published_at, bare.site_name], [null, null, null]);
  });

  test('a page whose text is all page chrome keeps its full text as text, with text_source fallback_full', async () => {
    const body = '<nav><p>Home · News · Sport · Weather · Contact us · About this site · Jobs</p></nav><footer><p>© 2024 Example</p></footer>';
    const e = onlyOn(await extract(ctxWith(), page(doc('<title>T</title>', body))), 'crawl.extracted', decodeExtracted);
    assert.equal(e.text_source, 'fallback_full');
    assert.equal(e.text, e.text_full);
    assert.notEqual(e.text, '');
  });

  const robotsCases: Array<{ name: string; meta: string; noindex: boolean; nofollow: boolean }> = [
    { name: 'noindex', meta: '<meta name="robots" content="noindex">', noindex: true, nofollow: false },
    { name: 'nofollow', meta: '<meta name="robots" content="nofollow">', noindex: false, nofollow: true },
    { name: 'none', meta: '<meta name="ROBOTS" content="NONE">', noindex: true, nofollow: true },
    { name: 'noindex, nofollow', meta: '<meta name="robots" content="noindex, nofollow">', noindex: true, nofollow: true },
    { name: 'index, follow', meta: '<meta name="robots" content="index, follow">', noindex: false, nofollow: false },
  ];
  for (const c of robotsCases) {
    test(`meta robots ${c.name}: text ${c.noindex ? 'dropped' : 'kept'}, links ${c.nofollow ? 'not followed' : 'followed'}`, async () => {
      const ctx = ctxWith();
      const out = await extract(ctx, page(doc(`<title>T</title><meta name="description" content="D">${c.meta}`, '<p>Secret words.</p><a href="/x">x</a>')));
      const e = onlyOn(out, 'crawl.extracted', decodeExtracted);
      assert.equal(e.noindex, c.noindex);
      assert.equal(e.nofollow, c.nofollow);
      // the lone link "x" is all link text: boilerplate for the main text, kept in the full text
      assert.equal(e.text, c.noindex ? '' : 'Secret words.');
      assert.equal(e.text_source, c.noindex ? undefined : 'main');
      assert.equal(e.text_full, c.noindex ? '' : 'Secret words.\nx');
      assert.equal(e.description, c.noindex ? null : 'D');
      assert.equal(e.title, 'T', 'the title is kept either way');
      assert.equal(e.links.length, 1, 'links are recorded in the page either way');
      assert.equal(decodedOn(out, 'crawl.links', decodeDiscoveredLinks).length, c.nofollow ? 0 : 1);
    });
  }

  // X-Robots-Tag from the fetched response's headers, and meta robots named for the crawler,
  // whose token comes from the settings' user agent (its "compatible;" product) or --robots-token
  const COMPATIBLE_UA = 'Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot)';
  const directiveCases: Array<{
    name: string;
    xRobotsTag?: string;
    meta?: string;
    settings?: FakeContextOptions['settings'];
    noindex: boolean;
    nofollow: boolean;
    directives: string | null;
  }> = [
    { name: 'X-Robots-Tag: noindex', xRobotsTag: 'noindex', noindex: true, nofollow: false, directives: 'x-robots-tag: noindex' },
    { name: 'X-Robots-Tag: nofollow', xRobotsTag: 'nofollow', noindex: false, nofollow: true, directives: 'x-robots-tag: nofollow' },
    { name: 'X-Robots-Tag: none', xRobotsTag: 'None', noindex: true, nofollow: true, directives: 'x-robots-tag: none' },
    { name: 'X-Robots-Tag: all', xRobotsTag: 'all', noindex: false, nofollow: false, directives: 'x-robots-tag: all' },
    { name: 'X-Robots-Tag addressed to our token', xRobotsTag: 'examplebot: noindex, nofollow', settings: { userAgent: COMPATIBLE_UA }, noindex: true, nofollow: true, directives: 'x-robots-tag: noindex, nofollow' },
    { name: 'X-Robots-Tag addressed to another bot only', xRobotsTag: 'otherbot: noindex, nofollow', settings: { userAgent: COMPATIBLE_UA }, noindex: false, nofollow: false, directives: null },
    {
      name: 'two X-Robots-Tag headers, joined: another bot\'s, then ours',
      xRobotsTag: 'googlebot: noindex, examplebot: nofollow',
      settings: { userAgent: COMPATIBLE_UA },
      noindex: false,
      nofollow: true,
      directives: 'x-robots-tag: nofollow',
    },
    { name: 'X-Robots-Tag for the --robots-token', xRobotsTag: 'mybot: noindex', settings: { userAgent: COMPATIBLE_UA, robotsToken: 'MyBot' }, noindex: true, nofollow: false, directives: 'x-robots-tag: noindex' },
    { name: 'X-Robots-Tag unavailable_after a past date', xRobotsTag: 'unavailable_after: 25 Jun 2010 15:00:00 PST, noarchive', noindex: true, nofollow: false, directives: 'x-robots-tag: unavailable_after: 25 Jun 2010 15:00:00 PST, noarchive' },
    { name: 'X-Robots-Tag unavailable_after a date after the fetch', xRobotsTag: 'unavailable_after: 2094-01-01', noindex: false, nofollow: false, directives: 'x-robots-tag: unavailable_after: 2094-01-01' },
    { name: 'meta named by our token', meta: '<meta name="ExampleBot" content="noindex">', settings: { userAgent: COMPATIBLE_UA }, noindex: true, nofollow: false, directives: 'meta examplebot: noindex' },
    { name: 'meta named for another bot', meta: '<meta name="otherbot" content="noindex, nofollow">', settings: { userAgent: COMPATIBLE_UA }, noindex: false, nofollow: false, directives: null },
    {
      name: 'header and meta together: the most restrictive of each wins',
      xRobotsTag: 'nofollow',
      meta: '<meta name="robots" content="index, follow"><meta name="examplebot" content="noindex">',
      settings: { userAgent: COMPATIBLE_UA },
      noindex: true,
      nofollow: true,
      directives: 'x-robots-tag: nofollow; meta robots: index, follow; meta examplebot: noindex',
    },
  ];
  for (const c of directiveCases) {
    test(`${c.name}: text ${c.noindex ? 'dropped' : 'kept'}, links ${c.nofollow ? 'not followed' : 'followed'}, rules recorded`, async () => {
      const ctx = ctxWith(c.settings);
      const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8', etag: '"v1"', ...(c.xRobotsTag ? { 'x-robots-tag': c.xRobotsTag } : {}) };
      const p = page(doc(`<title>T</title>${c.meta ?? ''}`, '<p>Secret words.</p><a href="/x">x</a>'), { headers });
      const out = await extract(ctx, p);
      const e = onlyOn(out, 'crawl.extracted', decodeExtracted);
      assert.deepEqual({ noindex: e.noindex, nofollow: e.nofollow }, { noindex: c.noindex, nofollow: c.nofollow });
      assert.equal(e.text, c.noindex ? '' : 'Secret words.');
      assert.equal(e.text_full, c.noindex ? '' : 'Secret words.\nx');
      assert.equal(e.robots_directives, c.directives);
      assert.equal(pageRows({ ...e, simhash: e.simhash!, near_duplicate_of: null }, 'c').pages[0]!.robots_directives, c.directives, 'the pages row records them');
      assert.equal(e.links.length, 1, 'links are recorded in the page either way');
      assert.equal(decodedOn(out, 'crawl.links', decodeDiscoveredLinks).length, c.nofollow ? 0 : 1);
      await (out as { afterPublish?: () => Promise<void> }).afterPublish?.();
      assert.deepEqual((await readValidators(ctx.kv.validators, p.url))?.links, c.nofollow ? [] : [`https://${HOST}/x`], 'a 304 later follows only links that may be followed');
    });
  }

  const depthCases: Array<{ depth: number; maxDepth: number; followed: boolean }> = [
    { depth: 0, maxDepth: 0, followed: false },
    { depth: 0, maxDepth: 1, followed: true },
    { depth: 4, maxDepth: 5, followed: true },
    { depth: 5, maxDepth: 5, followed: false },
    { depth: 7, maxDepth: 5, followed: false },
  ];
  for (const c of depthCases) {
    test(`page at depth ${c.depth}, maxDepth ${c.maxDepth}: links ${c.followed ? 'emitted' : 'not emitted'}`, async () => {
      const ctx = ctxWith({ maxDepth: c.maxDepth });
      const out = await extract(ctx, page(BASIC, { depth: c.depth }));
      const l = decodedOn(out, 'crawl.links', decodeDiscoveredLinks);
      assert.equal(l.length, c.followed ? 1 : 0);
      if (c.followed) assert.equal(l[0]!.depth, c.depth + 1);
      assert.equal(onlyOn(out, 'crawl.extracted', decodeExtracted).links.length, 2, 'still recorded');
    });
  }

  test('a page without links emits no crawl.links message', async () => {
    const ctx = ctxWith();
    assert.deepEqual(subjectsOf(await extract(ctx, page(doc('<title>x</title>', '<p>no links</p>')))).map((s) => s.split('.')[1]), ['extracted']);
  });

  test('createExtractHandler({ titles: false }) → empty title, the rest unchanged', async () => {
    const ctx = ctxWith();
    const withTitles = onlyOn(await extract(ctx, page(BASIC)), 'crawl.extracted', decodeExtracted);
    const without = onlyOn(await extract(ctx, page(BASIC), { titles: false }), 'crawl.extracted', decodeExtracted);
    assert.equal(without.title, '');
    assert.deepEqual({ ...without, title: withTitles.title }, withTitles);
  });

  const charsets: Array<{ name: string; body: Uint8Array; header: string | null; charset: string; text: string }> = [
    // WHATWG: the label iso-8859-1 means windows-1252, and the canonical name is reported
    { name: 'header latin1', body: Buffer.from('<p>caf\xe9</p>', 'latin1'), header: 'iso-8859-1', charset: 'windows-1252', text: 'café' },
    { name: 'meta charset', body: Buffer.from('<meta charset="windows-1252"><p>caf\xe9</p>', 'latin1'), header: null, charset: 'windows-1252', text: 'café' },
    { name: 'default utf-8', body: Buffer.from('<p>café</p>', 'utf8'), header: null, charset: 'utf-8', text: 'café' },
    { name: 'unknown label → utf-8', body: Buffer.from('<p>café</p>', 'utf8'), header: 'x-unknown', charset: 'utf-8', text: 'café' },
    { name: 'undeclared, not UTF-8 → windows-1252', body: Buffer.from('<p>\x93caf\xe9\x94</p>', 'latin1'), header: null, charset: 'windows-1252', text: '\u201ccafé\u201d' },
  ];
  for (const c of charsets) {
    test(`charset: ${c.name}`, async () => {
      const ctx = ctxWith();
      const e = onlyOn(await extract(ctx, page(new Uint8Array(c.body), { charset: c.header })), 'crawl.extracted', decodeExtracted);
      assert.equal(e.charset, c.charset);
      assert.equal(e.text, c.text);
    });
  }

  const ARTICLE = doc(
    '<title>T</title><meta property="og:title" content="OG"><link rel="alternate" hreflang="de" href="/de/page.html">' +
      '<script type="application/ld+json">{"@type":"Article","headline":"H"}</script><script type="application/ld+json">{oops</script>',
    '<div id="cookie-consent"><p>We use cookies to measure the use of this site and to personalise the advertising you see here.</p></div>' +
      '<nav><a href="/a">A</a> <a href="/b">B</a></nav><main><article><h1>Headline</h1><p>' + 'Words of the article body. '.repeat(12) + '</p>' +
      '<iframe src="/video"></iframe></article></main><footer>Footer text</footer>',
  );

  test('text is the main text, text_full all visible text; headings, OpenGraph, JSON-LD, hreflang and link sources carried', async () => {
    const ctx = ctxWith();
    const out = await extract(ctx, page(ARTICLE));
    const e = onlyOn(out, 'crawl.extracted', decodeExtracted);
    assert.equal(e.text, `Headline\n${'Words of the article body. '.repeat(12).trim()}`);
    assert.match(e.text_full ?? '', /^We use cookies.*\nA B\nHeadline\n.*\nFooter text$/s);
    assert.equal(e.text_markdown, `# Headline\n\n${'Words of the article body. '.repeat(12).trim()}`);
    assert.deepEqual(e.headings, [{ level: 1, text: 'Headline' }]);
    assert.deepEqual(e.opengraph, { 'og:title': 'OG' });
    assert.deepEqual(e.json_ld, [{ '@type': 'Article', headline: 'H' }]);
    assert.deepEqual(e.hreflang, [{ lang: 'de', url: `https://${HOST}/de/page.html` }]);
    assert.deepEqual(
      e.links.map((l) => [l.source, l.url]),
      [['link-alternate', `https://${HOST}/de/page.html`], ['a', `https://${HOST}/a`], ['a', `https://${HOST}/b`], ['iframe', `https://${HOST}/video`]],
    );
    assert.equal(ctx.metrics.total('extract', 'json_ld', 'invalid'), 1, 'the broken JSON-LD block is counted');
    assert.equal(ctx.metrics.total('extract', 'json_ld', 'ok'), 1);
    const followed = decodedOn(out, 'crawl.links', decodeDiscoveredLinks)[0]!;
    assert.equal(followed.links.length, 4, 'every source is followed');
  });

  test('noindex: neither text, text_full nor text_markdown is stored, nor headings, OpenGraph and JSON-LD; links and hreflang are', async () => {
    const e = onlyOn(await extract(ctxWith(), page(ARTICLE.replace('<title>', '<meta name="robots" content="noindex"><title>'))), 'crawl.extracted', decodeExtracted);
    assert.equal(e.noindex, true);
    assert.equal(e.text, '');
    assert.equal(e.text_full, '');
    assert.equal(e.text_markdown, '');
    assert.deepEqual([e.headings, e.opengraph, e.json_ld], [[], {}, []]);
    assert.equal(e.hreflang?.length, 1);
    assert.equal(e.links.length, 4);
  });

  test('an old extracted message without the new fields still decodes (replayed streams)', async () => {
    const e = onlyOn(await extract(ctxWith(), page(BASIC)), 'crawl.extracted', decodeExtracted);
    const { text_full: _t, headings: _h, opengraph: _o, json_ld: _j, hreflang: _r, ...old } = e;
    const again = decodeExtracted(encodeMessage({ ...old, links: old.links.map(({ source: _s, ...l }) => l) }));
    const rows = pageRows({ ...again, simhash: '0'.repeat(16), near_duplicate_of: null }, 'c');
    assert.equal(rows.pages[0]!.text_full, '');
    assert.equal(rows.pages[0]!.json_ld, null);
    assert.equal(rows.links[0]!.source, 'a');
  });

  test('garbage and empty bodies still give an extracted page', async () => {
    const ctx = ctxWith();
    for (const body of [new Uint8Array(0), new Uint8Array([0xff, 0xfe, 0x00, 0x01, 0x3c]), new TextEncoder().encode('<html><body><p>unclosed')]) {
      const e = onlyOn(await extract(ctx, page(body)), 'crawl.extracted', decodeExtracted);
      assert.equal(e.content_length, body.length);
    }
  });
});

describe('extract: validators for the next crawl', () => {
  test("a page with an ETag leaves its validators and followable links once its outputs are out", async () => {
    const ctx = ctxWith();
    const p = page(BASIC, { headers: { etag: '"e1"', 'last-modified': 'Mon, 01 Jan 2024 00:00:00 GMT' } });
    const out = await extract(ctx, p);
    assert.equal(out.kind, 'emit');
    assert.equal(await readValidators(ctx.kv.validators, p.url), null, 'nothing before the outputs are published');
    await (out as { afterPublish?: () => Promise<void> }).afterPublish?.();
    const v = await readValidators(ctx.kv.validators, p.url);
    assert.equal(v?.etag, '"e1"');
    assert.equal(v?.last_modified, 'Mon, 01 Jan 2024 00:00:00 GMT');
    assert.deepEqual(v?.links, decodedOn(out, 'crawl.links', decodeDiscoveredLinks)[0]!.links.map((l) => l.url));
  });

  test('a page without validators leaves nothing', async () => {
    const ctx = ctxWith();
    const out = await extract(ctx, page(BASIC, { headers: {} }));
    await (out as { afterPublish?: () => Promise<void> }).afterPublish?.();
    assert.equal(await readValidators(ctx.kv.validators, page(BASIC).url), null);
  });
});
