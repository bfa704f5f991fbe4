import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { extractHtml } from '../../stages/extract/extract-html.js';
import { Walker } from '../../stages/extract/html-walker.js';
import { parseDocument } from '../../stages/extract/text-run-parse.js';
import { chunkedTextAdapter } from '../../stages/extract/chunked-text-adapter.js';
import { documentBaseUrl, resolveHref } from '../../stages/extract/links.js';
import { loadBenchmarkPages } from '../../scripts/article-benchmark.js';

const PAGE = 'https://example.com/dir/page.html';

/**
 * The markdown of every text block of a page made of `inner`: the rendering alone, whatever
 * main-text selection would keep of so small a page (extractHtml renders the blocks it keeps).
 */
function markdownOf(inner: string, head = ''): string {
  const walker = new Walker();
  walker.walk(parseDocument(`<!doctype html><html><head>${head}</head><body>${inner}</body></html>`, { treeAdapter: chunkedTextAdapter }));
  walker.texts();
  const all = walker.layout.blocks.flatMap((b, i) => (b.chars > 0 ? [i] : []));
  const base = documentBaseUrl(walker.baseHref, PAGE);
  return walker.markdown(all, (href) => resolveHref(href, base));
}

/** The words of markdown with its markup taken off: what `text` has, in the same order. */
function markdownWords(md: string): string[] {
  const plain = md
    .replace(/\]\((?:\\.|[^)\\])*\)/g, '') // link targets
    .replace(/^(?:> ?)+/gm, '')
    .replace(/^\s*(?:- |\d+\. )*(?:#{1,6} )?/gm, '')
    .replace(/^`{3,}.*$/gm, '')
    .replace(/^\|(?: --- \|)+$/gm, '')
    .replace(/\\([\\[\]|`.#>+*=_()-])/g, '$1');
  return words(plain);
}
const words = (s: string) => s.replace(/[[\]|`]/g, '').split(/\s+/).filter((w) => w.length > 0);

describe('markdown of the main text: one construct at a time', () => {
  it('headings get their level in #, paragraphs a blank line between them', () => {
    assert.equal(markdownOf('<h2>Part one</h2><p>First.</p><h3>Detail</h3><p>Second.</p>'), '## Part one\n\nFirst.\n\n### Detail\n\nSecond.');
  });

  it('lists: - for unordered, numbers for ordered (from `start`), nested ones indented under their item', () => {
    assert.equal(
      markdownOf('<ul><li>Apples</li><li>Pears<ol start="3"><li>Conference</li><li>Comice</li></ol></li><li>Plums</li></ul>'),
      '- Apples\n- Pears\n  3. Conference\n  4. Comice\n- Plums',
    );
  });

  it('an item of several paragraphs keeps them in the item, indented', () => {
    assert.equal(markdownOf('<ol><li><p>Step one.</p><p>More on it.</p></li><li>Step two.</li></ol>'), '1. Step one.\n\n   More on it.\n2. Step two.');
  });

  it('links: [text](absolute URL), resolved against <base>; no text or a javascript: href gives no link; brackets in the text escaped', () => {
    assert.equal(
      markdownOf('<p>See <a href="../other.html">the other page</a>, <a href="https://x.org/a(1)">one (paren)</a>, <a href="javascript:void(0)">a script</a><a href="/e"> </a> and <a href="/b">[1]</a>.</p>'),
      'See [the other page](https://example.com/other.html), [one (paren)](https://x.org/a\\(1\\)), a script and [\\[1\\]](https://example.com/b).',
    );
    assert.equal(markdownOf('<p>Docs <a href="guide/">here</a>.</p>', '<base href="https://docs.example.org/v2/">'), 'Docs [here](https://docs.example.org/v2/guide/).');
  });

  it('the space at a link text’s ends goes outside the brackets', () => {
    assert.equal(markdownOf('<p>A<a href="/x"> spaced </a>word.</p>'), 'A [spaced](https://example.com/x) word.');
  });

  it('inline code in backticks (double ones around a backtick)', () => {
    assert.equal(markdownOf('<p>Call <code>run()</code> or <kbd>Ctrl</kbd>, quote with <code>a`b</code>.</p>'), 'Call `run()` or `Ctrl`, quote with `` a`b ``.');
  });

  it('pre: a fenced code block with its text as written and the language its class names', () => {
    assert.equal(
      markdownOf('<pre><code class="language-js">function f() {\n  return 1;\n}\n</code></pre>'),
      '```js\nfunction f() {\n  return 1;\n}\n```',
    );
    assert.equal(markdownOf('<pre>a ```\n  b</pre>'), '````\na ```\n  b\n````');
  });

  it('data tables as GFM pipe tables: the first row the header, missing cells empty, | escaped', () => {
    assert.equal(
      markdownOf('<table><thead><tr><th>Name</th><th>Value</th><th>Note</th></tr></thead><tbody><tr><td>a</td><td>1|2</td><td></td></tr><tr><td><a href="/b">b</a></td><td>3</td><td>ok</td></tr></tbody></table>'),
      '| Name | Value | Note |\n| --- | --- | --- |\n| a | 1\\|2 |  |\n| [b](https://example.com/b) | 3 | ok |',
    );
  });

  it('a cell of one paragraph (as word processors write them) is still a data cell', () => {
    assert.equal(markdownOf('<table><tr><td><p>Key</p></td><td><p>Value</p></td></tr><tr><td><p>a</p></td><td><div>1</div></td></tr></table>'), '| Key | Value |\n| --- | --- |\n| a | 1 |');
  });

  it('a table that lays out the page (cells of several paragraphs, lists, tables; one column) gives paragraphs', () => {
    assert.equal(
      markdownOf('<table><tr><td><p>Left column.</p><p>More of it.</p></td><td><p>Right column text.</p></td></tr></table>'),
      'Left column.\n\nMore of it.\n\nRight column text.',
    );
    assert.equal(markdownOf('<table><tr><td><ul><li>Menu</li></ul></td><td>Body</td></tr></table>'), '- Menu\n\nBody');
    assert.equal(markdownOf('<table><tr><td>Only</td></tr><tr><td>one column</td></tr></table>'), 'Only\n\none column');
  });

  it('blockquotes: > before each line, nested quotes and lists inside them', () => {
    assert.equal(
      markdownOf('<blockquote><p>Said once.</p><p>Said twice.</p><blockquote>Inner.</blockquote><ul><li>x</li></ul></blockquote>'),
      '> Said once.\n>\n> Said twice.\n>\n> > Inner.\n>\n> - x',
    );
  });

  it('text that markdown would read as markup is escaped at the start of a line', () => {
    assert.equal(markdownOf('<p>1. Not a list.</p><p># Not a heading</p><p>- nor an item</p><p>---</p>'), '1\\. Not a list.\n\n\\# Not a heading\n\n\\- nor an item\n\n\\---');
  });

  it('what main-text selection leaves out (navigation, footer) is not in the markdown either', () => {
    const prose = 'This paragraph is the article, long enough to count as prose, with a comma, and another one. '.repeat(4).trim();
    const html =
      '<html><head><title>T</title></head><body><nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul></nav>' +
      `<main><h1>Story</h1><h2>Start</h2><p>${prose}</p></main><footer><p>Copyright footer</p></footer></body></html>`;
    const doc = extractHtml(html, PAGE);
    assert.equal(doc.mainText, `Story\nStart\n${prose}`);
    assert.equal(doc.markdown, `# Story\n\n## Start\n\n${prose}`);
  });
});

describe('markdown of the main text: pathological markup', () => {
  it('thousands of nested lists and quotes, and a table of thousands of columns, give markdown a small multiple of the text', () => {
    const n = 5_000;
    const cases: Array<[string, string]> = [
      ['<ul><li>item text ', '</li></ul>'],
      ['<ol><li>item ', '</li></ol>'],
      ['<blockquote>quoted text ', '</blockquote>'],
      ['<table><tr><td>a</td><td>', '</td></tr></table>'],
    ];
    const pages = cases.map(([open, close]) => open.repeat(n) + close.repeat(n));
    pages.push(`<table><tr>${'<td>x</td>'.repeat(n)}</tr>${'<tr><td>y</td></tr>'.repeat(n)}</table>`);
    for (const html of pages) {
      const doc = extractHtml(html, PAGE);
      assert.ok(doc.mainText.length > n, html.slice(0, 30));
      // markers of every level on every line would make it thousands of times the text; at
      // most MAX_NESTING levels of markers make it a few times a short word's
      assert.ok(doc.markdown.length < 10 * doc.mainText.length, `${html.slice(0, 30)}: ${doc.markdown.length} characters of markdown for ${doc.mainText.length} of text`);
    }
  });
});

describe('markdown of the main text: the shared article benchmark', () => {
  const pages = loadBenchmarkPages();

  it('a sports article: its headings, tables, lists, links and quoted tweet as markdown', () => {
    const page = pages.find((p) => p.url.includes('browns-defensive-snap-counts'))!;
    const doc = extractHtml(page.html, page.url);
    const md = doc.markdown;
    assert.match(md, /^### Defensive Line\n\n\| Pos \| Player \| Plays \| % \| Stats \|\n\| --- \| --- \| --- \| --- \| --- \|\n/m);
    assert.match(md, /^\| DL \| Larry Ogunjobi \| 63 \| 85% \| 1 tackle \(1 combined\)\. 1 sack, 1 TFL, 2 QH\. \|$/m);
    assert.match(md, /^- There is a lot to sort through here\. .*\[Mason Rudolph\]\(https:\/\/www\.sbnation\.com\/nfl\/players\/300452\/mason-rudolph\)/m);
    assert.match(md, /^> \[#Browns\]\(https:\/\/twitter\.com\/hashtag\/Browns\?src=hash&ref_src=twsrc%5Etfw\) Greedy Williams/m);
    assert.equal((md.match(/^#{3} /gm) ?? []).length, 4);
    // the plain text is the one main-text selection made before markdown existed (its digest then)
    assert.equal(createHash('sha256').update(doc.mainText).digest('hex').slice(0, 16), 'b75c0872dfc3e2fd');
  });

  it('on every page the markdown has the words of `text`, in its order: only markup is added', () => {
    for (const page of pages) {
      const doc = extractHtml(page.html, page.url);
      assert.equal(markdownWords(doc.markdown).join(' '), words(doc.mainText).join(' '), page.id);
    }
  });
});
