/**
 * The one iterative walk over a parse5 tree behind extractHtml: visible text (and its
 * blocks, for main-text selection), raw links with their source, headings, and the head's
 * metadata (title, base, canonical, robots, language, OpenGraph, JSON-LD, hreflang).
 * An explicit stack instead of recursion, so arbitrarily deep trees are fine; every
 * per-page collection is capped.
 */
import { parseFragment, html as p5html, type DefaultTreeAdapterTypes } from 'parse5';
import { chunkedTextAdapter, textOf, type ChunkedTextNode } from './chunked-text-adapter.js';
import { collapseChunks, collapseChunksAndRanges, collapseWhitespace, LINE_BREAK, normalizeLanguage, truncate } from './metadata.js';
import { ArticleSignals } from './article-meta.js';
import { elementHints } from './boilerplate-hints.js';
import { selectMainText, type MainText } from './main-text.js';
import { MarkdownMarks } from './markdown-marks.js';
import { renderMarkdown } from './markdown-render.js';
import { IN_CAPTION, IN_CHROME, IN_LINK, IN_UNLIKELY, PageLayout } from './page-layout.js';
import { addJsonLd, MAX_OPENGRAPH_KEYS, MAX_OPENGRAPH_VALUE, openGraphKey, refreshTarget, type JsonLdState } from './structured-data.js';
import type { Heading, LinkSource } from './page-parts.js';
import { addressesCrawler, metaRobotsRules, type DirectiveGroup } from '../shared/robots/robots-directives.js';

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;

export const MAX_ANCHOR_TEXT = 500;
/**
 * Anchor text is built from at most this many text chunks after the anchor start, and from
 * at most ANCHOR_CHUNK_BUDGET chunks per page in total (anchors past the budget get ''),
 * which bounds the work for pathological nesting (e.g. 100k nested SVG <a> elements).
 */
const MAX_ANCHOR_CHUNKS = 1_000;
const ANCHOR_CHUNK_BUDGET = 250_000;
export const MAX_HEADINGS = 200;
const MAX_HEADING_TEXT = 500;
export const MAX_HREFLANG = 200;
/** Robots rules kept per meta name, however many tags repeat them. */
const MAX_ROBOTS_RULES = 32;
/** An author element is short (PageLayout.closeByline), so this only bounds the work. */
const MAX_BYLINE_TEXT = 200;

/** Elements whose content is never rendered as text (iframe src and JSON-LD are read before skipping). */
const SKIPPED = new Set(['script', 'style', 'template', 'iframe', 'noembed', 'noframes']);

/** Elements that start a new line in the extracted text. */
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'caption', 'center', 'dd', 'details', 'dialog',
  'dir', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'frameset', 'h1', 'h2',
  'h3', 'h4', 'h5', 'h6', 'header', 'hgroup', 'hr', 'html', 'legend', 'li', 'listing', 'main', 'menu',
  'nav', 'ol', 'optgroup', 'option', 'p', 'plaintext', 'pre', 'section', 'select', 'summary', 'table',
  'tbody', 'textarea', 'tfoot', 'thead', 'tr', 'ul', 'xmp',
]);

const BREAK: readonly string[] = [LINE_BREAK];
const SPACE: readonly string[] = [' '];

const DISPLAY_NONE = /display\s*:\s*none/i;

export interface RawLink {
  href: string;
  anchorText: string;
  rel: string;
  source: LinkSource;
}

/** Stack marker popped after an element's children, to close its scope. */
class Marker {
  constructor(
    readonly kind: 'block' | 'hidden' | 'anchor' | 'noscript' | 'within' | 'byline' | 'box' | 'cell' | 'heading' | 'markdown',
    readonly link: RawLink | null = null,
    /** anchor: first anchor piece; heading: first text piece; byline: what PageLayout.openByline said */
    readonly start = 0,
    /** heading: the enclosing and own level; within: the IN_* bits the element opened; byline: 1 for an author element */
    readonly level = 0,
  ) {}
}
const BLOCK_END = new Marker('block');
const HIDDEN_END = new Marker('hidden');
const NOSCRIPT_END = new Marker('noscript');
const BOX_END = new Marker('box');
const CELL_END = new Marker('cell');
const MARKDOWN_END = new Marker('markdown');

const WITHIN_KINDS = [IN_CHROME, IN_UNLIKELY, IN_CAPTION];

/** Elements without text that main-text selection counts in their box (page-layout.ts). */
const COUNTED_ELEMENTS = new Set(['img', 'picture', 'iframe', 'video', 'object', 'embed', 'input']);

const HEADING_LEVEL: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
const LINK_REL_SOURCES: ReadonlyArray<[string, LinkSource]> = [['alternate', 'link-alternate'], ['next', 'link-next'], ['prev', 'link-prev'], ['previous', 'link-prev']];

export function getAttr(el: Element, name: string): string | null {
  const attrs = el.attrs;
  for (let i = 0; i < attrs.length; i++) if (attrs[i]!.name === name) return attrs[i]!.value;
  return null;
}

function isHidden(el: Element): boolean {
  const attrs = el.attrs;
  for (let i = 0; i < attrs.length; i++) {
    const a = attrs[i]!;
    if (a.name === 'hidden' && a.value.toLowerCase() !== 'until-found') return true;
    if (a.name === 'style' && a.value.length >= 12 && DISPLAY_NONE.test(a.value)) return true;
  }
  return false;
}

export class Walker {
  /**
   * @param robotsToken the crawler's robots token: a meta tag of that name carries robots
   * rules for it, as `<meta name="robots">` does for every crawler ('' for none but robots)
   */
  constructor(private readonly robotsToken = '') {}

  /** Visible text (text-node chunk arrays) in document order; BREAK marks block boundaries. */
  private readonly pieces: (readonly string[])[] = [];
  private hidden = 0;
  private noscript = 0;
  private anchorDepth = 0;
  /** how many open elements are of each kind (IN_CHROME, IN_UNLIKELY, IN_CAPTION: boilerplate-hints.ts), by bit number */
  private readonly open = new Int32Array(4);
  /** the kinds at least one open element is of (bits) */
  private within = 0;
  /** text blocks and boxes for main-text selection */
  readonly layout = new PageLayout();
  /** links, inline code and block structure for the main text's markdown */
  private readonly marks = new MarkdownMarks();
  readonly headings: Heading[] = [];
  readonly openGraph: Record<string, string> = {};
  private openGraphKeys = 0;
  readonly jsonLd: JsonLdState = { blocks: [], invalid: 0 };
  readonly hreflang: Array<{ lang: string; href: string }> = [];
  private anchorBudget = ANCHOR_CHUNK_BUDGET;
  private readonly anchorPieces: (readonly string[])[] = [];
  readonly rawLinks: RawLink[] = [];
  title: string | null = null;
  baseHref: string | null = null;
  canonicalHref: string | null = null;
  metaLanguage: string | null = null;
  description: string | null = null;
  ogDescription: string | null = null;
  ogLocale: string | null = null;
  /** rules of the meta robots tags addressed to the crawler (`robots`, or named by its token), one group per name */
  readonly robotsMeta: DirectiveGroup[] = [];
  /** what the page says about its author, date and site (article-meta.ts) */
  readonly article = new ArticleSignals();
  /** what tells an application shell (app-shell.ts): scripts that run, and empty elements a script could mount into */
  readonly shell = { scripts: 0, emptyMounts: 0 };

  /**
   * The visible text (one line per block) and the main text (main-text.ts), from one pass
   * over the text pieces; call once, after the walk.
   */
  texts(): { text: string; main: MainText } {
    const blocks = this.layout.blocks;
    this.layout.endBlock(this.pieces.length);
    const { text, rangeTexts } = collapseChunksAndRanges(this.pieces, blocks);
    for (let i = 0; i < blocks.length; i++) blocks[i]!.chars = rangeTexts[i]!.length;
    return { text, main: selectMainText(this.layout, rangeTexts, this.title ?? '') };
  }

  /** The main text's blocks (`MainText.blocks`) as markdown; `resolve` makes a link's href absolute (null: not a link). */
  markdown(blocks: readonly number[], resolve: (href: string) => string | null): string {
    return renderMarkdown(this.pieces, this.layout.blocks, this.marks, blocks, resolve);
  }

  private addText(chunks: readonly string[]): void {
    this.pieces.push(chunks);
    this.layout.text(chunks, this.anchorDepth > 0 ? this.within | IN_LINK : this.within);
    if (this.layout.hasText) this.marks.blockText(this.layout.blocks.length);
  }

  private lineBreak(): void {
    this.layout.endBlock(this.pieces.length);
    const p = this.pieces;
    if (p.length > 0 && p[p.length - 1] !== BREAK) p.push(BREAK);
    if (this.anchorDepth > 0) this.anchorPieces.push(SPACE);
  }

  private separate(): void {
    this.pieces.push(SPACE);
    if (this.anchorDepth > 0) this.anchorPieces.push(SPACE);
  }

  walk(root: Node): void {
    const stack: Array<Node | Marker> = [root];
    while (stack.length > 0) {
      const item = stack.pop()!;
      if (item instanceof Marker) {
        this.closeScope(item);
        continue;
      }
      if (item.nodeName === '#text') {
        const chunks = (item as ChunkedTextNode).chunks;
        if (this.hidden === 0) this.addText(chunks);
        if (this.anchorDepth > 0) this.anchorPieces.push(chunks);
        continue;
      }
      if (!('tagName' in item)) {
        // #document / #document-fragment have children; comments and doctypes do not.
        if ('childNodes' in item) pushChildren(stack, item.childNodes);
        continue;
      }
      const el = item as Element;
      if (!this.openElement(el, stack)) continue;
      if (el.attrs.length > 0 && isHidden(el)) {
        this.hidden++;
        stack.push(HIDDEN_END);
      }
      // The block break comes first, so that the previous block is not counted in this
      // element's scopes; BLOCK_END is pushed last, so the last block closes inside them.
      const block = BLOCKS.has(el.tagName);
      if (block) this.lineBreak();
      if (this.hidden === 0) {
        this.openScopes(el, block || el.tagName === 'td' || el.tagName === 'th', stack);
        if (this.marks.open(el, block, this.pieces.length)) stack.push(MARKDOWN_END);
      }
      if (block) stack.push(BLOCK_END);
      pushChildren(stack, el.childNodes);
    }
  }

  /** Chrome / unlikely / caption / byline / box / heading scopes, for main-text selection and headings. */
  private openScopes(el: Element, box: boolean, stack: Array<Node | Marker>): void {
    const tag = el.tagName;
    if (COUNTED_ELEMENTS.has(tag)) this.layout.element(tag);
    const hints = elementHints(el, box);
    const kinds =
      (hints.chrome ? IN_CHROME : hints.unlikely ? IN_UNLIKELY : 0) | (hints.caption ? IN_CAPTION : 0);
    if (kinds !== 0) {
      this.enter(kinds, 1);
      stack.push(new Marker('within', null, 0, kinds));
    }
    if (hints.byline) stack.push(new Marker('byline', null, this.layout.openByline(this.pieces.length), hints.author ? 1 : 0));
    if (tag === 'time') {
      const datetime = getAttr(el, 'datetime');
      if (datetime !== null) this.article.time(datetime);
    }
    if (box && this.layout.openBox(tag, getAttr(el, 'class') ?? '', hints, this.pieces.length)) stack.push(BOX_END);
    const level = HEADING_LEVEL[tag];
    if (level !== undefined && el.namespaceURI === p5html.NS.HTML) {
      // the marker keeps the enclosing level (in `level`) to restore it, and the heading's own
      stack.push(new Marker('heading', null, this.pieces.length, this.layout.headingLevel * 8 + level));
      this.layout.headingLevel = level;
      if (level === 1) this.article.headline();
    }
  }

  private closeScope(m: Marker): void {
    switch (m.kind) {
      case 'within':
        this.enter(m.level, -1);
        break;
      case 'byline': {
        const from = this.layout.closeByline(m.start);
        // an author element's text, for `author` when the page's metadata does not name one
        if (from >= 0 && m.level === 1 && this.article.bylineText === null) {
          this.article.byline(collapseChunks(this.pieces, false, from, this.pieces.length, MAX_BYLINE_TEXT));
        }
        break;
      }
      case 'box':
        this.layout.closeBox(this.pieces.length);
        break;
      case 'cell':
        this.layout.endBlock(this.pieces.length);
        break;
      case 'heading': {
        this.layout.headingLevel = m.level >> 3;
        if (this.headings.length < MAX_HEADINGS) {
          const text = truncate(collapseChunks(this.pieces, false, m.start, this.pieces.length, MAX_HEADING_TEXT), MAX_HEADING_TEXT);
          if (text.length > 0) this.headings.push({ level: m.level & 7, text });
        }
        break;
      }
      case 'block':
        this.lineBreak();
        break;
      case 'markdown':
        this.marks.close(this.pieces.length);
        break;
      case 'hidden':
        this.hidden--;
        break;
      case 'noscript':
        this.hidden--;
        this.noscript--;
        break;
      case 'anchor': {
        const p = this.anchorPieces;
        const to = Math.min(p.length, m.start + MAX_ANCHOR_CHUNKS, m.start + this.anchorBudget);
        this.anchorBudget -= to - m.start;
        const text = collapseChunks(p, false, m.start, to, MAX_ANCHOR_TEXT);
        m.link!.anchorText = truncate(text, MAX_ANCHOR_TEXT);
        if (--this.anchorDepth === 0) this.anchorPieces.length = 0;
        this.marks.linkClose(this.pieces.length);
        break;
      }
    }
  }

  /** Counts an element of the `kinds` (bits) in (by 1) or out (by −1). */
  private enter(kinds: number, by: 1 | -1): void {
    for (const kind of WITHIN_KINDS) {
      if ((kinds & kind) === 0) continue;
      const bit = 31 - Math.clz32(kind);
      this.open[bit] += by;
      if (this.open[bit] === 0) this.within &= ~kind;
      else this.within |= kind;
    }
  }

  /** Handles element-specific semantics; returns false when the subtree must not be descended. */
  private openElement(el: Element, stack: Array<Node | Marker>): boolean {
    const tag = el.tagName;
    switch (tag) {
      case 'a': {
        const href = getAttr(el, 'href');
        if (href === null) return true;
        const link: RawLink = { href, anchorText: '', rel: relOf(el), source: 'a' };
        this.rawLinks.push(link);
        stack.push(new Marker('anchor', link, this.anchorPieces.length));
        this.anchorDepth++;
        this.marks.linkOpen(link, this.pieces.length);
        if (this.hidden === 0) this.layout.linkStart();
        return true;
      }
      case 'area': {
        const href = getAttr(el, 'href');
        if (href !== null) {
          const alt = truncate(collapseWhitespace(getAttr(el, 'alt') ?? ''), MAX_ANCHOR_TEXT);
          this.rawLinks.push({ href, anchorText: alt, rel: relOf(el), source: 'area' });
        }
        return false;
      }
      case 'img':
        if (this.hidden === 0) this.layout.element('img');
        if (this.anchorDepth > 0) {
          const alt = getAttr(el, 'alt');
          if (alt) this.anchorPieces.push([' ', alt, ' ']);
        }
        return false;
      case 'br':
        this.lineBreak();
        return false;
      case 'td':
      case 'th':
        // a cell is its own block for main-text selection (table layouts), but stays on the row's line
        this.separate();
        this.layout.endBlock(this.pieces.length);
        stack.push(CELL_END);
        return true;
      case 'iframe':
      case 'frame': {
        if (this.hidden === 0) this.layout.element('iframe');
        const src = getAttr(el, 'src');
        if (src !== null) this.rawLinks.push({ href: src, anchorText: '', rel: '', source: 'iframe' });
        return false;
      }
      case 'script': {
        const type = getAttr(el, 'type')?.trim().toLowerCase();
        if (this.noscript === 0 && type === 'application/ld+json') {
          addJsonLd(childText(el), this.jsonLd);
        } else if (this.noscript === 0 && isScriptType(type)) {
          this.shell.scripts++;
        }
        return false;
      }
      case 'head':
        this.hidden++;
        stack.push(HIDDEN_END);
        return true;
      case 'title':
        if (this.title === null && this.noscript === 0 && el.namespaceURI === p5html.NS.HTML) {
          this.title = collapseWhitespace(childText(el));
        }
        return false;
      case 'meta':
        if (this.noscript === 0) this.meta(el);
        return false;
      case 'link':
        if (this.noscript === 0) this.linkElement(el);
        return false;
      case 'base':
        if (this.noscript === 0 && this.baseHref === null) this.baseHref = getAttr(el, 'href');
        return false;
      case 'noscript':
        this.noscriptLinks(el, stack);
        return false;
      default:
        if (SKIPPED.has(tag)) return false;
        if (this.hidden === 0 && isEmptyMount(el) && !isHidden(el)) this.shell.emptyMounts++;
        return true;
    }
  }

  private linkElement(el: Element): void {
    const rel = getAttr(el, 'rel');
    const href = getAttr(el, 'href');
    if (rel === null || href === null) return;
    const rels = rel.toLowerCase().split(/\s+/);
    if (rels.includes('canonical')) {
      this.canonicalHref ??= href;
      return;
    }
    const source = LINK_REL_SOURCES.find(([r]) => rels.includes(r))?.[1];
    if (source === undefined) return;
    this.rawLinks.push({ href, anchorText: collapseWhitespace(getAttr(el, 'title') ?? '').slice(0, MAX_ANCHOR_TEXT), rel: relOf(el), source });
    const hreflang = getAttr(el, 'hreflang');
    if (source === 'link-alternate' && hreflang !== null && hreflang.trim() !== '' && this.hreflang.length < MAX_HREFLANG) {
      this.hreflang.push({ lang: hreflang.trim().toLowerCase(), href });
    }
  }

  private meta(el: Element): void {
    const content = getAttr(el, 'content');
    if (content === null) return;
    const property = getAttr(el, 'property');
    const rawName = getAttr(el, 'name');
    const ogKey = openGraphKey(property, rawName);
    if (ogKey !== null && !(ogKey in this.openGraph) && this.openGraphKeys < MAX_OPENGRAPH_KEYS) {
      this.openGraph[ogKey] = truncate(collapseWhitespace(content), MAX_OPENGRAPH_VALUE);
      this.openGraphKeys++;
      if (ogKey === 'og:locale') this.ogLocale ??= normalizeLanguage(content);
    }
    const httpEquiv = getAttr(el, 'http-equiv')?.trim().toLowerCase();
    if (httpEquiv === 'refresh') {
      const target = refreshTarget(content);
      if (target !== null) this.rawLinks.push({ href: target, anchorText: '', rel: '', source: 'meta-refresh' });
      return;
    }
    const name = rawName?.trim().toLowerCase();
    this.article.meta(name ?? null, getAttr(el, 'itemprop')?.trim().toLowerCase() ?? null, content);
    if (name !== undefined && addressesCrawler(name, this.robotsToken)) {
      this.addRobotsMeta(name, content);
    } else if (name === 'description') {
      this.description ??= collapseWhitespace(content) || null;
    } else if (httpEquiv === 'content-language') {
      this.metaLanguage ??= normalizeLanguage(content);
    } else if (property?.trim().toLowerCase() === 'og:description') {
      this.ogDescription ??= collapseWhitespace(content) || null;
    }
  }

  private addRobotsMeta(name: string, content: string): void {
    const source = `meta ${name}`;
    let group = this.robotsMeta.find((g) => g.source === source);
    if (!group) this.robotsMeta.push((group = { source, rules: [] }));
    for (const rule of metaRobotsRules(content)) if (group.rules.length < MAX_ROBOTS_RULES) group.rules.push(rule);
  }

  /**
   * With scripting enabled (as in browsers) `<noscript>` content is raw text. Crawlers
   * commonly still follow links there, so the markup is re-parsed as a fragment and walked
   * for links only (no text, no metadata). Not applied recursively.
   */
  private noscriptLinks(el: Element, stack: Array<Node | Marker>): void {
    if (this.noscript > 0) return;
    const raw = childText(el);
    if (!/<a(?:rea)?[\s/>]/i.test(raw)) return;
    this.noscript++;
    this.hidden++;
    stack.push(NOSCRIPT_END, parseFragment(raw, { treeAdapter: chunkedTextAdapter }));
  }
}

/** A script that runs: no type, a JavaScript MIME type or a module (not JSON, templates, …). */
function isScriptType(type: string | undefined): boolean {
  return type === undefined || type === '' || type === 'module' || type.endsWith('javascript') || type.endsWith('ecmascript');
}

/**
 * An element a script could build the page into: one with an id, or a custom element
 * (`<app-root>`), with nothing in it but white space.
 */
function isEmptyMount(el: Element): boolean {
  if (!el.tagName.includes('-') && getAttr(el, 'id') === null) return false;
  for (const c of el.childNodes) {
    if (c.nodeName !== '#text' || textOf(c as DefaultTreeAdapterTypes.TextNode).trim() !== '') return false;
  }
  return true;
}

function pushChildren(stack: Array<Node | Marker>, children: readonly Node[]): void {
  for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
}

function childText(el: Element): string {
  let s = '';
  for (const c of el.childNodes) if (c.nodeName === '#text') s += textOf(c as DefaultTreeAdapterTypes.TextNode);
  return s;
}

function relOf(el: Element): string {
  const rel = getAttr(el, 'rel');
  return rel === null ? '' : collapseWhitespace(rel.toLowerCase());
}
