/**
 * What an element's tag, role, id and class say about its content, for main-text.ts:
 * - chrome: navigation, banners, sidebars, dialogs by tag or ARIA role (never main text);
 * - unlikely: an id/class that names comments, menus, sidebars, share bars, cookie notices …
 *   (dropped on the first attempt, kept on a retry when that leaves too little text);
 * - caption: a figure, its caption, or an id/class that says caption or credit;
 * - byline: an author or date line (class byline, author, date …, `<time>`, rel=author);
 * - a class weight (−50 … +50) that moves the content score of the box, and whether it is a share bar.
 * The word lists are Mozilla Readability's (its REGEXPS), which are tuned on the real web,
 * plus a few of trafilatura's and this project's (cookie, consent, newsletter …).
 */
import type { DefaultTreeAdapterTypes } from 'parse5';
import { textOf } from './chunked-text-adapter.js';

type Element = DefaultTreeAdapterTypes.Element;

/**
 * Always page chrome. `header` too: the site's holds its logo and menu, an article's own its
 * headline, standfirst, byline and date, none of which is main text (the headline is `title`).
 */
// not `form`: ASP.NET pages wrap the whole body in one
const CHROME_TAGS = new Set(['nav', 'aside', 'footer', 'header', 'menu', 'dialog', 'button', 'select', 'textarea', 'input']);
const CHROME_ROLES = new Set([
  'navigation', 'banner', 'contentinfo', 'complementary', 'menu', 'menubar', 'search', 'dialog', 'alertdialog', 'toolbar', 'alert',
]);

const UNLIKELY =
  /-ad-|ai2html|banner|breadcrumb|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|cookie|consent|newsletter|outbrain|taboola|recommend|trending|navbar|most-?read|most-?popular/;
/** Short words that say boilerplate only as a whole word of a class (`ad-slot`, `ads`, not `head`, `download`). */
const UNLIKELY_WORDS = /(?:^|[\s_-])(?:ad|ads|advert|advertisement|signature|share|tags)(?:$|[\s_-])/;
/** An unlikely word next to one of these may still be the content (`article-header`, `main-column`). */
const MAYBE_CONTENT = /and|article|body|column|content|main|mathjax|shadow/;
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story/;
const NEGATIVE =
  /-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget|cookie|newsletter|caption|credit/;
const BYLINE = /byline|author|dateline|writtenby|p-author/;
/** date and time lines: whole words of a class (`post-date`, `timestamp`), not parts (`update`, `runtime`) */
const DATE = /(?:^|[\s_-])(?:date|time|timestamp|published|pubdate|posted-on|updated|datetime)(?:$|[\s_-])/;
const CAPTION = /caption|credit|photo-?desc|image-?desc/;
const CAPTION_TAGS = new Set(['figcaption']);
/** A share bar (Readability's `shareElements`). */
const SHARE = /(?:\b|_)(?:share|sharedaddy)(?:\b|_)/;

export interface ElementHints {
  /** nav, aside, footer, role=navigation …: never main text */
  chrome: boolean;
  /** id/class name boilerplate: not main text unless that leaves too little */
  unlikely: boolean;
  /** a figure or caption */
  caption: boolean;
  /** an author or date line */
  byline: boolean;
  /** of them, an author line (class byline or author, rel=author, itemprop=author) */
  author: boolean;
  /** Readability's class weight: −25 for a negative id, −25 for a negative class, +25 for each positive one */
  weight: number;
  share: boolean;
}

// shared, read-only: most elements get one of these, and a walk meets thousands of elements
const NONE: ElementHints = Object.freeze({ chrome: false, unlikely: false, caption: false, byline: false, author: false, weight: 0, share: false });
const CHROME: ElementHints = Object.freeze({ ...NONE, chrome: true });
const CAPTION_ONLY: ElementHints = Object.freeze({ ...NONE, caption: true });
const DATE_ONLY: ElementHints = Object.freeze({ ...NONE, byline: true });

function attrOf(el: Element, name: string): string | null {
  for (const a of el.attrs) if (a.name === name) return a.value;
  return null;
}

/** A dotted name (`email.policy.Policy.header_store_parse`): the anchor of an API entry. */
const QUALIFIED_NAME = /^[\p{L}_$][\p{L}\p{N}_$-]*(?:\.[\p{L}_$][\p{L}\p{N}_$-]*)+$/u;
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Empty elements looked past before a section's heading (anchors: `<span id="x"></span><h2>`). */
const MAX_LEADING_EMPTY = 4;
/** Of a heading, this much text is compared with an id. */
const MAX_HEADING_CHARS = 300;

/**
 * Whether `id` is the slug of the element's heading: the element is a heading, or its first
 * element with content is one, and the id's words are the heading's (`related-objects-reference`
 * and "Related objects reference"; a Sphinx prefix such as `s-` aside).
 */
function isHeadingSlug(el: Element, id: string): boolean {
  const heading = HEADINGS.has(el.tagName) ? el : leadingHeading(el);
  if (heading === null) return false;
  const idWords = id.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 1);
  if (idWords.length === 0) return false;
  const headingWords = new Set(textWithin(heading, MAX_HEADING_CHARS).toLowerCase().split(/[^\p{L}\p{N}]+/u));
  return idWords.every((w) => headingWords.has(w));
}

function leadingHeading(el: Element): Element | null {
  let skipped = 0;
  for (const c of el.childNodes) {
    if (c.nodeName === '#comment') continue;
    if (!('tagName' in c)) {
      if (textOf(c as DefaultTreeAdapterTypes.TextNode).trim() !== '') return null;
      continue;
    }
    if (HEADINGS.has(c.tagName)) return c;
    if (c.childNodes.length > 0 || ++skipped > MAX_LEADING_EMPTY) return null;
  }
  return null;
}

/** The text inside `el`, up to about `max` characters. */
function textWithin(el: Element, max: number): string {
  let s = '';
  const stack: DefaultTreeAdapterTypes.ChildNode[] = [...el.childNodes].reverse();
  while (stack.length > 0 && s.length < max) {
    const n = stack.pop()!;
    if (n.nodeName === '#text') s += ` ${textOf(n as DefaultTreeAdapterTypes.TextNode)}`;
    else if ('childNodes' in n) for (let i = n.childNodes.length - 1; i >= 0; i--) stack.push(n.childNodes[i]!);
  }
  return s;
}

/** At most this many characters of a class or id are looked at: class soup is bounded. */
const MAX_HINT = 300;

/**
 * The hints of one element. `html` and `body` carry site-wide classes (`single-post
 * has-sidebar`), never hints. `box`: the element is a box of the page layout; only a box's
 * class weight and share-bar hint are used, so only a box's are worked out.
 */
export function elementHints(el: Element, box: boolean): ElementHints {
  const tag = el.tagName;
  if (tag === 'html' || tag === 'body') return NONE;
  if (CHROME_TAGS.has(tag)) return CHROME;
  if (CAPTION_TAGS.has(tag)) return CAPTION_ONLY;
  if (tag === 'time') return DATE_ONLY;
  if (el.attrs.length === 0) return NONE;
  let id = '';
  let cls = '';
  let role = '';
  let rel = '';
  let itemprop = '';
  for (const a of el.attrs) {
    if (a.name === 'class') cls = a.value.slice(0, MAX_HINT).toLowerCase();
    else if (a.name === 'id') id = a.value.slice(0, MAX_HINT).toLowerCase();
    else if (a.name === 'role') role = a.value.trim().toLowerCase();
    else if (a.name === 'rel') rel = a.value.toLowerCase();
    else if (a.name === 'itemprop') itemprop = a.value.toLowerCase();
    else if (a.name === 'aria-hidden' && a.value === 'true') return CHROME;
    else if (a.name === 'aria-modal' && a.value === 'true') return CHROME;
  }
  if (CHROME_ROLES.has(role)) return CHROME;
  // documentation generators and Markdown renderers name a section after its heading
  // (`<section id="comments"><h2>Comments</h2>`, `<h2 id="related-links">`) and an API entry
  // after what it documents (`id="django.db.models.fields.related.RelatedManager.add"`): such
  // an id says what the text is about, not what part of the page it is
  if (id !== '' && (QUALIFIED_NAME.test(id) || isHeadingSlug(el, id))) id = '';
  if (id === '' && cls === '' && rel === '' && itemprop === '') return NONE;
  const both = `${cls} ${id}`;
  const unlikely = tag !== 'a' && tag !== 'main' && (UNLIKELY.test(both) || UNLIKELY_WORDS.test(both)) && !MAYBE_CONTENT.test(both);
  const author = rel === 'author' || itemprop.includes('author') || BYLINE.test(both);
  const byline = author || itemprop.startsWith('date') || DATE.test(both);
  const hints = { chrome: false, unlikely, caption: CAPTION.test(both), byline, author, weight: 0, share: false };
  if (!box) return hints;
  for (const s of [cls, id]) {
    if (s === '') continue;
    if (NEGATIVE.test(s)) hints.weight -= 25;
    if (POSITIVE.test(s)) hints.weight += 25;
  }
  hints.share = SHARE.test(both);
  return hints;
}
