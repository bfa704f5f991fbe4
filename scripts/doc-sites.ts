/**
 * Real documentation sites nobody here wrote, for measuring the main text on pages that are
 * not articles: the HTML of Debian's documentation packages (Sphinx, DocBook, Publican,
 * AsciiDoc, the Apache manual's XSLT, SQLite's and Node.js's own generators), read where
 * the packages put it. Nothing is copied into the project.
 *
 * Each site also names the element its generator marks as the page's body (`label`): used
 * ONLY to score the extractor's main text here, never by the extractor. "Right" is the
 * page's content area: the document's headings, prose, its own tables of contents and lists
 * of links, code blocks and tables; not the site's navigation bars, sidebars, search boxes,
 * prev/next links, language pickers and footers.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse, serializeOuter, type DefaultTreeAdapterTypes } from 'parse5';

type Element = DefaultTreeAdapterTypes.Element;
type ParentNode = DefaultTreeAdapterTypes.ParentNode;

/** Whether an element is the one meant (its parent given for "a child of body" rules). */
type Match = (el: Element, parent: Element | null) => boolean;

export interface DocSite {
  name: string;
  /** what made its HTML, and the Debian package that ships it */
  generator: string;
  packageName: string;
  /** the site's folder, relative to the root the packages are installed (or unpacked) under */
  dir: string;
  /** folders under `dir` that are not pages (static files, other languages) */
  skipDirs?: readonly string[];
  /** index pages and tables of contents always measured, beside the sample */
  always: readonly string[];
  /** the element holding the page's content (default: body), and what inside it is not content */
  label: { root?: Match; drop?: readonly Match[] };
}

const attr = (el: Element, name: string) => el.attrs.find((a) => a.name === name)?.value ?? null;
const classes = (el: Element) => (attr(el, 'class') ?? '').split(/\s+/);
const id = (value: string): Match => (el) => attr(el, 'id') === value;
const cls = (value: string, tag?: string): Match => (el) => (tag === undefined || el.tagName === tag) && classes(el).includes(value);
const role = (value: string): Match => (el) => attr(el, 'role') === value;
const tag = (value: string): Match => (el) => el.tagName === value;
const childOfBody = (m: Match): Match => (el, parent) => parent !== null && parent.tagName === 'body' && m(el, parent);

export const DOC_SITES: readonly DocSite[] = [
  {
    name: 'python',
    generator: 'Sphinx (classic theme)',
    packageName: 'python3.11-doc',
    dir: 'usr/share/doc/python3.11/html',
    skipDirs: ['_static', '_sources', '_downloads', '_images'],
    always: ['index.html', 'contents.html', 'genindex-A.html', 'py-modindex.html', 'library/index.html', 'tutorial/index.html'],
    label: { root: role('main') },
  },
  {
    name: 'django',
    generator: 'Sphinx (Django theme)',
    packageName: 'python-django-doc',
    dir: 'usr/share/doc/python-django-doc/html',
    skipDirs: ['_static', '_sources', '_images', '_modules'],
    always: ['index.html', 'contents.html', 'genindex.html', 'py-modindex.html', 'topics/index.html'],
    label: { root: id('yui-main') },
  },
  {
    name: 'devref',
    generator: 'Sphinx (Debian Developer\'s Reference)',
    packageName: 'developers-reference',
    dir: 'usr/share/developers-reference',
    skipDirs: ['_static', '_sources'],
    always: ['index.html'],
    label: { root: role('main') },
  },
  {
    name: 'postgresql',
    generator: 'DocBook XSL',
    packageName: 'postgresql-doc-15',
    dir: 'usr/share/doc/postgresql-doc-15/html',
    always: ['index.html', 'gin.html', 'sql-commands.html', 'bookindex.html', 'functions.html'],
    label: { drop: [cls('navheader'), cls('navfooter')] },
  },
  {
    name: 'handbook',
    generator: 'Publican (DocBook)',
    packageName: 'debian-handbook',
    dir: 'usr/share/doc/debian-handbook/html/en-US',
    skipDirs: ['Common_Content', 'images'],
    always: ['index.html', 'apt.html'],
    label: { drop: [id('banner'), id('title'), cls('docnav', 'ul')] },
  },
  {
    name: 'git',
    generator: 'AsciiDoc',
    packageName: 'git-doc',
    dir: 'usr/share/doc/git-doc',
    always: ['git.html', 'index.html', 'user-manual.html'],
    label: { drop: [id('footer')] },
  },
  {
    name: 'sqlite',
    generator: 'SQLite\'s own (Tcl)',
    packageName: 'sqlite3-doc',
    dir: 'usr/share/doc/sqlite3',
    skipDirs: ['images'],
    always: ['index.html', 'docs.html', 'lang.html', 'c3ref/funclist.html'],
    // the site's header (logo, menu, search) is the body's first div.nosearch; a page's own title block is another
    label: { drop: [(el, parent) => childOfBody(cls('nosearch', 'div'))(el, parent) && parent!.childNodes.find((c) => 'tagName' in c) === el, cls('rightsidebar'), cls('mobileonly')] },
  },
  {
    name: 'apache',
    generator: 'Apache manual XSLT',
    packageName: 'apache2-doc',
    dir: 'usr/share/doc/apache2-doc/manual/en',
    always: ['index.html', 'sitemap.html', 'mod/index.html', 'mod/directives.html'],
    // most pages hold their content in #page-content, the index pages straight in the body
    label: { drop: [id('page-header'), childOfBody(cls('up', 'div')), id('path'), cls('bottomlang'), id('footer')] },
  },
  {
    name: 'nodejs',
    generator: 'Node.js doc tool',
    // never `apt-get install` it: it conflicts with the machine's nodejs and apt removes node
    packageName: 'nodejs-doc (unpacked with dpkg-deb -x, never installed)',
    dir: 'usr/share/doc/nodejs/api',
    skipDirs: ['assets'],
    always: ['index.html'],
    label: { root: id('column1'), drop: [tag('header')] },
  },
];

/** Where the packages' files are: `/` when installed, or the folder `dpkg-deb -x` unpacked them into. */
export function docSitesRoot(argv: readonly string[] = process.argv): string {
  const i = argv.indexOf('--root');
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : (process.env.DOC_SITES_ROOT ?? '/');
}

/** Every HTML file of a site, relative to its folder, sorted (so a sample is the same on every machine). */
export function siteFiles(root: string, site: DocSite): string[] {
  const base = path.join(root, site.dir);
  if (!existsSync(base)) return [];
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(base, rel)).sort()) {
      const r = rel === '' ? name : `${rel}/${name}`;
      const full = path.join(base, r);
      if (statSync(full).isDirectory()) {
        if (!site.skipDirs?.includes(r)) walk(r);
      } else if (name.endsWith('.html')) {
        out.push(r);
      }
    }
  };
  walk('');
  return out;
}

/** Every `step`-th file from the first, plus the site's index pages, without repeats, in file order. */
export function samplePages(files: readonly string[], site: DocSite, perSite: number): string[] {
  const step = Math.max(1, Math.ceil(files.length / perSite));
  const chosen = new Set(files.filter((_, i) => i % step === 0));
  for (const f of site.always) if (files.includes(f)) chosen.add(f);
  return files.filter((f) => chosen.has(f));
}

/**
 * The HTML of a page's labelled content (the site's body element, without what it marks as
 * not content), as a document of its own, so that its visible text is what the extractor's
 * full text of it would be; null when the page lacks the element.
 */
export function labelHtml(html: string, site: DocSite): string | null {
  const doc = parse(html);
  const body = find(doc, null, (el) => el.tagName === 'body');
  if (body === null) return null;
  const root = site.label.root === undefined ? body : find(body, null, site.label.root);
  if (root === null) return null;
  for (const drop of site.label.drop ?? []) removeAll(root, drop);
  return `<!doctype html><html><body>${root === body ? body.childNodes.map((c) => serializeOuter(c)).join('') : serializeOuter(root)}</body></html>`;
}

function find(node: ParentNode, parent: Element | null, match: Match): Element | null {
  for (const c of node.childNodes) {
    if (!('tagName' in c)) continue;
    if (match(c, parent)) return c;
    const inner = find(c, c, match);
    if (inner !== null) return inner;
  }
  return null;
}

function removeAll(node: ParentNode, match: Match): void {
  const parent = 'tagName' in node ? (node as Element) : null;
  // judged on the children as they were: "the first child" must not move when one goes
  const gone = new Set(node.childNodes.filter((c) => 'tagName' in c && match(c, parent)));
  node.childNodes = node.childNodes.filter((c) => !gone.has(c));
  for (const c of node.childNodes) if ('tagName' in c) removeAll(c, match);
}
