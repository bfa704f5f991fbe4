// The sitemap parser (stages/extract/sitemap): what a crawler takes from a fetched sitemap
// file, checked on the files real sites serve, half-broken and hostile ones included.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { DEFAULT_SITEMAP_LIMITS, DROP_REASONS, MAX_ZONE_AHEAD_MS, parseChangefreq, parseLastmod, parsePriority, parseSitemap, type SitemapLimits } from '../../stages/extract/sitemap/index.js';
import { readSitemapBytes } from '../../stages/extract/sitemap/read-bytes.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const SITEMAP = 'http://h.test/a/sitemap.xml';
const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';

function parse(body: string | Uint8Array, opts: { url?: string; type?: string; limits?: Partial<SitemapLimits> } = {}) {
  return parseSitemap({
    body: typeof body === 'string' ? Buffer.from(body) : body,
    contentType: opts.type ?? 'application/xml',
    url: opts.url ?? SITEMAP,
    now: NOW,
    ...(opts.limits ? { limits: opts.limits } : {}),
  });
}
const urls = (r: ReturnType<typeof parse>) => r.entries.map((e) => e.url);
const urlset = (inner: string, open = `<urlset ${NS}>`, close = '</urlset>') => `<?xml version="1.0" encoding="UTF-8"?>\n${open}${inner}${close}`;
const url = (loc: string, more = '') => `<url><loc>${loc}</loc>${more}</url>`;

describe('sitemap parser: formats', () => {
  test('a urlset: every field read', () => {
    const r = parse(urlset(url('http://h.test/a/1', '<lastmod>2026-11-20T08:30:00+01:00</lastmod><changefreq>daily</changefreq><priority>0.8</priority>') + url('http://h.test/a/2')));
    assert.equal(r.kind, 'urlset');
    assert.deepEqual(r.entries, [
      { url: 'http://h.test/a/1', lastmod: Date.parse('2026-11-20T07:30:00Z'), changefreq: 'daily', priority: 0.8 },
      { url: 'http://h.test/a/2', lastmod: null, changefreq: null, priority: null },
    ]);
    assert.deepEqual(r.dropped, []);
    assert.equal(r.error, undefined);
    assert.equal(r.truncated, undefined);
  });

  test('a sitemap index: its child sitemaps are the entries, anywhere on its own site', () => {
    const r = parse(`<sitemapindex ${NS}>
      <sitemap><loc>http://h.test/a/s1.xml</loc><lastmod>2026-11-01</lastmod></sitemap>
      <sitemap><loc>http://h.test/other/s2.xml.gz</loc></sitemap>
      <sitemap><loc>http://elsewhere.test/a/s3.xml</loc></sitemap>
    </sitemapindex>`);
    assert.equal(r.kind, 'index');
    assert.deepEqual(r.entries, [
      { url: 'http://h.test/a/s1.xml', lastmod: Date.parse('2026-11-01T00:00:00Z'), changefreq: null, priority: null },
      { url: 'http://h.test/other/s2.xml.gz', lastmod: null, changefreq: null, priority: null },
    ]);
    assert.deepEqual(r.dropped, [{ url: 'http://elsewhere.test/a/s3.xml', reason: DROP_REASONS.otherSite }]);
  });

  test('a text sitemap: one URL a line, blank lines skipped, CRLF or LF', () => {
    const r = parse('http://h.test/a/1\r\n\r\n  http://h.test/a/2  \nnot a url\nhttp://h.test/b/3\n', { type: 'text/plain' });
    assert.equal(r.kind, 'text');
    assert.deepEqual(urls(r), ['http://h.test/a/1', 'http://h.test/a/2']);
    assert.deepEqual(r.dropped, [
      { url: 'not a url', reason: DROP_REASONS.notHttp },
      { url: 'http://h.test/b/3', reason: DROP_REASONS.outsidePrefix },
    ]);
  });

  for (const [name, open, close, inner] of [
    ['the 0.9 namespace', `<urlset ${NS}>`, '</urlset>', url('http://h.test/a/1')],
    ['no namespace', '<urlset>', '</urlset>', url('http://h.test/a/1')],
    ["Google's old 0.84 namespace", '<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">', '</urlset>', url('http://h.test/a/1')],
    ['a prefixed root', '<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">', '</sm:urlset>', '<sm:url><sm:loc>http://h.test/a/1</sm:loc></sm:url>'],
    [
      'image and xhtml extensions, whose <image:loc> is not the page',
      `<urlset ${NS} xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:xhtml="http://www.w3.org/1999/xhtml">`,
      '</urlset>',
      '<url><loc>http://h.test/a/1</loc><xhtml:link rel="alternate" hreflang="de" href="http://h.test/a/de/1"/><image:image><image:loc>http://h.test/img/1.jpg</image:loc></image:image></url>',
    ],
    ['an unbound extension prefix', `<urlset ${NS}>`, '</urlset>', '<url><loc>http://h.test/a/1</loc><video:video><video:loc>http://h.test/v.mp4</video:loc></video:video></url>'],
  ] as const) {
    test(`namespaces: ${name}`, () => {
      const r = parse(urlset(inner, open, close));
      assert.equal(r.kind, 'urlset', r.error);
      assert.deepEqual(urls(r), ['http://h.test/a/1']);
    });
  }

  test('tag names are matched as the spec spells them: <URL> is not <url>', () => {
    const r = parse(urlset('<URL><LOC>http://h.test/a/1</LOC></URL>' + url('http://h.test/a/2')));
    assert.deepEqual(urls(r), ['http://h.test/a/2']);
  });

  test('a BOM before the XML declaration, and before a text sitemap', () => {
    assert.deepEqual(urls(parse(`\uFEFF${urlset(url('http://h.test/a/1'))}`)), ['http://h.test/a/1']);
    const text = parse('\uFEFFhttp://h.test/a/1\n');
    assert.equal(text.kind, 'text');
    assert.deepEqual(urls(text), ['http://h.test/a/1']);
  });

  test('CDATA, entities and white space in <loc>', () => {
    const r = parse(urlset(url('<![CDATA[http://h.test/a/1?x=1&y=2]]>') + url('http://h.test/a/2?x=1&amp;y=2&#38;z=&#x33;') + url('\n    http://h.test/a/3\n  ')));
    assert.deepEqual(urls(r), ['http://h.test/a/1?x=1&y=2', 'http://h.test/a/2?x=1&y=2&z=3', 'http://h.test/a/3']);
  });
});

describe('sitemap parser: gzip, told by its magic bytes', () => {
  const xml = urlset(url('http://h.test/a/1') + url('http://h.test/a/2'));
  for (const type of ['application/gzip', 'application/x-gzip', 'application/xml', 'application/octet-stream']) {
    test(`.xml.gz served as ${type}`, () => {
      const r = parse(gzipSync(xml), { url: 'http://h.test/a/sitemap.xml.gz', type });
      assert.equal(r.kind, 'urlset');
      assert.deepEqual(urls(r), ['http://h.test/a/1', 'http://h.test/a/2']);
    });
  }

  test('plain XML labelled application/gzip (a client undid the Content-Encoding) is read as it is', () => {
    assert.deepEqual(urls(parse(xml, { type: 'application/gzip' })), ['http://h.test/a/1', 'http://h.test/a/2']);
  });

  test('a multi-member gzip file is read whole', () => {
    const r = parse(Buffer.concat([gzipSync(`<urlset>${url('http://h.test/a/1')}`), gzipSync(`${url('http://h.test/a/2')}</urlset>`)]));
    assert.equal(r.kind, 'urlset', r.error);
    assert.deepEqual(urls(r), ['http://h.test/a/1', 'http://h.test/a/2']);
  });

  test('a gzipped text sitemap', () => {
    const r = parse(gzipSync('http://h.test/a/1\nhttp://h.test/a/2\n'), { url: 'http://h.test/a/sitemap.txt.gz' });
    assert.equal(r.kind, 'text');
    assert.deepEqual(urls(r), ['http://h.test/a/1', 'http://h.test/a/2']);
  });

  for (const share of [0.3, 0.5, 0.7, 0.999]) {
    test(`a gzip stream cut at ${share * 100}%: invalid, with the URLs inflated before the cut`, () => {
      const many = urlset(Array.from({ length: 3000 }, (_, i) => url(`http://h.test/a/${i}`)).join(''));
      const gz = gzipSync(many);
      const r = parse(gz.subarray(0, Math.floor(gz.length * share)));
      assert.equal(r.kind, 'invalid');
      assert.match(r.error ?? '', /^gzip: /);
      assert.ok(r.entries.length > 100 && r.entries.length <= 3000, `${r.entries.length} entries before the cut`);
      assert.deepEqual(urls(r).slice(0, 2), ['http://h.test/a/0', 'http://h.test/a/1']);
    });
  }
});

describe('sitemap parser: which URLs a sitemap may list', () => {
  const at = 'http://h.test/a/b/sitemap.xml';
  for (const [loc, reason] of [
    ['http://h.test/a/b/page.html', null],
    ['http://h.test/a/b/', null],
    ['http://h.test/a/b/c/d.html?q=1#top', null],
    ['http://H.TEST:80/a/b/x', null],
    ['http://h.test/a/bc/x', DROP_REASONS.outsidePrefix],
    ['http://h.test/a/b', DROP_REASONS.outsidePrefix],
    ['http://h.test/a/x', DROP_REASONS.outsidePrefix],
    ['http://h.test/a/b/../x', DROP_REASONS.outsidePrefix],
    ['https://h.test/a/b/x', DROP_REASONS.otherSite],
    ['http://h.test:8080/a/b/x', DROP_REASONS.otherSite],
    ['http://www.h.test/a/b/x', DROP_REASONS.otherSite],
    ['/a/b/relative.html', DROP_REASONS.notHttp],
    ['page.html', DROP_REASONS.notHttp],
    ['ftp://h.test/a/b/x', DROP_REASONS.notHttp],
    ['mailto:someone@h.test', DROP_REASONS.notHttp],
    [`http://h.test/a/b/${'x'.repeat(2048)}`, DROP_REASONS.tooLong],
    ['', DROP_REASONS.noLoc],
  ] as const) {
    test(`${loc.slice(0, 60) || '(empty loc)'}: ${reason ?? 'kept'}`, () => {
      const r = parse(urlset(url(loc)), { url: at });
      if (reason === null) {
        assert.equal(r.entries.length, 1, JSON.stringify(r.dropped));
        assert.deepEqual(r.dropped, []);
      } else {
        assert.deepEqual(r.entries, []);
        assert.deepEqual(r.dropped, [{ url: loc.slice(0, DEFAULT_SITEMAP_LIMITS.maxUrlLength), reason }]);
      }
    });
  }

  test('a URL of exactly 2048 characters is kept', () => {
    const loc = `http://h.test/a/b/${'x'.repeat(2048 - 'http://h.test/a/b/'.length)}`;
    assert.equal(loc.length, 2048);
    assert.deepEqual(urls(parse(urlset(url(loc)), { url: at })), [loc]);
  });

  test('a sitemap at the root covers the whole host; a sitemap URL that is not http(s) is refused', () => {
    assert.deepEqual(urls(parse(urlset(url('http://h.test/x/y/z')), { url: 'http://h.test/sitemap.xml' })), ['http://h.test/x/y/z']);
    const r = parse(urlset(url('http://h.test/x')), { url: 'file:///tmp/sitemap.xml' });
    assert.equal(r.kind, 'invalid');
    assert.match(r.error ?? '', /own URL is not an absolute http\(s\) URL/);
  });
});

describe('sitemap parser: lastmod, changefreq, priority', () => {
  const SKEW = DEFAULT_SITEMAP_LIMITS.lastmodSkewMs;
  for (const [text, expected] of [
    ['2026', Date.parse('2026-01-01T00:00:00Z')],
    ['2026-11', Date.parse('2026-11-01T00:00:00Z')],
    ['2026-11-20', Date.parse('2026-11-20T00:00:00Z')],
    ['2026-11-20T10:15Z', Date.parse('2026-11-20T10:15:00Z')],
    ['2026-11-20T10:15:30Z', Date.parse('2026-11-20T10:15:30Z')],
    ['2026-11-20T10:15:30.45Z', Date.parse('2026-11-20T10:15:30.450Z')],
    ['2026-11-20T10:15:30+02:00', Date.parse('2026-11-20T08:15:30Z')],
    ['2026-11-20T10:15:30-0500', Date.parse('2026-11-20T15:15:30Z')],
    ['2026-11-20 10:15:30', Date.parse('2026-11-20T10:15:30Z')],
    ['  2026-11-20T10:15:30Z\n', Date.parse('2026-11-20T10:15:30Z')],
    // the future: past the allowance it is unknown, within it it is clamped to now
    ['2026-11-23T12:05:00Z', NOW],
    [new Date(NOW + SKEW + 1000).toISOString(), null],
    ['2027-01-01', null],
    ['2099', null],
    // a bare date is some zone's local date: "tomorrow" in UTC+14 is today
    ['2026-11-24', NOW],
    ['2026-11-25', null],
    // not W3C datetimes, or impossible dates
    ['yesterday', null],
    ['20261120', null],
    ['2026-13-01', null],
    ['2026-02-30', null],
    ['2026-11-20T25:00Z', null],
    ['2026-11-20T10:00+15:00', null],
    ['1969-12-31', null],
    ['', null],
  ] as const) {
    test(`lastmod ${JSON.stringify(text)} -> ${expected === null ? 'null' : new Date(expected).toISOString()}`, () => {
      assert.equal(parseLastmod(text, NOW, SKEW), expected);
    });
  }

  test('the allowance for a bare date is the skew plus UTC+14', () => {
    const tomorrow = Date.parse('2026-11-24T00:00:00Z');
    assert.equal(parseLastmod('2026-11-24', tomorrow - MAX_ZONE_AHEAD_MS - SKEW, SKEW), tomorrow - MAX_ZONE_AHEAD_MS - SKEW);
    assert.equal(parseLastmod('2026-11-24', tomorrow - MAX_ZONE_AHEAD_MS - SKEW - 1, SKEW), null);
  });

  test('a future lastmod in a sitemap leaves the URL, unknown when it changed', () => {
    const r = parse(urlset(url('http://h.test/a/1', '<lastmod>2031-01-01T00:00:00Z</lastmod>')));
    assert.deepEqual(r.entries, [{ url: 'http://h.test/a/1', lastmod: null, changefreq: null, priority: null }]);
  });

  for (const [text, expected] of [
    ['always', 'always'],
    ['hourly', 'hourly'],
    [' Weekly ', 'weekly'],
    ['never', 'never'],
    ['fortnightly', null],
    ['', null],
  ] as const) {
    test(`changefreq ${JSON.stringify(text)} -> ${expected}`, () => assert.equal(parseChangefreq(text), expected));
  }
  for (const [text, expected] of [
    ['0.0', 0],
    ['0.5', 0.5],
    ['1.0', 1],
    ['1', 1],
    ['.3', 0.3],
    ['1.1', null],
    ['-0.1', null],
    ['high', null],
    ['0x1', null],
    ['', null],
  ] as const) {
    test(`priority ${JSON.stringify(text)} -> ${expected}`, () => assert.equal(parsePriority(text), expected));
  }
});

describe('sitemap parser: limits', () => {
  const locs = (n: number) => Array.from({ length: n }, (_, i) => url(`http://h.test/a/${i}`)).join('');

  test('50,001 URLs: the first 50,000 kept, and the parse says it stopped', () => {
    const r = parse(urlset(locs(50_001)));
    assert.equal(r.kind, 'urlset');
    assert.equal(r.entries.length, 50_000);
    assert.equal(r.entries[49_999]!.url, 'http://h.test/a/49999');
    assert.match(r.truncated ?? '', /more than 50000 URLs/);
    assert.equal(r.error, undefined);
  });

  test('exactly 50,000 URLs is not truncated', () => {
    const r = parse(urlset(locs(50_000)));
    assert.equal(r.entries.length, 50_000);
    assert.equal(r.truncated, undefined);
  });

  test('dropped URLs count against the limit, and a text sitemap has it too', () => {
    const r = parse(urlset(url('http://other.test/') + locs(5)), { limits: { maxUrls: 3 } });
    assert.equal(r.entries.length + r.dropped.length, 3);
    assert.ok(r.truncated);
    const t = parse('http://h.test/a/1\nhttp://h.test/a/2\nhttp://h.test/a/3\n', { limits: { maxUrls: 2 } });
    assert.deepEqual(urls(t), ['http://h.test/a/1', 'http://h.test/a/2']);
    assert.ok(t.truncated);
  });

  test('past the byte limit: what came before is kept, the rest is not read, and it says so', () => {
    const body = urlset(locs(2000));
    const r = parse(body, { limits: { maxBytes: 10_000 } });
    assert.equal(r.kind, 'urlset');
    assert.equal(r.error, undefined, 'a cut made by the limit is not malformed XML');
    assert.ok(r.entries.length > 50 && r.entries.length < 2000, `${r.entries.length} entries`);
    assert.match(r.truncated ?? '', /larger than 10000 bytes/);
  });

  test('a gzip bomb stops inflating at the byte limit (50 MB), keeping the URLs before its padding', () => {
    // 300 MB of spaces between two URLs, gzipped to ~300 KB
    const head = Buffer.from(`<urlset ${NS}>${url('http://h.test/a/first')}`);
    const tail = Buffer.from(`${url('http://h.test/a/after-the-padding')}</urlset>`);
    const bomb = gzipSync(Buffer.concat([head, Buffer.alloc(300 * 1024 * 1024, ' '), tail]), { level: 9 });
    assert.ok(bomb.length < 1024 * 1024);
    const r = parse(bomb, { url: 'http://h.test/a/sitemap.xml.gz' });
    assert.deepEqual(urls(r), ['http://h.test/a/first']);
    assert.match(r.truncated ?? '', /larger than 52428800 bytes inflated/);
  });

  test('the inflater hands on exactly the limit, never more', () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    let handed = 0;
    const result = readSitemapBytes(bomb, 5_000_000, (bytes) => {
      handed += bytes.length;
    });
    assert.equal(handed, 5_000_000);
    assert.deepEqual(result, { cut: true });
  });

  test('a gzip bomb of zeros is binary data, not a sitemap', () => {
    const r = parse(gzipSync(Buffer.alloc(100 * 1024 * 1024), { level: 9 }));
    assert.equal(r.kind, 'invalid');
    assert.match(r.error ?? '', /binary data \(gzip/);
  });
});

describe('sitemap parser: malformed and foreign files', () => {
  for (const [name, body, kept, error] of [
    ['a mismatched closing tag', urlset(url('http://h.test/a/1') + '<url><loc>http://h.test/a/2</lo></url>' + url('http://h.test/a/3')), ['http://h.test/a/1'], /malformed XML at line \d+, column \d+: Unexpected close tag \(inside <loc>\)/],
    ['a file that ends inside an entry whose <loc> is whole', `<urlset>${url('http://h.test/a/1')}<url><loc>http://h.test/a/2</loc><lastmod>2026-`, ['http://h.test/a/1', 'http://h.test/a/2'], /malformed XML/],
    ['a file that ends inside a <loc>', `<urlset>${url('http://h.test/a/1')}<url><loc>http://h.test/a/2`, ['http://h.test/a/1'], /malformed XML/],
    ['an unescaped & in a URL', urlset(url('http://h.test/a/1') + url('http://h.test/a/2?x=1&y=2') + url('http://h.test/a/3')), ['http://h.test/a/1'], /malformed XML/],
    ['an undefined entity', urlset(url('http://h.test/a/1') + url('http://h.test/a/&nosuchentity;x')), ['http://h.test/a/1'], /malformed XML/],
    [
      'an entity bomb in a DTD, never expanded',
      `<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><urlset>${url('http://h.test/a/1')}${url('http://h.test/a/&c;')}</urlset>`,
      ['http://h.test/a/1'],
      /malformed XML/,
    ],
    ['text after the root element', `${urlset(url('http://h.test/a/1'))}trailing junk`, ['http://h.test/a/1'], /malformed XML/],
    ['an HTML page', '<!DOCTYPE html><html><head><title>Not found</title></head><body>gone</body></html>', [], /not a sitemap: the root element is <html>/],
    ['an RSS feed', '<?xml version="1.0"?><rss version="2.0"><channel><item><link>http://h.test/a/1</link></item></channel></rss>', [], /<rss> \(an RSS or Atom feed/],
    ['an empty body', '', [], /empty sitemap \(content type application\/xml\)/],
    ['white space only', ' \n\t ', [], /empty sitemap/],
    ['binary data', '\u0000\u0001\u0002PK', [], /binary data/],
  ] as const) {
    test(`${name}: invalid, keeping ${kept.length} URL(s) read before the fault`, () => {
      const r = parse(body);
      assert.equal(r.kind, 'invalid');
      assert.match(r.error ?? '(no error)', error);
      assert.deepEqual(urls(r), kept);
    });
  }

  test("HTML's named entities (&nbsp;, &eacute;) are forgiven, as generators emit them", () => {
    assert.deepEqual(urls(parse(urlset(url('http://h.test/a/caf&eacute;')))), ['http://h.test/a/caf%C3%A9']);
  });

  test('an XML declaration after leading white space is tolerated', () => {
    assert.deepEqual(urls(parse(`\n\n  ${urlset(url('http://h.test/a/1'))}`)), ['http://h.test/a/1']);
  });

  test('a <url> without <loc> is dropped as such, and the next one is read', () => {
    const r = parse(urlset('<url><lastmod>2026-01-01</lastmod></url>' + url('http://h.test/a/1')));
    assert.equal(r.kind, 'urlset');
    assert.deepEqual(urls(r), ['http://h.test/a/1']);
    assert.deepEqual(r.dropped, [{ url: '', reason: DROP_REASONS.noLoc }]);
  });

  test('a 1 MB <loc> is dropped as too long, and only its first 2048 characters are kept in the record', () => {
    const r = parse(urlset(url(`http://h.test/a/${'y'.repeat(1024 * 1024)}`) + url('http://h.test/a/ok')));
    assert.deepEqual(urls(r), ['http://h.test/a/ok']);
    assert.equal(r.dropped.length, 1);
    assert.equal(r.dropped[0]!.reason, DROP_REASONS.tooLong);
    assert.equal(r.dropped[0]!.url.length, 2048);
  });
});
