/**
 * What an element's tag, role, id, class and aria-label say about its content: boilerplate
 * (navigation, banners, sidebars, comments, cookie notices, share bars, ads) or the main
 * content container (`<main>`, `<article>`, "article-body" …). These are hints for
 * main-text.ts, which also judges blocks without any hint (link density, length).
 */
import type { DefaultTreeAdapterTypes } from 'parse5';

type Element = DefaultTreeAdapterTypes.Element;

export type ElementHint = 'boilerplate' | 'content' | null;

/** Always boilerplate. `header` only outside a content container: `<article><header>` holds the headline. */
// not `form`: ASP.NET pages wrap the whole body in one
const BOILERPLATE_TAGS = new Set(['nav', 'aside', 'footer', 'menu', 'dialog', 'button', 'select']);
const BOILERPLATE_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'menu', 'menubar', 'search', 'dialog', 'alertdialog', 'toolbar']);

/**
 * Words that mark boilerplate when they appear anywhere in an id/class/aria-label value
 * (`commentlist`, `relatedPosts`, `cookie-consent`): long and specific enough not to hit
 * content by accident.
 */
const BOILERPLATE_SUBSTRINGS = [
  'comment', 'sidebar', 'related', 'cookie', 'consent', 'gdpr', 'newsletter', 'subscribe', 'breadcrumb',
  'social', 'sharing', 'share-', 'advert', 'sponsor', 'promo', 'disqus', 'navbar', 'navigation', 'masthead',
  'outbrain', 'taboola', 'recommend', 'popular', 'trending', 'signup', 'sign-up', 'login', 'paywall',
];
/** Short words that mark boilerplate only as a whole token of the value (`ad`, `nav`, `share`). */
const BOILERPLATE_TOKENS = new Set([
  'ad', 'ads', 'nav', 'menu', 'share', 'tags', 'tag', 'banner', 'popup', 'modal', 'widget', 'widgets', 'pager',
  'pagination', 'footer', 'foot', 'toolbar', 'skip', 'toc',
]);
/** Tokens that mark the content container. */
const CONTENT_TOKENS = new Set([
  'article', 'content', 'main', 'post', 'entry', 'story', 'text', 'body', 'prose', 'blog-post', 'post-body',
  'article-body', 'articlebody', 'entry-content', 'post-content', 'main-content', 'story-body', 'page-content',
  'markdown-body', 'article-content', 'single-post', 'recipe', 'product',
]);

function attrOf(el: Element, name: string): string | null {
  for (const a of el.attrs) if (a.name === name) return a.value;
  return null;
}

/** Lowercased id + class + aria-label, or '' (at most 300 chars looked at: class soup is bounded). */
function hintText(el: Element): string {
  let s = '';
  for (const a of el.attrs) {
    if (a.name === 'id' || a.name === 'class' || a.name === 'aria-label') s += ` ${a.value.slice(0, 300)}`;
  }
  return s.toLowerCase();
}

/** Each class/id word, and its parts split at '-' and '_' (`ad-slot` → ad-slot, ad, slot). */
function tokensOf(s: string): string[] {
  const out: string[] = [];
  for (const word of s.split(/[\s]+/)) {
    if (word.length === 0) continue;
    out.push(word);
    if (/[-_:]/.test(word)) for (const part of word.split(/[-_:]+/)) if (part.length > 0) out.push(part);
  }
  return out;
}

/**
 * The hint of one element. `inContainer`: an ancestor is a content container, where a
 * `header` (tag or class) is the article's own header, not the site's.
 * Boilerplate words win over content ones: `<article class="comment">` is a comment.
 */
export function elementHint(el: Element, inContainer: boolean): ElementHint {
  const tag = el.tagName;
  if (BOILERPLATE_TAGS.has(tag)) return 'boilerplate';
  if (tag === 'header') return inContainer ? null : 'boilerplate';
  const contentTag = tag === 'main' || tag === 'article';
  if (el.attrs.length === 0) return contentTag ? 'content' : null;
  const role = attrOf(el, 'role')?.trim().toLowerCase();
  if (role !== undefined && BOILERPLATE_ROLES.has(role)) return 'boilerplate';
  const hints = hintText(el);
  const tokens = tokensOf(hints);
  if (tag !== 'main' && role !== 'main') {
    for (const w of BOILERPLATE_SUBSTRINGS) if (hints.includes(w)) return 'boilerplate';
    for (const t of tokens) {
      if (BOILERPLATE_TOKENS.has(t)) return 'boilerplate';
      if (t === 'header' && !inContainer) return 'boilerplate';
    }
  }
  if (contentTag || role === 'main' || role === 'article') return 'content';
  if (attrOf(el, 'itemprop')?.toLowerCase() === 'articlebody') return 'content';
  for (const t of tokens) if (CONTENT_TOKENS.has(t)) return 'content';
  return null;
}
