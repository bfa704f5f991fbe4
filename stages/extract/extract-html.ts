/**
 * HTML extraction: title, visible text, outlinks, canonical URL, meta robots, language
 * and description from one parse5 parse plus one iterative tree walk.
 *
 * Pure and total: any input string (truncated, malformed, binary garbage) yields a result,
 * never an exception. The walk uses an explicit stack, so arbitrarily deep trees are fine.
 */
import { parse, parseFragment, html as p5html, type DefaultTreeAdapterTypes } from 'parse5';
import { chunkedTextAdapter, textOf, type ChunkedTextNode } from './chunked-text-adapter.js';
import { documentBaseUrl, resolveCanonical, resolveHref } from './links.js';
import { applyRobotsContent, collapseChunks, collapseWhitespace, LINE_BREAK, normalizeLanguage, truncate } from './metadata.js';

export interface ExtractedLink {
  /** Absolute URL, resolved against `<base href>` if present else the page URL; fragment kept. */
  url: string;
  /** Whitespace-collapsed anchor text (for `area`, and images inside `a`: the alt text), max 500 chars. */
  anchorText: string;
  /** `rel` attribute lowercased and whitespace-collapsed, '' if none. */
  rel: string;
  tag: 'a' | 'area';
}

export interface ExtractedHtml {
  title: string;
  /** Visible text, whitespace collapsed, one line per block-level box. */
  text: string;
  links: ExtractedLink[];
  canonicalUrl: string | null;
  metaRobots: { noindex: boolean; nofollow: boolean };
  language: string | null;
  description: string | null;
}

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;
type Document = DefaultTreeAdapterTypes.Document;

export const MAX_ANCHOR_TEXT = 500;
/**
 * Anchor text is built from at most this many text chunks after the anchor start, and from
 * at most ANCHOR_CHUNK_BUDGET chunks per page in total (anchors past the budget get ''),
 * which bounds the work for pathological nesting (e.g. 100k nested SVG <a> elements).
 */
const MAX_ANCHOR_CHUNKS = 1_000;
const ANCHOR_CHUNK_BUDGET = 250_000;

/** Elements whose content is never rendered as text and contains no extractable links. */
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

interface RawLink {
  href: string;
  anchorText: string;
  rel: string;
  tag: 'a' | 'area';
}

/** Stack marker popped after an element's children, to close its scope. */
class Marker {
  constructor(
    readonly kind: 'block' | 'hidden' | 'anchor' | 'noscript',
    readonly link: RawLink | null = null,
    readonly start = 0,
  ) {}
}
const BLOCK_END = new Marker('block');
const HIDDEN_END = new Marker('hidden');
const NOSCRIPT_END = new Marker('noscript');

function getAttr(el: Element, name: string): string | null {
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

class Walker {
  /** Visible text (text-node chunk arrays) in document order; BREAK marks block boundaries. */
  private readonly pieces: (readonly string[])[] = [];
  private hidden = 0;
  private noscript = 0;
  private anchorDepth = 0;
  private anchorBudget = ANCHOR_CHUNK_BUDGET;
  private readonly anchorPieces: (readonly string[])[] = [];
  readonly rawLinks: RawLink[] = [];
  title: string | null = null;
  baseHref: string | null = null;
  canonicalHref: string | null = null;
  metaLanguage: string | null = null;
  description: string | null = null;
  ogDescription: string | null = null;
  readonly robots = { noindex: false, nofollow: false };

  text(): string {
    return collapseChunks(this.pieces, true);
  }

  private lineBreak(): void {
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
        if (this.hidden === 0) this.pieces.push(chunks);
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
      if (BLOCKS.has(el.tagName)) {
        this.lineBreak();
        stack.push(BLOCK_END);
      }
      pushChildren(stack, el.childNodes);
    }
  }

  private closeScope(m: Marker): void {
    switch (m.kind) {
      case 'block':
        this.lineBreak();
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
        break;
      }
    }
  }

  /** Handles element-specific semantics; returns false when the subtree must not be descended. */
  private openElement(el: Element, stack: Array<Node | Marker>): boolean {
    const tag = el.tagName;
    switch (tag) {
      case 'a': {
        const href = getAttr(el, 'href');
        if (href === null) return true;
        const link: RawLink = { href, anchorText: '', rel: relOf(el), tag: 'a' };
        this.rawLinks.push(link);
        stack.push(new Marker('anchor', link, this.anchorPieces.length));
        this.anchorDepth++;
        return true;
      }
      case 'area': {
        const href = getAttr(el, 'href');
        if (href !== null) {
          const alt = truncate(collapseWhitespace(getAttr(el, 'alt') ?? ''), MAX_ANCHOR_TEXT);
          this.rawLinks.push({ href, anchorText: alt, rel: relOf(el), tag: 'area' });
        }
        return false;
      }
      case 'img':
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
        this.separate();
        return true;
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
        if (this.noscript === 0 && this.canonicalHref === null) {
          const rel = getAttr(el, 'rel');
          const href = getAttr(el, 'href');
          if (rel !== null && href !== null && rel.toLowerCase().split(/\s+/).includes('canonical')) {
            this.canonicalHref = href;
          }
        }
        return false;
      case 'base':
        if (this.noscript === 0 && this.baseHref === null) this.baseHref = getAttr(el, 'href');
        return false;
      case 'noscript':
        this.noscriptLinks(el, stack);
        return false;
      default:
        return !SKIPPED.has(tag);
    }
  }

  private meta(el: Element): void {
    const content = getAttr(el, 'content');
    if (content === null) return;
    const name = getAttr(el, 'name')?.trim().toLowerCase();
    if (name === 'robots') {
      applyRobotsContent(content, this.robots);
    } else if (name === 'description') {
      this.description ??= collapseWhitespace(content) || null;
    } else if (getAttr(el, 'http-equiv')?.trim().toLowerCase() === 'content-language') {
      this.metaLanguage ??= normalizeLanguage(content);
    } else if (getAttr(el, 'property')?.trim().toLowerCase() === 'og:description') {
      this.ogDescription ??= collapseWhitespace(content) || null;
    }
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

function parseSafely(html: string): Document | null {
  try {
    return parse(html, { treeAdapter: chunkedTextAdapter });
  } catch {
    return null; // parse5 is designed to be total; this is belt and braces.
  }
}

export function extractHtml(html: string, pageUrl: string): ExtractedHtml {
  const walker = new Walker();
  const doc = parseSafely(typeof html === 'string' ? html : String(html));
  if (doc !== null) walker.walk(doc);

  const base = documentBaseUrl(walker.baseHref, pageUrl);
  const links: ExtractedLink[] = [];
  const seen = new Set<string>();
  const resolved = new Map<string, string | null>(); // pages repeat hrefs (nav, pagination)
  for (const raw of walker.rawLinks) {
    let url = resolved.get(raw.href);
    if (url === undefined) {
      url = resolveHref(raw.href, base);
      resolved.set(raw.href, url);
    }
    if (url === null) continue;
    const key = `${url}\u0000${raw.anchorText}\u0000${raw.rel}`;
    if (seen.has(key)) continue;
    seen.add(key);
    links.push({ url, anchorText: raw.anchorText, rel: raw.rel, tag: raw.tag });
  }

  const root = doc?.childNodes.find((n): n is Element => n.nodeName === 'html');
  const language = normalizeLanguage(root ? getAttr(root, 'lang') : null) ?? walker.metaLanguage;

  return {
    title: walker.title ?? '',
    text: walker.text(),
    links,
    canonicalUrl: walker.canonicalHref === null ? null : resolveCanonical(walker.canonicalHref, base),
    metaRobots: { ...walker.robots },
    language,
    description: walker.description ?? walker.ogDescription,
  };
}
