/**
 * HTML extraction: title, visible text and main text, outlinks (with where they came from),
 * canonical URL, meta robots, language, description, headings, OpenGraph, JSON-LD,
 * hreflang alternates, and the article's author, publication time and site name, from one
 * parse5 parse plus one iterative tree walk.
 *
 * Pure and total: any input string (truncated, malformed, binary garbage) yields a result,
 * never an exception. The walk uses an explicit stack, so arbitrarily deep trees are fine.
 */
import type { DefaultTreeAdapterTypes } from 'parse5';
import { chunkedTextAdapter } from './chunked-text-adapter.js';
import { parseDocument } from './text-run-parse.js';
import { documentBaseUrl, resolveCanonical, resolveHref } from './links.js';
import { normalizeLanguage } from './metadata.js';
import { detectLanguage } from './detect-language.js';
import { articleMeta } from './article-meta.js';
import { getAttr, Walker } from './html-walker.js';
import type { TextSource } from './main-text.js';
import type { ExtractedLink, Heading, HreflangAlternate } from './page-parts.js';
import { indexingVerdict, type DirectiveGroup, type IndexingVerdict } from '../shared/robots/robots-directives.js';

export { MAX_ANCHOR_TEXT, MAX_HEADINGS, MAX_HREFLANG } from './html-walker.js';

export interface ExtractedHtml {
  title: string;
  /** All visible text, whitespace collapsed, one line per block-level box. */
  text: string;
  /** The visible text without boilerplate (main-text.ts), one line per block. */
  mainText: string;
  /** `main`, or `fallback_full` when no main text was found and `mainText` is the full text */
  textSource: TextSource;
  /** The main text's blocks as markdown (markdown-render.ts): headings, lists, links, tables, code blocks, quotes. */
  markdown: string;
  links: ExtractedLink[];
  canonicalUrl: string | null;
  /** noindex/nofollow from the meta robots tags addressed to the crawler (unavailable_after not judged: extract-page does, at the fetch time) */
  metaRobots: IndexingVerdict;
  /** the rules of those tags, one group per name (`meta robots`, `meta <token>`) */
  robotsMeta: DirectiveGroup[];
  /** From `<html lang>`, Content-Language meta or og:locale, else detected from the text (null if unsure). */
  language: string | null;
  /** Where `language` came from. */
  languageSource: 'markup' | 'detected' | null;
  description: string | null;
  /** h1–h6 in document order (visible ones, at most MAX_HEADINGS). */
  headings: Heading[];
  /** og:*, twitter:*, article:* … meta values, first one of each key. */
  openGraph: Record<string, string>;
  /** Parsed JSON-LD things (arrays spread, @graph expanded). */
  jsonLd: unknown[];
  /** JSON-LD blocks skipped because they did not parse (or exceeded the caps). */
  jsonLdInvalid: number;
  hreflang: HreflangAlternate[];
  /** the article's author(s), from JSON-LD, meta tags or the byline; null when the page does not say */
  author: string | null;
  /** when the article was first published (epoch ms, UTC), from JSON-LD, meta tags or a `<time>` near the title */
  publishedAt: number | null;
  /** the site's name (og:site_name, the JSON-LD publisher's) */
  siteName: string | null;
  /** what tells an application shell (app-shell.ts) */
  shell: { scripts: number; emptyMounts: number };
}

type Element = DefaultTreeAdapterTypes.Element;
type Document = DefaultTreeAdapterTypes.Document;

function parseSafely(html: string): Document | null {
  try {
    return parseDocument(html, { treeAdapter: chunkedTextAdapter });
  } catch {
    return null; // parse5 is designed to be total; this is belt and braces.
  }
}

export interface ExtractHtmlOptions {
  /** the crawler's robots token: `<meta name="TOKEN">` is read beside `<meta name="robots">` */
  robotsToken?: string;
}

export function extractHtml(html: string, pageUrl: string, opts: ExtractHtmlOptions = {}): ExtractedHtml {
  const walker = new Walker(opts.robotsToken);
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
    const key = `${url}\u0000${raw.anchorText}\u0000${raw.rel}\u0000${raw.source}`;
    if (seen.has(key)) continue;
    seen.add(key);
    links.push({ url, anchorText: raw.anchorText, rel: raw.rel, source: raw.source });
  }
  const hreflang: HreflangAlternate[] = [];
  for (const h of walker.hreflang) {
    const url = resolveHref(h.href, base);
    if (url !== null) hreflang.push({ lang: h.lang, url });
  }

  const root = doc?.childNodes.find((n): n is Element => n.nodeName === 'html');
  const markupLanguage = normalizeLanguage(root ? getAttr(root, 'lang') : null) ?? walker.metaLanguage ?? walker.ogLocale;
  const {
    text,
    main: { text: mainText, source: textSource, blocks: mainBlocks },
  } = walker.texts();
  const markdown = walker.markdown(mainBlocks, (href) => {
    let url = resolved.get(href);
    if (url === undefined) resolved.set(href, (url = resolveHref(href, base)));
    return url;
  });
  const article = articleMeta({
    jsonLd: walker.jsonLd.blocks,
    openGraph: walker.openGraph,
    metaAuthor: walker.article.metaAuthor,
    metaPublished: walker.article.metaPublished,
    applicationName: walker.article.applicationName,
    bylineText: walker.article.bylineText,
    timeNearTitle: walker.article.timeNearTitle,
  });
  const detected = markupLanguage === null ? detectLanguage(mainText.length >= 200 ? mainText : text) : null;

  return {
    title: walker.title ?? '',
    text,
    mainText,
    textSource,
    markdown,
    links,
    canonicalUrl: walker.canonicalHref === null ? null : resolveCanonical(walker.canonicalHref, base),
    metaRobots: indexingVerdict(walker.robotsMeta),
    robotsMeta: walker.robotsMeta,
    language: markupLanguage ?? detected,
    languageSource: markupLanguage !== null ? 'markup' : detected !== null ? 'detected' : null,
    description: walker.description ?? walker.ogDescription,
    headings: walker.headings,
    openGraph: walker.openGraph,
    jsonLd: walker.jsonLd.blocks,
    jsonLdInvalid: walker.jsonLd.invalid,
    hreflang,
    ...article,
    shell: { ...walker.shell },
  };
}
