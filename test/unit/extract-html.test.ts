import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { extractHtml, MAX_ANCHOR_TEXT } from '../../stages/extract/extract-html.js';
import { type ExtractedLink } from '../../stages/extract/page-parts.js';
import { collapseChunks, collapseChunksAndRanges, collapseWhitespace, normalizeLanguage } from '../../stages/extract/metadata.js';
import { mulberry32 } from '../../testweb/prng.js';

const PAGE = 'https://example.com/dir/page.html?q=1';

/** the test web's seeded PRNG: the same seed, the same cases */
const prng = mulberry32;

function body(inner: string, head = ''): string {
  return `<!doctype html><html><head>${head}</head><body>${inner}</body></html>`;
}

function urls(links: ExtractedLink[]): string[] {
  return links.map((l) => l.url);
}

describe('extractHtml: metadata', () => {
  it('extracts title, collapsing whitespace and decoding entities', () => {
    const r = extractHtml(body('', '<title>\n  Fish &amp;  Chips\t</title>'), PAGE);
    assert.equal(r.title, 'Fish & Chips');
  });

  it('title is empty when missing, first title wins, svg <title> is ignored', () => {
    assert.equal(extractHtml(body('<p>x</p>'), PAGE).title, '');
    assert.equal(extractHtml(body('<title>second</title>', '<title>first</title>'), PAGE).title, 'first');
    const svg = extractHtml(body('<svg><title>tooltip</title></svg><p>hi</p>'), PAGE);
    assert.equal(svg.title, '');
    assert.equal(svg.text, 'hi');
  });

  const robotsCases: Array<[string, string, { noindex: boolean; nofollow: boolean }]> = [
    ['none present', '', { noindex: false, nofollow: false }],
    ['noindex', '<meta name="robots" content="noindex">', { noindex: true, nofollow: false }],
    ['nofollow uppercase', '<meta name="ROBOTS" content="NOFOLLOW">', { noindex: false, nofollow: true }],
    ['both comma separated', '<meta name="robots" content="noindex, nofollow">', { noindex: true, nofollow: true }],
    ['none means both', '<meta name="robots" content="None">', { noindex: true, nofollow: true }],
    ['index,follow', '<meta name="robots" content="index,follow">', { noindex: false, nofollow: false }],
    ['other tokens', '<meta name="robots" content="max-snippet:-1, noarchive">', { noindex: false, nofollow: false }],
    ['googlebot ignored', '<meta name="googlebot" content="noindex,nofollow">', { noindex: false, nofollow: false }],
    [
      'multiple tags accumulate',
      '<meta name="robots" content="noindex"><meta name="robots" content="nofollow">',
      { noindex: true, nofollow: true },
    ],
    ['in body still counts', '</head><body><meta name="robots" content="noindex">', { noindex: true, nofollow: false }],
  ];
  for (const [name, head, expected] of robotsCases) {
    it(`meta robots: ${name}`, () => {
      assert.deepEqual(extractHtml(body('<p>x</p>', head), PAGE).metaRobots, expected);
    });
  }

  // a meta named by the crawler's token applies beside name="robots"; one for another bot does not
  const namedCases: Array<[string, string, { noindex: boolean; nofollow: boolean }, Array<{ source: string; rules: string[] }>]> = [
    ['ours, any case', '<meta name="ExampleBot" content="NoIndex">', { noindex: true, nofollow: false }, [{ source: 'meta examplebot', rules: ['noindex'] }]],
    ['another bot', '<meta name="googlebot" content="noindex, nofollow">', { noindex: false, nofollow: false }, []],
    [
      'ours and robots together: the most restrictive wins',
      '<meta name="robots" content="index, follow, noarchive"><meta name="examplebot" content="nofollow">',
      { noindex: false, nofollow: true },
      [{ source: 'meta robots', rules: ['index', 'follow', 'noarchive'] }, { source: 'meta examplebot', rules: ['nofollow'] }],
    ],
    ['two tags of one name are one group', '<meta name="examplebot" content="noindex"><meta name="examplebot" content="nofollow">', { noindex: true, nofollow: true }, [{ source: 'meta examplebot', rules: ['noindex', 'nofollow'] }]],
    ['a name that only starts with ours', '<meta name="examplebot-news" content="noindex">', { noindex: false, nofollow: false }, []],
  ];
  for (const [name, head, expected, groups] of namedCases) {
    it(`meta named for the crawler: ${name}`, () => {
      const r = extractHtml(body('<p>x</p>', head), PAGE, { robotsToken: 'examplebot' });
      assert.deepEqual(r.metaRobots, expected);
      assert.deepEqual(r.robotsMeta, groups);
    });
  }
  it('without a token, only name="robots" counts (and a nameless meta is nobody\'s)', () => {
    assert.deepEqual(extractHtml(body('<p>x</p>', '<meta name="examplebot" content="noindex"><meta name="" content="none">'), PAGE).metaRobots, { noindex: false, nofollow: false });
  });

  const langCases: Array<[string, string, string | null]> = [
    ['<html lang="en">', '', 'en'],
    ['<html lang="EN-US">', '', 'en-us'],
    ['<html lang="pt_BR">', '', 'pt-br'],
    ['<html lang=" zh-Hant-TW ">', '', 'zh-hant-tw'],
    ['<html>', '<meta http-equiv="Content-Language" content="de, en">', 'de'],
    ['<html lang="">', '<meta http-equiv="content-language" content="fr">', 'fr'],
    ['<html lang="!!">', '<meta http-equiv="content-language" content="fr-CA">', 'fr-ca'],
    ['<html lang="en">', '<meta http-equiv="content-language" content="fr">', 'en'],
    ['<html>', '', null],
  ];
  for (const [htmlTag, head, expected] of langCases) {
    it(`language: ${htmlTag} ${head} -> ${expected}`, () => {
      const doc = `<!doctype html>${htmlTag}<head>${head}</head><body>x</body></html>`;
      assert.equal(extractHtml(doc, PAGE).language, expected);
    });
  }

  it('normalizeLanguage rejects junk', () => {
    assert.equal(normalizeLanguage('en'), 'en');
    assert.equal(normalizeLanguage('e'), null);
    assert.equal(normalizeLanguage('en us'), null);
    assert.equal(normalizeLanguage(null), null);
  });

  it('description from meta name=description, og:description as fallback, empty -> null', () => {
    assert.equal(
      extractHtml(body('', '<meta name="Description" content="  A  page\nabout fish ">'), PAGE).description,
      'A page about fish',
    );
    assert.equal(
      extractHtml(body('', '<meta property="og:description" content="og text">'), PAGE).description,
      'og text',
    );
    assert.equal(
      extractHtml(body('', '<meta property="og:description" content="og"><meta name="description" content="d">'), PAGE)
        .description,
      'd',
    );
    assert.equal(extractHtml(body('', '<meta name="description" content="   ">'), PAGE).description, null);
    assert.equal(extractHtml(body(''), PAGE).description, null);
  });

  it('canonical: resolved against base, first wins, rel token list, non-http ignored', () => {
    assert.equal(extractHtml(body('', '<link rel="canonical" href="/c">'), PAGE).canonicalUrl, 'https://example.com/c');
    assert.equal(
      extractHtml(body('', '<link rel="Canonical" href="../x#f"><link rel="canonical" href="/y">'), PAGE).canonicalUrl,
      'https://example.com/x#f',
    );
    assert.equal(
      extractHtml(body('', '<base href="https://cdn.example.org/a/"><link rel="alternate canonical" href="b">'), PAGE)
        .canonicalUrl,
      'https://cdn.example.org/a/b',
    );
    assert.equal(extractHtml(body('', '<link rel="canonical" href="javascript:x">'), PAGE).canonicalUrl, null);
    assert.equal(extractHtml(body('', '<link rel="canonical" href="ftp://x/">'), PAGE).canonicalUrl, null);
    assert.equal(extractHtml(body('', '<link rel="stylesheet" href="/s.css">'), PAGE).canonicalUrl, null);
    assert.equal(extractHtml(body(''), PAGE).canonicalUrl, null);
  });
});

describe('whitespace collapsing', () => {
  const reference = (pieces: string[], lineBreaks: boolean) =>
    pieces
      .join('')
      .replace(/[\s\x00-\x1f]+/g, (m) => (lineBreaks && m.includes('\u0000') ? '\n' : ' '))
      .trim();

  it('collapseWhitespace: table', () => {
    assert.equal(collapseWhitespace('  a  b\n c '), 'a b c');
    assert.equal(collapseWhitespace('x\u00a0\u3000y\tz'), 'x y z');
    assert.equal(collapseWhitespace(' \u0000 '), '');
    assert.equal(collapseWhitespace('a\u0000b'), 'a b');
    assert.equal(collapseWhitespace('a\u0000 b', true), 'a\nb');
  });

  it('collapseChunks matches a regex reference on random pieces (seeded)', () => {
    const rnd = prng(99);
    const alphabet = ['a', 'b', 'é', ' ', ' ', '\n', '\t', '\u00a0', '\u0000', '\u2003', 'x', '\u200b'];
    for (let n = 0; n < 3000; n++) {
      const pieces: string[] = [];
      const count = Math.floor(rnd() * 6);
      for (let p = 0; p < count; p++) {
        let piece = '';
        const len = Math.floor(rnd() * 8);
        for (let i = 0; i < len; i++) piece += alphabet[Math.floor(rnd() * alphabet.length)];
        pieces.push(piece);
      }
      for (const lineBreaks of [false, true]) {
        const grouped = pieces.map((p) => (p.length > 2 ? [p.slice(0, 2), p.slice(2)] : [p]));
        assert.equal(collapseChunks(grouped, lineBreaks), reference(pieces, lineBreaks), JSON.stringify(pieces));
      }
    }
  });

  it('collapseChunksAndRanges gives the full text and each range collapsed on its own (seeded)', () => {
    const rnd = prng(7);
    const alphabet = ['a', 'b', ' ', ' ', '\n', '\t', '\u00a0', '\u0000', '\u0000', 'x', '\u3000'];
    for (let n = 0; n < 3000; n++) {
      const groups: string[][] = [];
      const count = Math.floor(rnd() * 10);
      for (let g = 0; g < count; g++) {
        const group: string[] = [];
        for (let p = Math.floor(rnd() * 3); p >= 0; p--) {
          let piece = '';
          for (let i = Math.floor(rnd() * 5); i > 0; i--) piece += alphabet[Math.floor(rnd() * alphabet.length)];
          group.push(piece);
        }
        groups.push(group);
      }
      // ordered, non-overlapping ranges, some empty, some with gaps between them
      const ranges: { start: number; end: number }[] = [];
      for (let at = 0; at <= count; ) {
        const start = at + Math.floor(rnd() * 2);
        const end = Math.min(count, start + Math.floor(rnd() * 4));
        if (start > count) break;
        ranges.push({ start, end });
        at = end + (end === start ? 1 : 0);
      }
      const { text, rangeTexts } = collapseChunksAndRanges(groups, ranges);
      const what = JSON.stringify({ groups, ranges });
      assert.equal(text, collapseChunks(groups, true), what);
      assert.deepEqual(rangeTexts, ranges.map((r) => collapseChunks(groups, false, r.start, r.end)), what);
    }
  });
});

describe('extractHtml: visible text', () => {
  it('excludes script, style, template, noscript, head, iframe content', () => {
    const html = body(
      '<p>one</p><script>var x = "<p>nope</p>";</script><style>p{}</style><template><p>tpl</p></template>' +
        '<noscript><p>ns</p></noscript><iframe>fallback</iframe><p>two</p>',
      '<title>T</title><style>.a{}</style><script>s()</script>',
    );
    assert.equal(extractHtml(html, PAGE).text, 'one\ntwo');
  });

  it('separates blocks by newline, keeps inline runs together, collapses whitespace', () => {
    const html = body(
      '<h1>  Big\n  Title </h1><div>para <b>bold</b><i>ital</i>  end</div>' +
        '<ul><li>a</li><li>b</li></ul>line<br>break<p>&nbsp;x&lt;y&nbsp;</p><div><div></div></div>',
    );
    assert.equal(extractHtml(html, PAGE).text, 'Big Title\npara boldital end\na\nb\nline\nbreak\nx<y');
  });

  it('separates table cells with spaces and rows with newlines', () => {
    const html = body('<table><tr><th>h1</th><th>h2</th></tr><tr><td>a</td><td>b</td></tr></table>');
    assert.equal(extractHtml(html, PAGE).text, 'h1 h2\na b');
  });

  it('skips hidden and display:none subtrees but still extracts their links', () => {
    const html = body(
      '<p>shown</p><div hidden>secret <a href="/h">h</a></div><div style="color:red; display: none">' +
        'gone</div><div hidden="until-found">findable</div>',
    );
    const r = extractHtml(html, PAGE);
    assert.equal(r.text, 'shown\nfindable');
    assert.deepEqual(urls(r.links), ['https://example.com/h']);
  });

  it('empty document gives empty text', () => {
    const r = extractHtml('', PAGE);
    assert.equal(r.text, '');
    assert.equal(r.title, '');
    assert.deepEqual(r.links, []);
  });
});

describe('extractHtml: links', () => {
  it('resolves relative hrefs against the page URL, keeps fragments, in document order', () => {
    const r = extractHtml(
      body('<a href="b.html">B</a><a href="/root#frag">R</a><a href="//other.org/x">O</a><a href="?p=2">Q</a>'),
      PAGE,
    );
    assert.deepEqual(urls(r.links), [
      'https://example.com/dir/b.html',
      'https://example.com/root#frag',
      'https://other.org/x',
      'https://example.com/dir/page.html?p=2',
    ]);
    assert.deepEqual(r.links[0], { url: 'https://example.com/dir/b.html', anchorText: 'B', rel: '', source: 'a' });
  });

  it('uses the first <base href>, itself resolved against the page URL, even when it appears late', () => {
    const head = '<base href="/base/"><base href="https://ignored.example/">';
    assert.deepEqual(urls(extractHtml(body('<a href="x">x</a>', head), PAGE).links), ['https://example.com/base/x']);
    const late = '<a href="x">x</a><base href="https://late.example/p/">';
    assert.deepEqual(urls(extractHtml(body(late), PAGE).links), ['https://late.example/p/x']);
    // base without href is ignored; invalid or javascript: base falls back to the page URL
    assert.deepEqual(urls(extractHtml(body('<a href="x">x</a>', '<base target="_top">'), PAGE).links), [
      'https://example.com/dir/x',
    ]);
    assert.deepEqual(urls(extractHtml(body('<a href="x">x</a>', '<base href="http://[::1">'), PAGE).links), [
      'https://example.com/dir/x',
    ]);
    assert.deepEqual(urls(extractHtml(body('<a href="x">x</a>', '<base href="javascript:void(0)/">'), PAGE).links), [
      'https://example.com/dir/x',
    ]);
  });

  it('skips javascript:, mailto:, tel:, data:, empty and invalid hrefs, and anchors without href', () => {
    const html = body(
      '<a href="javascript:void(0)">j</a><a href=" JavaScript:alert(1)">J</a><a href="java\tscript:x">t</a>' +
        '<a href="mailto:a@b.c">m</a><a href="TEL:+123">t</a><a href="data:text/html,hi">d</a>' +
        '<a href="">e</a><a href="   ">w</a><a href="http://[bad">i</a><a href="https://">h</a>' +
        '<a name="anchor">n</a><a href="ok">ok</a>',
    );
    assert.deepEqual(urls(extractHtml(html, PAGE).links), ['https://example.com/dir/ok']);
  });

  it('keeps rel lowercased (nofollow links are kept), area links with alt text', () => {
    const html = body(
      '<a href="/n" rel="NoFollow  UGC">n</a><map name="m"><area href="/area" alt=" Area  one " rel="nofollow">' +
        '<area nohref alt="none"></map>',
    );
    assert.deepEqual(extractHtml(html, PAGE).links, [
      { url: 'https://example.com/n', anchorText: 'n', rel: 'nofollow ugc', source: 'a' },
      { url: 'https://example.com/area', anchorText: 'Area one', rel: 'nofollow', source: 'area' },
    ]);
  });

  it('anchor text: whitespace collapsed, includes nested elements and img alt, capped at 500', () => {
    const long = 'word '.repeat(300);
    const html = body(
      '<a href="/a">  Read\n <b>more</b> <img src="x.png" alt="arrow"> </a>' +
        '<a href="/img"><img src="logo.png" alt="Logo"></a><a href="/long">' +
        long +
        '</a><a href="/blocks"><div>one</div><div>two</div></a>',
    );
    const links = extractHtml(html, PAGE).links;
    assert.equal(links[0]!.anchorText, 'Read more arrow');
    assert.equal(links[1]!.anchorText, 'Logo');
    assert.ok(links[2]!.anchorText.length <= MAX_ANCHOR_TEXT);
    assert.ok(links[2]!.anchorText.startsWith('word word'));
    assert.equal(links[3]!.anchorText, 'one two');
  });

  it('de-duplicates exact (url, anchorText, rel) triples only', () => {
    const html = body(
      '<a href="/x">X</a><a href="https://example.com/x">X</a><a href="/x">other</a>' +
        '<a href="/x" rel="nofollow">X</a><a href="/x#f">X</a><a href="/x">X</a>',
    );
    const links = extractHtml(html, PAGE).links;
    assert.deepEqual(
      links.map((l) => [l.url, l.anchorText, l.rel]),
      [
        ['https://example.com/x', 'X', ''],
        ['https://example.com/x', 'other', ''],
        ['https://example.com/x', 'X', 'nofollow'],
        ['https://example.com/x#f', 'X', ''],
      ],
    );
  });

  it('ignores links inside <template> and script, finds links inside <noscript>', () => {
    const html = body(
      '<template><a href="/tpl">t</a></template><script>document.write("<a href=/js>j</a>")</script>' +
        '<noscript><a href="/ns">No <b>script</b></a></noscript><a href="/after">after</a>',
      '<noscript><link rel="canonical" href="/ns-canon"><meta name="robots" content="noindex"></noscript>',
    );
    const r = extractHtml(html, PAGE);
    assert.deepEqual(
      r.links.map((l) => [l.url, l.anchorText]),
      [
        ['https://example.com/ns', 'No script'],
        ['https://example.com/after', 'after'],
      ],
    );
    assert.equal(r.text, 'after');
    assert.equal(r.canonicalUrl, null);
    assert.equal(r.metaRobots.noindex, false);
  });

  it('with an invalid page URL keeps absolute links and drops relative ones', () => {
    const r = extractHtml(body('<a href="/rel">r</a><a href="https://abs.example/">a</a>'), 'not a url');
    assert.deepEqual(urls(r.links), ['https://abs.example/']);
  });

  it('handles unquoted/malformed attributes and unclosed anchors like a browser', () => {
    const r = extractHtml('<a href=/one>first<a href=/two>second<p>para', PAGE);
    assert.deepEqual(
      r.links.map((l) => [l.url, l.anchorText]),
      [
        ['https://example.com/one', 'first'],
        ['https://example.com/two', 'second para'],
      ],
    );
  });
});

describe('extractHtml: robustness', () => {
  const SAMPLE = body(
    '<h1 class="x">Hello &amp; welcome</h1><p>Some <a href="/a?x=1&amp;y=2" rel="nofollow">text</a>' +
      '<!-- comment --> more</p><table><tr><td><img src=x alt="i"></td></tr></table><script>if (a<b) {}</script>' +
      '<svg viewBox="0 0 1 1"><a href="/svg"><text>svg</text></a></svg><math><mi>x</mi></math>' +
      '<select><option>o</option></select><textarea><a href="no">t</a></textarea>',
    '<title>T</title><meta name="robots" content="noindex"><base href="/b/"><link rel=canonical href=/c>',
  );

  function checkShape(html: string, pageUrl = PAGE): void {
    const r = extractHtml(html, pageUrl);
    assert.equal(typeof r.title, 'string');
    assert.equal(typeof r.text, 'string');
    assert.ok(Array.isArray(r.links));
    for (const l of r.links) {
      assert.ok(URL.canParse(l.url), l.url);
      assert.ok(l.anchorText.length <= MAX_ANCHOR_TEXT);
      assert.ok(['a', 'area', 'link-alternate', 'link-next', 'link-prev', 'iframe', 'meta-refresh'].includes(l.source));
    }
  }

  it('never throws on truncated HTML (every prefix of a sample page)', () => {
    for (let i = 0; i <= SAMPLE.length; i++) checkShape(SAMPLE.slice(0, i));
  });

  it('never throws on random garbage (seeded)', () => {
    const rnd = prng(0xc0ffee);
    const alphabet = '<>/="\'&;#!- \n\tabcdehilmnoprstxyzABC0123\u0000\u00a0\ud800\udc00é漢';
    const fragments = ['<a href=', '<area href="', '</a>', '<base href=', '<html lang=', '<meta name=robots content=',
      '<!--', '-->', '<![CDATA[', '<script>', '</script', '<template>', '<noscript>', '<table>', '<svg>', '<math>',
      '&amp', '&#x', '&#', 'javascript:', '//', '<title>', '<textarea>', '<plaintext>', '<select>', '<frameset>'];
    for (let n = 0; n < 1500; n++) {
      let s = '';
      const len = Math.floor(rnd() * 300);
      while (s.length < len) {
        s += rnd() < 0.3
          ? fragments[Math.floor(rnd() * fragments.length)]
          : alphabet[Math.floor(rnd() * alphabet.length)];
      }
      checkShape(s, rnd() < 0.1 ? '::bad::' : PAGE);
    }
  });

  it('never throws on random byte soup decoded as latin1', () => {
    const rnd = prng(42);
    for (let n = 0; n < 200; n++) {
      const bytes = new Uint8Array(Math.floor(rnd() * 2000));
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(rnd() * 256);
      checkShape(Buffer.from(bytes).toString('latin1'));
    }
  });

  it('does not blow the stack on 100k nested divs (and 100k nested spans)', () => {
    const depth = 100_000;
    const divs = '<div>'.repeat(depth) + '<a href="/deep">deep text</a>' + '</div>'.repeat(depth);
    const r = extractHtml(divs, PAGE);
    assert.equal(r.text, 'deep text');
    assert.deepEqual(urls(r.links), ['https://example.com/deep']);
    const spans = '<span>'.repeat(depth) + 'inner';
    assert.equal(extractHtml(spans, PAGE).text, 'inner');
  });
});
