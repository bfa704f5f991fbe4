// Renders a page of the model as ~25 KB of realistic HTML. Everything is a pure function of
// the resource (and host name), so a page's bytes never change between requests or runs, and
// an exact duplicate (same resource fields) renders byte-identical.
//
// The only followable URLs in the output are the resource's links (<a href>), plus <base>
// and <link rel="canonical"> when set: no stylesheets, images or scripts by URL, so a
// crawler extracting every URL-ish attribute cannot wander off the model.
//
// Around the article sit the usual boilerplate blocks (cookie banner, header, menu,
// breadcrumbs, share bar, sidebar, comments, footer); expectedMainText() says which text is
// the article, for measuring main-text extraction (scripts/extract-quality.ts). The sidebar
// repeats the menu's links with the same anchor text, so it adds no link rows either.

import { deriveSeed, mulberry32, pick, randInt, type Rng } from './prng.js';
import { LABELS, WORDS, type PageLanguage } from './words.js';
import type { HtmlResource, PageLink } from './model-types.js';

/** Text inside <script>: must never show up in extracted visible text. */
export const SCRIPT_MARKER = 'testwebScriptMarker';
/** Text inside <style>: must never show up in extracted visible text. */
export const STYLE_MARKER = 'testweb-style-marker';
/** Text inside an HTML comment: must never show up in extracted visible text. */
export const COMMENT_MARKER = 'testweb-comment-marker';

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const STYLE = `<style>
  /* ${STYLE_MARKER}: presentation only, never visible text */
  :root { --fg: #1d1d1f; --bg: #fbfbfd; --accent: #0b5cad; }
  body { font: 16px/1.6 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0; }
  header.site, footer.site { padding: 1rem 2rem; background: #eef2f7; }
  nav.main ul { list-style: none; display: flex; gap: 1.5rem; margin: 0; padding: 0.5rem 2rem; }
  article { max-width: 46rem; margin: 2rem auto; padding: 0 1rem; }
  article h2 { margin-top: 2.2rem; border-bottom: 1px solid #d0d7de; }
  aside.related li { margin: 0.25rem 0; }
  .${STYLE_MARKER} { display: none; }
</style>`;

const SCRIPT = `<script>
  // ${SCRIPT_MARKER}: analytics stub, code not content
  window.dataLayer = window.dataLayer || [];
  function track(name) { window.dataLayer.push({ event: name, marker: "${SCRIPT_MARKER}" }); }
  document.addEventListener("DOMContentLoaded", function () { track("page_view"); });
  var template = "<p>not a tag, just a string in a script</p>";
</script>`;

/** Article paragraphs (arrays of words) for a text seed; the size target is part of the seed. */
function articleWords(textSeed: number, lang: PageLanguage): { headings: string[][]; paragraphs: string[][]; headingEvery: number } {
  const rng = mulberry32(textSeed);
  const words = WORDS[lang];
  const targetChars = randInt(rng, 18_000, 22_000);
  const headingEvery = randInt(rng, 3, 5);
  const paragraphs: string[][] = [];
  const headings: string[][] = [];
  let chars = 0;
  while (chars < targetChars) {
    if (paragraphs.length % headingEvery === 0) {
      const h: string[] = [];
      for (let k = randInt(rng, 2, 5); k > 0; k--) h.push(pick(rng, words));
      headings.push(h);
    }
    const p: string[] = [];
    for (let k = randInt(rng, 40, 90); k > 0; k--) {
      const w = pick(rng, words);
      p.push(w);
      chars += w.length + 1;
    }
    paragraphs.push(p);
  }
  return { headings, paragraphs, headingEvery };
}

/** Changes `count` words in place, deterministically (near-duplicate pages). */
function mutate(paragraphs: string[][], textSeed: number, lang: PageLanguage, count: number): void {
  const rng = mulberry32(deriveSeed(textSeed, 'near-duplicate'));
  for (let c = 0; c < count; c++) {
    const p = paragraphs[randInt(rng, 0, paragraphs.length - 1)] as string[];
    const i = randInt(rng, 0, p.length - 1);
    let w = pick(rng, WORDS[lang]);
    while (w === p[i]) w = pick(rng, WORDS[lang]);
    p[i] = w;
  }
}

function sentence(words: string[], rng: Rng): string {
  // Capitalise and punctuate so the text reads like prose.
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  const out = words.map((w, i) => (i === 0 ? cap(w) : w));
  for (let i = 6; i < out.length - 3; i += randInt(rng, 8, 16)) {
    out[i] = `${out[i]}.`;
    out[i + 1] = cap(out[i + 1] as string);
  }
  return `${out.join(' ')}.`;
}

function anchor(link: PageLink): string {
  return `<a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a>`;
}

/** One block of the article: its markup and its visible text (`furniture`: the headline and byline, which are not main text). */
interface ArticleBlock {
  html: string;
  text: string;
  furniture?: boolean;
}

/** The article (main content) of a page, block by block: headline, byline, section headings, paragraphs. */
function articleBlocks(page: HtmlResource): ArticleBlock[] {
  const { headings, paragraphs, headingEvery } = articleWords(page.textSeed, page.lang);
  if (page.wordChanges > 0) mutate(paragraphs, page.textSeed, page.lang, page.wordChanges);
  const punct = mulberry32(deriveSeed(page.textSeed, 'punctuation'));
  const inline = page.links.filter((l) => l.area === 'inline');
  const blocks: ArticleBlock[] = [{ html: `<h1>${escapeHtml(page.title)}</h1>`, text: page.title, furniture: true }];
  const minutes = Math.max(1, Math.round(paragraphs.length / 4));
  const byline = `${CHROME[page.lang].by} ${AUTHORS[page.textSeed % AUTHORS.length]} · ${minutes} min`;
  blocks.push({ html: `<p class="byline">${escapeHtml(byline)}</p>`, text: byline, furniture: true });
  // Inline links go one per paragraph, spread over the article, mid-sentence.
  const stride = Math.max(1, Math.floor(paragraphs.length / Math.max(1, inline.length)));
  paragraphs.forEach((p, i) => {
    if (i % headingEvery === 0) {
      const h = headings[Math.floor(i / headingEvery)] as string[];
      const heading = sentence(h, punct).slice(0, -1);
      blocks.push({ html: `<h2 id="section-${Math.floor(i / headingEvery) + 1}">${escapeHtml(heading)}</h2>`, text: heading });
    }
    const text = sentence(p, punct);
    const linkIndex = i / stride;
    const link = Number.isInteger(linkIndex) ? inline[linkIndex] : undefined;
    if (!link) {
      blocks.push({ html: `<p>${escapeHtml(text)}</p>`, text });
      return;
    }
    const cut = text.indexOf(' ', Math.floor(text.length / 2));
    blocks.push(
      cut < 0
        ? { html: `<p>${escapeHtml(text)} ${anchor(link)}</p>`, text: `${text} ${link.text}` }
        : { html: `<p>${escapeHtml(text.slice(0, cut))} ${anchor(link)}${escapeHtml(text.slice(cut))}</p>`, text: `${text.slice(0, cut)} ${link.text}${text.slice(cut)}` },
    );
  });
  return blocks;
}

/**
 * The main text of a page as a reader would mark it: the article's headings and paragraphs
 * (with the anchor text of links inside them), one block per line. Not: the headline (it is
 * the page's title) and byline (its author), cookie banner, header, menu, breadcrumbs, share
 * bar, related links, sidebar, comments, footer.
 */
export function expectedMainText(page: HtmlResource): string {
  return articleBlocks(page).filter((b) => !b.furniture).map((b) => b.text).join('\n');
}

/** Page-chrome words beyond words.ts's LABELS, so a German page's boilerplate is German too. */
const CHROME: Readonly<Record<PageLanguage, Record<'by' | 'comments' | 'share' | 'popular' | 'newsletter', string>>> = {
  en: { by: 'By', comments: 'comments', share: 'Share', popular: 'Popular', newsletter: 'The best articles of the week in your inbox every Friday. No spam, unsubscribe at any time.' },
  de: { by: 'Von', comments: 'Kommentare', share: 'Teilen', popular: 'Beliebt', newsletter: 'Die besten Artikel der Woche jeden Freitag in Ihrem Postfach. Kein Spam, jederzeit abbestellbar.' },
  fr: { by: 'Par', comments: 'commentaires', share: 'Partager', popular: 'Populaire', newsletter: 'Les meilleurs articles de la semaine chaque vendredi dans votre boîte. Pas de spam, désinscription à tout moment.' },
};

const AUTHORS = ['Ada Moreau', 'Jonas Berg', 'Lina Okafor', 'Tomás Ruiz', 'Mei Tanaka', 'Sam Carter'];
const COMMENTERS = ['kestrel42', 'Marta', 'old_reader', 'Pieter V.', 'jdoe', 'Ngozi', 'harbor_fan'];

/** A cookie-consent banner, as most sites show one (text and buttons, no links). */
function cookieBanner(): string {
  return (
    '<div id="cookie-banner" class="cookie-consent" role="dialog" aria-label="Cookie consent">' +
    '<p>We use cookies and similar technologies to remember your preferences, measure how our pages are used and show you ' +
    'relevant content. You can accept all cookies, reject the optional ones or choose which ones to allow in the settings.</p>' +
    '<button type="button">Accept all</button> <button type="button">Reject optional</button> <button type="button">Settings</button></div>'
  );
}

/** Two to four reader comments of ordinary length, seeded by the article text. */
function comments(page: HtmlResource): string {
  const rng = mulberry32(deriveSeed(page.textSeed, 'comments'));
  const words = WORDS[page.lang];
  const items: string[] = [];
  for (let c = randInt(rng, 2, 4); c > 0; c--) {
    const w: string[] = [];
    for (let k = randInt(rng, 15, 45); k > 0; k--) w.push(pick(rng, words));
    items.push(
      `<div class="comment"><p class="comment-author">${escapeHtml(pick(rng, COMMENTERS))} · ${randInt(rng, 1, 23)} h</p>` +
        `<p>${escapeHtml(sentence(w, rng))}</p><span class="reply">Reply</span></div>`,
    );
  }
  return `<section id="comments" class="comments"><h2>${items.length} ${CHROME[page.lang].comments}</h2>${items.join('')}</section>`;
}

/**
 * Page layouts, chosen by the article text (so duplicates share theirs): 'semantic' HTML5
 * (header, nav, main, article, aside, footer); 'classes', the same as divs that keep their
 * class names; 'div-soup', plain divs without any class, id, role or aria hint, where only
 * the text itself (length, link density) tells content from boilerplate.
 */
export type PageLayout = 'semantic' | 'classes' | 'div-soup';
export function pageLayout(page: HtmlResource): PageLayout {
  return (['semantic', 'classes', 'div-soup'] as const)[page.textSeed % 3]!;
}

const SEMANTIC_TAGS = /<(\/?)(?:header|nav|main|article|aside|footer|section)\b/g;
const HINT_ATTRIBUTES = / (?:class|id|role|aria-label)="[^"]*"/g;

function applyLayout(bodyHtml: string, layout: PageLayout): string {
  if (layout === 'semantic') return bodyHtml;
  const divs = bodyHtml.replace(SEMANTIC_TAGS, '<$1div');
  return layout === 'classes' ? divs : divs.replace(HINT_ATTRIBUTES, '');
}

export function renderPage(host: string, page: HtmlResource): string {
  const labels = LABELS[page.lang];
  const { paragraphs } = articleWords(page.textSeed, page.lang);

  const nav = page.links.filter((l) => l.area === 'nav');
  const inline = page.links.filter((l) => l.area === 'inline');
  const related = page.links.filter((l) => l.area === 'related');
  const footer = page.links.filter((l) => l.area === 'footer');

  const head: string[] = ['<meta charset="utf-8">'];
  if (page.baseHref !== undefined) head.push(`<base href="${escapeHtml(page.baseHref)}">`);
  head.push('<meta name="viewport" content="width=device-width, initial-scale=1">');
  head.push(`<title>${escapeHtml(page.title)} | ${host}</title>`);
  head.push(`<meta name="description" content="${escapeHtml(page.description)}">`);
  if (page.metaRobots !== undefined) head.push(`<meta name="robots" content="${page.metaRobots}">`);
  if (page.canonical !== undefined) head.push(`<link rel="canonical" href="${escapeHtml(page.canonical)}">`);
  head.push(STYLE, SCRIPT);
  if (page.structuredData) {
    const ld = { '@context': 'https://schema.org', '@type': 'Article', headline: page.title, inLanguage: page.lang, publisher: { '@type': 'Organization', name: host } };
    head.push(`<script type="application/ld+json">${JSON.stringify(ld)}</script>`);
  }

  const body: string[] = [];
  body.push(cookieBanner());
  body.push(`<header class="site"><span class="logo">${host}</span><p class="tagline">${escapeHtml(page.description)}</p></header>`);
  body.push(`<nav class="main"><ul>${nav.map((l) => `<li>${anchor(l)}</li>`).join('')}</ul></nav>`);
  body.push(`<div class="breadcrumbs"><span>${labels.home}</span> › <span>${labels.articles}</span> › <span>${escapeHtml(page.title)}</span></div>`);
  body.push('<div class="layout">', '<main>', '<article>');
  for (const b of articleBlocks(page)) body.push(b.html);
  body.push(`<div class="share-bar">${CHROME[page.lang].share}: <span>Mastodon</span> <span>Bluesky</span> <span>E-mail</span> <span>Print</span></div>`);
  // Links that did not find a paragraph (short article, many links) go to the related list.
  const stride = Math.max(1, Math.floor(paragraphs.length / Math.max(1, inline.length)));
  const leftovers = inline.slice(Math.ceil(paragraphs.length / stride));
  const asideLinks = [...related, ...leftovers];
  if (asideLinks.length > 0) {
    body.push(`<aside class="related"><h2>${labels.related}</h2><ul>${asideLinks.map((l) => `<li>${anchor(l)}</li>`).join('')}</ul></aside>`);
  }
  body.push('</article>', comments(page), '</main>');
  body.push(
    `<aside class="sidebar"><section class="popular"><h3>${CHROME[page.lang].popular}</h3><ul>${nav.map((l) => `<li>${anchor(l)}</li>`).join('')}</ul></section>` +
      `<section class="newsletter"><h3>Newsletter</h3><p>${CHROME[page.lang].newsletter}</p><button type="button">Subscribe</button></section></aside>`,
  );
  body.push('</div>');
  body.push(`<!-- ${COMMENT_MARKER}: generated by the crawler's test web -->`);
  const year = 2024;
  body.push(
    `<footer class="site"><p>${footer.map((l) => anchor(l)).join(' · ')}</p><p>&copy; ${year} ${host}. ${labels.rights}.</p></footer>`,
  );

  return `<!DOCTYPE html>\n<html lang="${page.lang}">\n<head>\n${head.join('\n')}\n</head>\n<body>\n${applyLayout(body.join('\n'), pageLayout(page))}\n</body>\n</html>\n`;
}
