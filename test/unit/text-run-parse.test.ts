import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultTreeAdapter, parse, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import { parseDocument } from '../../stages/extract/text-run-parse.js';
import { chunkedTextAdapter, type ChunkedTextNode } from '../../stages/extract/chunked-text-adapter.js';
import { loadBenchmarkPages } from '../../scripts/article-benchmark.js';

const stock = (html: string) => serialize(parse(html));
const runs = (html: string) => serialize(parseDocument(html, { treeAdapter: defaultTreeAdapter }));

/** Inputs where parse5 treats whitespace apart from other text, or text goes somewhere unusual. */
const TRICKY = [
  ' \n <!doctype html> \n<html> <head> <title> a  b </title> \n</head> \n <body> x y </body> \n</html> \n z \n',
  'text before <html> and after </html> and after that',
  '<table> a b <tr> c d <td> e f </td> g h </tr> </table>',
  '<table>\n  <tr>\n    <td>one two</td>\n  </tr>\n  x y\n</table>',
  '<table><colgroup> <col> a b </colgroup></table>',
  '<table><caption> a b </caption><tbody> c <tr><th> d e',
  '<pre>\nfirst line\n  second</pre><textarea>\n\n a b </textarea><listing>\nx y</listing>',
  '<select> a b <option> c d </option> <optgroup> e </optgroup></select><table><tr><td><select> f g </select>',
  '<p>a <svg> b c <text> d e </text> <foreignObject> f g <p> h </p></foreignObject></svg> i</p><math><mi> j k </mi></math>',
  '<frameset> a b <frame> \n c </frameset> d \n e <noframes> f g </noframes>',
  '<head> <noscript> a b </noscript> <style> p { a: b } </style> <script> if (a < b) c(); </script> </head>',
  '<template> a b <td> c d </td> </template> e',
  'a&amp; b &nbsp; c &lt;d&gt; &#32; e &notit; f\r\ng\rh\r\n',
  'a\u0000 b \u0000\u0000 c <p>\u0000 d</p><table>\u0000 e</table>',
  '<p>one<b>two <i>three</b> four</i> five</p><p>six <a href=x>seven <a href=y>eight</a> nine',
  '<!-- a b --> c <!-- d e --> <p> f <!----> g',
  '<body><plaintext> a b <p> c d',
  '<div>a\tb\fc\nd e</div>',
  '<ruby> a <rb> b c <rt> d e </ruby>',
];

describe('parseDocument: parse5 with a text run as one token', () => {
  it('builds the tree parse5 builds, on inputs where parse5 treats whitespace apart', () => {
    for (const html of TRICKY) assert.equal(runs(html), stock(html), JSON.stringify(html));
  });

  it('builds the tree parse5 builds, on random documents of tags, text, whitespace and references', () => {
    const parts = ['<p>', '</p>', '<table>', '<tr>', '<td>', '</td>', '</table>', '<pre>', '</pre>', '<select>', '<option>',
      '<svg>', '</svg>', '<b>', '</b>', '<i>', '<frameset>', '<head>', '</head>', '<body>', '</body>', '</html>', '<textarea>',
      '</textarea>', '<colgroup>', '<caption>', '<template>', '</template>', '<script>', '</script>', '<!-- c -->',
      'word', 'two words', ' ', '  ', '\n', '\t', '\r\n', '&amp;', '&nbsp;', '\u0000', 'é ü'];
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let doc = 0; doc < 3000; doc++) {
      let html = '';
      const n = 1 + (next() % 30);
      for (let k = 0; k < n; k++) html += parts[next() % parts.length];
      assert.equal(runs(html), stock(html), JSON.stringify(html));
    }
  });

  it('builds the tree parse5 builds, on the 121 real pages of the public article benchmark', () => {
    const pages = loadBenchmarkPages();
    assert.equal(pages.length, 121);
    for (const p of pages) assert.ok(runs(p.html) === stock(p.html), p.id);
  });

  it("hands a paragraph's words and spaces to the tree as one piece, not one a word and one a space", () => {
    const doc = parseDocument('<p>three short words</p>', { treeAdapter: chunkedTextAdapter });
    const body = doc.childNodes[0] as DefaultTreeAdapterTypes.Element;
    const p = (body.childNodes[1] as DefaultTreeAdapterTypes.Element).childNodes[0] as DefaultTreeAdapterTypes.Element;
    assert.deepEqual((p.childNodes[0] as ChunkedTextNode).chunks, ['three short words']);
    const stockDoc = parse('<p>three short words</p>', { treeAdapter: chunkedTextAdapter });
    const stockP = ((stockDoc.childNodes[0] as DefaultTreeAdapterTypes.Element).childNodes[1] as DefaultTreeAdapterTypes.Element)
      .childNodes[0] as DefaultTreeAdapterTypes.Element;
    assert.deepEqual((stockP.childNodes[0] as ChunkedTextNode).chunks, ['three', ' ', 'short', ' ', 'words']);
  });
});
