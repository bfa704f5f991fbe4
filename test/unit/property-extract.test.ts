/**
 * Property-based tests of the extract stage on hostile documents: HTML-ish text from a small
 * grammar (nested tags incl. script/style/template/base/meta/a/area/noscript/iframe/textarea,
 * random attributes with garbage hrefs, unclosed and stray end tags, stray `<` and `&`,
 * broken entities, comments, CDATA, processing instructions), random bytes mixed in, random
 * charsets in Content-Type and <meta>, byte order marks, and large pathological documents.
 *
 * The contract checked: the handler never throws; it emits one crawl.extracted.* message that
 * decodes (plus crawl.links exactly when links are followed); every emitted link is an
 * absolute URL in WHATWG serialisation whose scheme is not one extract drops (javascript:,
 * mailto:, tel:, data:, vbscript:); the canonical URL is null or http(s); the text of a
 * well-formed <script> is never page text; after `afterPublish` the page's validators (ETag,
 * Last-Modified) and followable links are kept exactly when it had validators; a 200 KB
 * document is handled in under 2 s.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createExtractHandler } from '../../stages/extract/handle.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';
import { MAX_KEPT_LINKS, readValidators, type Validators } from '../../stages/shared/conditional-get.js';
import { partitionOf } from '../../pipeline/partition.js';
import { decodeDiscoveredLinks, decodeExtracted, encodeFetched, decodeFetched, type ExtractedPage, type DiscoveredLinks, type FetchedPage } from '../../schemas/index.js';
import { createFakeContext, onSubject, stageInput } from '../support/fake-context.js';

// ---------------------------------------------------------------------------------------------
// Arbitraries: a small HTML grammar

const TAGS = [
  'html', 'head', 'body', 'title', 'script', 'style', 'template', 'base', 'meta', 'link', 'a', 'area', 'map', 'noscript', 'iframe',
  'p', 'div', 'span', 'table', 'tr', 'td', 'th', 'ul', 'li', 'br', 'img', 'svg', 'math', 'textarea', 'xmp', 'plaintext', 'select',
  'option', 'frameset', 'frame', 'noembed', 'noframes', 'form', 'h1', 'pre', 'button', 'object', 'video', 'foreignObject', 'desc', 'b',
  'font', 'A', 'SCRIPT', 'Title', 'x-custom', 'a:b', 'a\u00e9',
] as const;

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const controlChar = fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c));
const garbageChar = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: loneSurrogate },
  { weight: 1, arbitrary: controlChar },
  { weight: 2, arbitrary: fc.constantFrom('<', '>', '&', '"', "'", '=', '/', '%', '#', '?', ' ', '\n', '\u00a0', '\ufeff', '\ufffd') },
);
const garbage = (maxLength: number) => fc.string({ unit: garbageChar, maxLength });

const hrefValue = fc.oneof(
  { weight: 3, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true, authoritySettings: { withIPv6: true, withPort: true, withUserInfo: true } }) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '', ' ', '#', '#top', '/', '/a/b', 'rel.html', '../../../x', '?q=1', '//cdn.example.org/x', '///x', 'javascript:alert(1)', ' JavaScript:void(0)',
      'java\tscript:x', 'mailto:a@b.c', 'tel:+1', 'data:text/html,<a href=x>', 'vbscript:x', 'ftp://example.com/f', 'file:///etc/passwd', 'about:blank',
      'blob:https://example.com/uuid', 'ws://example.com/', 'http://', 'https://', 'http://[::1', 'http://[::1]:99999/', 'http://exa mple.com/', 'http://%zz/',
      'http://a:b@example.com/', 'http:\\\\example.com\\x', 'https://münchen.example/ü?ä=ö#ß', '%', '%zz', '%E2%82', '&amp;', '&#0;', '&#x110000;', '&#xD800;',
      'a&b=c&amp;d', '\u0000', '\t\n/x\r\n', `/${'x'.repeat(3000)}`, 'http://0x7f.1/', 'https://example.com:-1/', 'HTTPS://EXAMPLE.COM/A',
    ),
  },
  { weight: 2, arbitrary: garbage(40) },
);
const attrName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('href', 'href', 'rel', 'name', 'content', 'charset', 'http-equiv', 'lang', 'style', 'hidden', 'alt', 'src', 'property', 'HREF', 'type', 'id') },
  { weight: 1, arbitrary: fc.constantFrom('"', "'", '<', '=', '/', 'a b', 'x\u0000', 'é', '') },
  { weight: 1, arbitrary: garbage(8).filter((s) => s.length > 0) },
);
const attrValueFor = (name: string): fc.Arbitrary<string> => {
  switch (name.toLowerCase()) {
    case 'href':
    case 'src':
      return hrefValue;
    case 'rel':
      return fc.constantFrom('canonical', 'nofollow', 'CANONICAL nofollow', ' canonical ', 'noopener', '', 'stylesheet');
    case 'name':
      return fc.constantFrom('robots', 'ROBOTS', 'description', 'viewport', ' robots ');
    case 'content':
      return fc.oneof(
        fc.constantFrom('noindex', 'nofollow', 'none', 'NOINDEX,NOFOLLOW', 'all', 'text/html; charset=shift_jis', 'text/html;charset="koi8-r"', 'charset=bogus', 'en-US, de', ''),
        garbage(30),
      );
    case 'charset':
      return charsetLabel;
    case 'http-equiv':
      return fc.constantFrom('Content-Type', 'content-language', 'refresh', 'x');
    case 'style':
      return fc.constantFrom('display:none', 'DISPLAY : NONE', 'color:red', '');
    case 'hidden':
      return fc.constantFrom('', 'until-found', 'hidden');
    case 'lang':
      return fc.oneof(fc.constantFrom('en', 'en_US', 'de-DE, en', 'zz-ZZ-xxxxxxxxx', '', 'x'), garbage(6));
    default:
      return garbage(20);
  }
};
const charsetLabel = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'utf-8', 'UTF8', 'unicode-1-1-utf-8', 'iso-8859-1', 'latin1', 'ascii', 'windows-1252', 'shift_jis', 'x-sjis', 'euc-jp', 'iso-2022-jp', 'gbk', 'gb18030',
      'big5', 'euc-kr', 'koi8-r', 'koi8-u', 'windows-1251', 'iso-8859-16', 'x-user-defined', 'utf-16', 'utf-16le', 'utf-16be', 'iso-2022-kr', 'hz-gb-2312',
      'replacement', 'bogus', '', ' utf-8 ', '"utf-8"', 'utf-8;', 'UTF-7', 'utf-32', 'x-mac-cyrillic', 'macintosh',
    ),
  },
  { weight: 1, arbitrary: garbage(12) },
);

const quoteAttr = (name: string, value: string, style: number) =>
  style === 0 ? `${name}="${value}"` : style === 1 ? `${name}='${value}'` : style === 2 ? `${name}=${value}` : name;
const attribute = attrName.chain((name) => fc.tuple(fc.constant(name), attrValueFor(name), fc.integer({ min: 0, max: 3 }))).map(([n, v, q]) => quoteAttr(n, v, q));

const textNode = fc.oneof(
  { weight: 4, arbitrary: fc.lorem({ maxCount: 8 }) },
  { weight: 2, arbitrary: garbage(40) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '&', '&amp', '&amp;', '&lt;script&gt;', '&#', '&#x', '&#xZZ;', '&#65;', '&#x110000;', '&#xD800;', '&#0;', '&nosuch;', '&notin', '&NotAnEntity',
      '<', '< ', '<<', '<3', '</', '</ >', '</>', '<!', '<!-', '<!-->', '<!--->', '<!-- x', '-->', '<![CDATA[x]]>', ']]>', '<?xml version="1.0"?>', '<?', '<!DOCTYPE html>',
      '<!doctype', '\u0000', '\r\n', '\ufeff', '=', '"', "'", '>', '<a', '<a href', '<a href="', '<a href=x', '<script', '</script', '</script >', '<!--<script>',
    ),
  },
);

interface ElementSpec {
  tag: string;
  attrs: string[];
  children: string[];
  close: 'normal' | 'none' | 'self' | 'mismatched';
}
function renderElement(e: ElementSpec): string {
  const open = `<${e.tag}${e.attrs.map((a) => ' ' + a).join('')}${e.close === 'self' ? ' /' : ''}>`;
  const inner = e.children.join('');
  switch (e.close) {
    case 'normal':
      return `${open}${inner}</${e.tag}>`;
    case 'mismatched':
      return `${open}${inner}</${e.tag === 'div' ? 'span' : 'div'}>`;
    default:
      return `${open}${inner}`;
  }
}

/** the elements extract cares about, with the attributes that matter */
const meaningfulElement = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(hrefValue, fc.lorem({ maxCount: 3 }), fc.constantFrom('', ' rel="nofollow"', ' rel="NoFollow  UGC"')).map(([h, t, r]) => `<a href="${h}"${r}>${t}</a>`) },
  { weight: 2, arbitrary: fc.tuple(hrefValue, garbage(10)).map(([h, alt]) => `<area href='${h}' alt="${alt}">`) },
  { weight: 2, arbitrary: hrefValue.map((h) => `<a href=${h}>unquoted</a>`) },
  { weight: 2, arbitrary: hrefValue.map((h) => `<link rel="canonical" href="${h}">`) },
  { weight: 2, arbitrary: hrefValue.map((h) => `<base href="${h}">`) },
  { weight: 1, arbitrary: fc.constantFrom('noindex', 'nofollow', 'none', 'NOINDEX, follow', 'index,nofollow').map((c) => `<meta name="robots" content="${c}">`) },
  { weight: 1, arbitrary: garbage(20).map((d) => `<meta name="description" content="${d}">`) },
  { weight: 1, arbitrary: fc.tuple(hrefValue, fc.lorem({ maxCount: 2 })).map(([h, t]) => `<noscript><a href="${h}">${t}</a></noscript>`) },
  { weight: 1, arbitrary: fc.lorem({ maxCount: 4 }).map((t) => `<title>${t}</title>`) },
);

const { node } = fc.letrec<{ node: string; element: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 3, arbitrary: textNode },
    { weight: 3, arbitrary: meaningfulElement },
    { weight: 4, arbitrary: tie('element') },
  ),
  element: fc
    .record({
      tag: fc.constantFrom(...TAGS),
      attrs: fc.array(attribute, { maxLength: 4 }),
      children: fc.array(tie('node'), { maxLength: 5 }),
      close: fc.constantFrom<ElementSpec['close']>('normal', 'normal', 'normal', 'none', 'self', 'mismatched'),
    })
    .map(renderElement),
}));

const metaCharset = fc.oneof(
  charsetLabel.map((c) => `<meta charset="${c}">`),
  charsetLabel.map((c) => `<meta http-equiv="Content-Type" content="text/html; charset=${c}">`),
  charsetLabel.map((c) => `<?xml version="1.0" encoding="${c}"?>`),
);

const htmlDocument = fc
  .record({
    prolog: fc.option(fc.constantFrom('<!DOCTYPE html>', '<!doctype html public "x">', '\ufeff', '<?xml version="1.0"?>', '  \n'), { nil: undefined }),
    meta: fc.option(metaCharset, { nil: undefined, freq: 2 }),
    head: fc.array(node, { maxLength: 4 }),
    body: fc.array(node, { maxLength: 8 }),
    wrap: fc.boolean(),
  })
  .map(({ prolog, meta, head, body, wrap }) => {
    const h = (meta ?? '') + head.join('');
    const b = body.join('');
    return (prolog ?? '') + (wrap ? `<html><head>${h}</head><body>${b}</body></html>` : h + b);
  });

/** a value one time in five, else undefined (fc.option is the other way round) */
const rarely = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

/** the document as bytes: UTF-8, or re-encoded in a legacy way, with a BOM, or with random bytes mixed in */
const BOMS: Record<string, number[]> = { 'utf-8': [0xef, 0xbb, 0xbf], 'utf-16le': [0xff, 0xfe], 'utf-16be': [0xfe, 0xff] };
const documentBytes = fc
  .record({
    html: htmlDocument,
    encoding: fc.constantFrom('utf-8', 'utf-8', 'utf-8', 'utf-8', 'utf-8', 'latin1', 'utf-16le'),
    // most documents have no BOM and are not cut
    bom: rarely(fc.constantFrom(...Object.keys(BOMS))),
    splices: fc.array(fc.record({ at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }), { maxLength: 2 }),
    cut: rarely(fc.nat()),
  })
  .map(({ html, encoding, bom, splices, cut }) => {
    let bytes: Uint8Array = new Uint8Array(Buffer.from(html, encoding as BufferEncoding));
    for (const s of splices) {
      const at = s.at % (bytes.length + 1);
      bytes = Buffer.concat([bytes.subarray(0, at), s.bytes, bytes.subarray(at)]);
    }
    if (cut !== undefined && bytes.length > 0) bytes = bytes.subarray(0, cut % bytes.length); // a body cut short (truncated)
    if (bom) bytes = Buffer.concat([Buffer.from(BOMS[bom]!), bytes]);
    return new Uint8Array(bytes);
  });

const anyBody = fc.oneof({ weight: 6, arbitrary: documentBytes }, { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2048 }) }, { weight: 1, arbitrary: fc.constant(new Uint8Array(0)) });

const pageUrl = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('https://www.example.com/dir/page.html', 'http://www.example.com/', 'https://www.example.com/a/b/?q=1', 'http://[::1]:8080/x', 'https://xn--mnchen-3ya.example/%C3%BC') },
  { weight: 1, arbitrary: fc.webUrl({ withQueryParameters: true, authoritySettings: { withIPv6: true, withPort: true } }) },
  // not a valid page URL at all (never sent by fetch, but extract must still not throw)
  { weight: 1, arbitrary: fc.constantFrom('', 'not a url', '/relative', 'http://[::1') },
);

const fetchedPage = fc
  .record({
    body: anyBody,
    url: pageUrl,
    headerCharset: fc.option(charsetLabel, { nil: null }),
    // validators for a later conditional GET (header values as undici gives them: latin1)
    etag: rarely(fc.oneof(fc.constantFrom('"v1"', 'W/"x"', ''), fc.string({ unit: fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 30 }))),
    lastModified: rarely(fc.constantFrom('Wed, 21 Oct 2015 07:28:00 GMT', '', 'garbage')),
    depth: fc.integer({ min: 0, max: 7 }),
    truncated: fc.boolean(),
  })
  .map(
    ({ body, url, headerCharset, etag, lastModified, depth, truncated }): FetchedPage => ({
      v: 1,
      fetch_id: 'fid-1',
      url,
      host: 'www.example.com',
      domain: 'example.com',
      depth,
      fetch_time: 1_700_000_000_000,
      fetch_status: 200,
      duration_ms: 12,
      content_type: 'text/html',
      charset: headerCharset,
      headers: {
        ...(headerCharset === null ? {} : { 'content-type': `text/html; charset=${headerCharset}` }),
        ...(etag === undefined ? {} : { etag }),
        ...(lastModified === undefined ? {} : { 'last-modified': lastModified }),
      },
      body,
      truncated,
    }),
  );

// ---------------------------------------------------------------------------------------------
// Helpers

const basePage = (body: Uint8Array): FetchedPage => ({
  v: 1,
  fetch_id: 'fid-1',
  url: 'https://www.example.com/',
  host: 'www.example.com',
  domain: 'example.com',
  depth: 1,
  fetch_time: 1_700_000_000_000,
  fetch_status: 200,
  duration_ms: 12,
  content_type: 'text/html',
  charset: 'utf-8',
  headers: {},
  body,
  truncated: false,
});

const SKIPPED_SCHEMES = new Set(['javascript:', 'mailto:', 'tel:', 'data:', 'vbscript:']);

// every property runs its full number of runs (no time limit that would end it early and pass)
const opts = (numRuns: number) => ({ numRuns });

interface Result {
  page: ExtractedPage;
  links: DiscoveredLinks | null;
  /** what the after-publish step kept for a later conditional GET */
  kept: Validators | null;
}

async function extract(p: FetchedPage, maxDepth = 5): Promise<Result> {
  const ctx = contextFor(maxDepth);
  // the stage gets the page as its decoder makes it from the wire
  const input = decodeFetched(encodeFetched(p));
  const out = await createExtractHandler()(stageInput(input, { subject: 'crawl.fetched.0' }), ctx);
  assert.equal(out.kind, 'emit');
  if (out.kind !== 'emit') assert.fail();
  const P = partitionOf(p.host, ctx.settings.partitions);
  assert.ok(out.messages.length === 1 || out.messages.length === 2, `one or two messages, got ${out.messages.length}`);
  const first = out.messages[0]!;
  assert.equal(first.subject, `crawl.extracted.${P}`);
  assert.equal(first.msgId, `extracted:${p.fetch_id}`);
  const page = decodeExtracted(first.data);
  let links: DiscoveredLinks | null = null;
  if (out.messages.length === 2) {
    const second = out.messages[1]!;
    assert.ok(onSubject(second.subject, 'crawl.links'));
    assert.equal(second.subject, `crawl.links.${P}`);
    assert.equal(second.msgId, `links:${p.fetch_id}`);
    links = decodeDiscoveredLinks(second.data);
  }
  // the runner publishes, then runs the after-publish step (keeps the validators)
  await out.afterPublish?.([]);
  const kept = await readValidators(ctx.kv.validators, p.url);
  return { page, links, kept };
}

function contextFor(maxDepth: number) {
  return createFakeContext({ settings: { maxDepth, partitions: 13 } });
}

function checkUrl(url: string, what: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    assert.fail(`${what} ${JSON.stringify(url)} is not an absolute URL`);
  }
  assert.equal(parsed.href, url, `${what} is in WHATWG serialisation`);
  assert.ok(!SKIPPED_SCHEMES.has(parsed.protocol), `${what} ${JSON.stringify(url)} has a dropped scheme`);
}

/** what the property saw, across its runs */
const coverage = new Map<string, number>();
const note = (key: string) => coverage.set(key, (coverage.get(key) ?? 0) + 1);

// ---------------------------------------------------------------------------------------------

describe('extract: properties (hostile documents)', () => {
  test('never throws; one crawl.extracted that decodes; links absolute; crawl.links exactly when followed', async () => {
    await fc.assert(
      fc.asyncProperty(fetchedPage, fc.integer({ min: 0, max: 6 }), async (p, maxDepth) => {
        const { page, links, kept } = await extract(p, maxDepth);
        // validators (and the links to follow on a 304) are kept exactly when the page had any
        assert.equal(kept !== null, 'etag' in p.headers || 'last-modified' in p.headers);
        if (kept) {
          note('validators');
          assert.equal(kept.etag, p.headers['etag'] ?? null);
          assert.equal(kept.last_modified, p.headers['last-modified'] ?? null);
          assert.deepEqual(kept.links, page.nofollow ? [] : page.links.map((l) => l.url).slice(0, MAX_KEPT_LINKS));
        }
        assert.equal(page.fetch_id, p.fetch_id);
        assert.equal(page.url, p.url);
        assert.equal(page.depth, p.depth);
        assert.equal(page.content_length, p.body.length);
        assert.equal(page.content_digest, contentDigest(p.body));
        assert.ok(page.charset !== null && page.charset.length > 0, 'the charset used is named');
        assert.ok(page.title.length >= 0 && page.text.length >= 0);
        assert.ok(!page.text.startsWith(' ') && !page.text.endsWith(' '), 'text is trimmed');
        for (const l of page.links) {
          checkUrl(l.url, 'link');
          assert.ok(l.anchor.length <= 500, 'anchor text is capped');
          note(new URL(l.url).protocol);
        }
        if (page.canonical_url !== null) {
          checkUrl(page.canonical_url, 'canonical URL');
          assert.match(page.canonical_url, /^https?:\/\//);
          note('canonical');
        }
        if (page.noindex) {
          note('noindex');
          assert.equal(page.text, '');
          assert.equal(page.description, null);
        }
        if (page.nofollow) note('nofollow');
        const followed = !page.nofollow && page.links.length > 0 && p.depth + 1 <= maxDepth;
        assert.equal(links !== null, followed, 'crawl.links exactly when the links are followed');
        if (links) {
          note('links');
          assert.equal(links.source_url, p.url);
          assert.equal(links.depth, p.depth + 1);
          assert.equal(links.via, 'link');
          assert.deepEqual(links.links, page.links.map(({ url, anchor, rel }) => ({ url, anchor, rel })), 'the same links as recorded');
        }
        note(`charset:${page.charset}`);
      }),
      opts(400),
    );
  });

  test('the random documents reached links, canonical URLs, noindex, nofollow and several charsets', (t) => {
    t.diagnostic(JSON.stringify(Object.fromEntries(coverage)));
    for (const key of ['links', 'validators', 'https:', 'canonical', 'noindex', 'nofollow', 'charset:utf-8', 'charset:windows-1252', 'charset:utf-16le']) {
      assert.ok((coverage.get(key) ?? 0) > 0, `no run produced ${key}`);
    }
    assert.ok([...coverage.keys()].filter((k) => k.startsWith('charset:')).length >= 5, 'several charsets');
  });

  test('the content of a well-formed <script> never shows up in the text', async () => {
    // a grammar without raw-text elements, comments, or stray markup that could swallow the
    // script tag: there every <script>…</script> is a script element
    const safeTag = fc.constantFrom('div', 'p', 'span', 'b', 'ul', 'li', 'table', 'tr', 'td', 'section', 'h1', 'a', 'svg', 'select', 'option', 'form');
    const safeText = fc.lorem({ maxCount: 5 });
    const scriptBody = fc
      .string({ unit: fc.oneof(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), fc.constantFrom('"', "'", '/', '-', '!', '>', '\n', 'é')), maxLength: 40 })
      .map((s) => s.replace(/</g, ' ')); // no "</script", no "<!--"
    const MARK = 'SCRIPTMARK';
    const { safeNode } = fc.letrec<{ safeNode: string; safeElement: string; script: string }>((tie) => ({
      safeNode: fc.oneof({ depthSize: 'small' }, safeText, tie('safeElement'), tie('script')),
      script: fc.tuple(scriptBody, scriptBody).map(([a, b]) => `<script>${a} ${MARK} ${b}</script>`),
      safeElement: fc
        .record({ tag: safeTag, children: fc.array(tie('safeNode'), { maxLength: 4 }), href: fc.constantFrom('', ' href="/x"') })
        .map(({ tag, children, href }) => `<${tag}${tag === 'a' ? href : ''}>${children.join('')}</${tag}>`),
    }));
    await fc.assert(
      fc.asyncProperty(fc.array(safeNode, { minLength: 1, maxLength: 6 }), fc.boolean(), async (nodes, inHead) => {
        const html = inHead ? `<html><head><script>${MARK}</script></head><body>${nodes.join('')}</body></html>` : nodes.join('');
        const { page } = await extract(basePage(new TextEncoder().encode(html)));
        assert.ok(!page.text.includes(MARK), `script text in ${JSON.stringify(page.text)}`);
        for (const l of page.links) assert.ok(!l.anchor.includes(MARK), 'script text in an anchor');
      }),
      opts(300),
    );
  });

  // Found while checking message sizes (not by the random properties: it needs a large body).
  // StageContext.maxPayloadBytes exists "so a stage can cap what it emits"; extract's outputs
  // can be several times the body: windows-1252 bytes 0x80-0x9F decode to 3-byte UTF-8
  // characters (x3), and short relative hrefs become absolute URLs in both crawl.extracted and
  // crawl.links (about x3.6 each: a 768 KB page of `<a href=N>` gives two 2.8 MB messages at
  // the 1 MiB default). Above the server's max_payload the publish fails, and the runner naks
  // and retries the page forever (max_deliver -1; publish errors never dead-letter). The body
  // itself may be larger than a message too, stored beside it (here twice max_payload).
  test('a page body of any size never yields a message larger than maxPayloadBytes (was a bug: decoded text and absolute links outgrow the body)', async () => {
    const maxPayloadBytes = 512 * 1024;
    const ctx = createFakeContext({ maxPayloadBytes });
    const body = new Uint8Array(2 * maxPayloadBytes).fill(0x80); // 1 MiB of "€" in windows-1252
    const page = { ...basePage(new Uint8Array(0)), body_ref: await ctx.bodies.put('crawl.bodies.0', body), charset: 'windows-1252' };
    const out = await createExtractHandler()(stageInput(page), ctx);
    assert.equal(out.kind, 'emit');
    for (const m of (out as Extract<typeof out, { kind: 'emit' }>).messages) {
      assert.ok(m.data.length <= maxPayloadBytes, `${m.subject}: ${m.data.length} bytes > max payload ${maxPayloadBytes}`);
    }
  });

  // What these documents cost (about what a plain page of their size costs: a parser or extractor
  // that goes quadratic on one takes seconds to minutes) is measured by `npm run bench:inputs`.
  test('a 200 KB hostile document is extracted whole: one page of its length, without a throw', async () => {
    const pathological = fc.constantFrom(
      (n: number) => '<div>'.repeat(n),
      (n: number) => '<a href="/x">'.repeat(n),
      (n: number) => '<svg><a href="/y">'.repeat(n),
      (n: number) => '<table><tr><td>'.repeat(n),
      (n: number) => '<noscript><a href="/z">x</a></noscript>'.repeat(n),
      (n: number) => '<a href="/a">' + '<b>x</b>'.repeat(n) + '</a>',
      (n: number) => '&'.repeat(n * 4),
      (n: number) => '<'.repeat(n * 4),
      (n: number) => '<!--'.repeat(n),
      (n: number) => `<p title="${'x'.repeat(n * 4)}`,
      (n: number) => '<script>' + 'x'.repeat(n * 4),
      (n: number) => '<a href="/n">'.repeat(n).replace(/\/n/g, () => `/n${Math.random()}`),
      (n: number) => '<select><option>'.repeat(n),
      (n: number) => '<font><b><i><u>'.repeat(n),
      (n: number) => '<font><b><i><u>x'.repeat(n),
      (n: number) => '<table><a href="/q">x'.repeat(n),
      (n: number) => '<b><i><a href=/r>x</b></i>'.repeat(n),
      (n: number) => '<svg><noscript><a href=/q>'.repeat(n),
      (n: number) => '<template>'.repeat(n),
      (n: number) => '<div><a href="/x">t'.repeat(n),
      (n: number) => `<meta name=robots content=none><base href="//[::1]/">`.repeat(n),
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(pathological, fc.constant(null)), htmlDocument, documentBytes, async (make, doc, bytes) => {
        const TARGET = 200 * 1024;
        let body: Uint8Array;
        if (make) body = new TextEncoder().encode(make(Math.ceil(TARGET / 16)).slice(0, TARGET));
        else {
          // a random grammar document (and its byte mutations) repeated up to 200 KB
          const unit = Buffer.concat([Buffer.from(doc), Buffer.from(bytes)]);
          const parts: Buffer[] = [];
          let size = 0;
          while (size < TARGET && unit.length > 0) {
            parts.push(unit);
            size += unit.length;
          }
          body = new Uint8Array(Buffer.concat(parts).subarray(0, TARGET));
        }
        const { page } = await extract({ ...basePage(body), charset: null, truncated: true });
        assert.equal(page.content_length, body.length);
        assert.equal(page.url, basePage(body).url);
      }),
      opts(24),
    );
  });
});
