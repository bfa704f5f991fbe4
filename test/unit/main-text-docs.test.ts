// Main text on real documentation pages (test/fixtures/extraction/docs: pages of Debian's doc
// packages, trimmed; their sources and licences are in that folder's README): what a reader of
// each page came for is in the main text, the site's navigation is not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { extractHtml } from '../../stages/extract/extract-html.js';

const DOCS = path.resolve(process.cwd(), 'test/fixtures/extraction/docs');

function mainLines(file: string): string[] {
  const html = readFileSync(path.join(DOCS, file), 'utf8');
  const page = extractHtml(html, `https://docs.example/${file}`);
  assert.equal(page.textSource, 'main', file);
  return page.mainText.split('\n');
}

/** Every one of `lines` is a line of the main text. */
function assertHas(main: readonly string[], lines: readonly string[]): void {
  for (const line of lines) assert.ok(main.includes(line), `main text lacks ${JSON.stringify(line)}:\n${main.join('\n')}`);
}

/** No line of the main text contains any of `parts`. */
function assertLacks(main: readonly string[], parts: readonly string[]): void {
  for (const part of parts) {
    const found = main.find((l) => l.includes(part));
    assert.equal(found, undefined, `main text has ${JSON.stringify(part)} (in ${JSON.stringify(found)})`);
  }
}

describe('main text on documentation pages', () => {
  it('a chapter that is only its table of contents keeps the table (PostgreSQL, DocBook)', () => {
    const main = mainLines('postgresql-gin.html');
    assertHas(main, ['70.1. Introduction', '70.4. Implementation', '70.4.1. GIN Fast Update Technique', '70.7. Examples']);
    // the navigation header and footer: Prev / Up / Home / Next and the neighbours' titles
    assertLacks(main, ['Prev', 'Part VII. Internals', '69.5. Examples']);
  });

  it('a reference table keeps the paragraphs around it (PostgreSQL system catalog)', () => {
    const main = mainLines('postgresql-catalog-pg-opfamily.html');
    assert.match(main.join('\n'), /^The catalog pg_opfamily defines operator families\./);
    assertHas(main, ['opfmethod oid (references pg_am.oid)', 'Name of this operator family']);
    assert.ok(main.some((l) => l.startsWith('The majority of the information defining an operator family is not in its pg_opfamily row')));
    assertLacks(main, ['53.34. pg_operator', 'Prev']);
  });

  it("an index page keeps its opening paragraphs and its table of contents, not the sidebar (Python's library index, Sphinx)", () => {
    const main = mainLines('python-library-index.html');
    assert.ok(main.some((l) => l.startsWith('Python’s standard library is very extensive')));
    assertHas(main, ['Built-in Functions', 'Built-in Types', 'Text Processing Services', 're — Regular expression operations', 'tomllib — Parse TOML files']);
    assertLacks(main, ['Previous topic', 'Report a Bug', 'Show Source', '3.11.2 Documentation »', '© Copyright']);
  });

  it('a short page keeps its one paragraph rather than the longer footer (Python, Sphinx)', () => {
    const main = mainLines('python-using-editors.html');
    assert.ok(main[0]!.startsWith('There are a number of IDEs that support Python programming language.'), main.join('\n'));
    assertLacks(main, ['© Copyright', 'Python Software Foundation', 'Previous topic']);
  });

  it("an API index keeps its list of modules once, not the template token before it nor the version picker (Node.js)", () => {
    const main = mainLines('nodejs-api-index.html');
    assertHas(main, ['About this documentation', 'Assertion testing', 'File system', 'Zlib']);
    // the navigation column repeats the list: the main text has it once
    assert.equal(main.filter((l) => l === 'Assertion testing').length, 1);
    assertLacks(main, ['__JS_FLAVORED_DYNAMIC_CSS__', 'Other versions', '17.x', 'View on single page']);
  });

  it("a section keeps its sidebar box of prose, not the book's navigation (Debian handbook, Publican)", () => {
    const main = mainLines('debian-handbook-office-suites.html');
    assert.ok(main.some((l) => l.startsWith('Office software has long been seen as lacking in the free software world.')));
    // a DocBook <sidebar> is a div.sidebar in the text's flow
    assertHas(main, ['THE BROADER VIEW LibreOffice replaces OpenOffice.org']);
    assert.ok(main.some((l) => l.startsWith('OpenOffice.org contributors set up a foundation (The Document Foundation)')));
    assertLacks(main, ['Download the ebook', 'Prev', 'Next13.8.']);
  });

  it('a manual page keeps all its sections, not only the longest (git, AsciiDoc)', () => {
    const main = mainLines('git-http-push.html');
    assertHas(main, ['SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'Sends missing objects to remote repository, and updates the remote branch.']);
    assert.ok(main.some((l) => l.startsWith('Optionally, a <ref> parameter can be prefixed with a plus + sign')));
    assertLacks(main, ['Last updated']);
  });
});
