// Renders a page of the model as ~25 KB of realistic HTML. Everything is a pure function of
// the resource (and host name), so a page's bytes never change between requests or runs, and
// an exact duplicate (same resource fields) renders byte-identical.
//
// The only followable URLs in the output are the resource's links (<a href>), plus <base>
// and <link rel="canonical"> when set: no stylesheets, images or scripts by URL, so a
// crawler extracting every URL-ish attribute cannot wander off the model.

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

export function renderPage(host: string, page: HtmlResource): string {
  const labels = LABELS[page.lang];
  const { headings, paragraphs, headingEvery } = articleWords(page.textSeed, page.lang);
  if (page.wordChanges > 0) mutate(paragraphs, page.textSeed, page.lang, page.wordChanges);
  const punct = mulberry32(deriveSeed(page.textSeed, 'punctuation'));

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
  body.push(`<header class="site"><span class="logo">${host}</span><p class="tagline">${escapeHtml(page.description)}</p></header>`);
  body.push(`<nav class="main"><ul>${nav.map((l) => `<li>${anchor(l)}</li>`).join('')}</ul></nav>`);
  body.push('<main>', '<article>', `<h1>${escapeHtml(page.title)}</h1>`);
  // Inline links go one per paragraph, spread over the article, mid-sentence.
  const stride = Math.max(1, Math.floor(paragraphs.length / Math.max(1, inline.length)));
  paragraphs.forEach((p, i) => {
    if (i % headingEvery === 0) {
      const h = headings[Math.floor(i / headingEvery)] as string[];
      body.push(`<h2 id="section-${Math.floor(i / headingEvery) + 1}">${escapeHtml(sentence(h, punct).slice(0, -1))}</h2>`);
    }
    let text = escapeHtml(sentence(p, punct));
    const linkIndex = i / stride;
    const link = Number.isInteger(linkIndex) ? inline[linkIndex] : undefined;
    if (link) {
      const cut = text.indexOf(' ', Math.floor(text.length / 2));
      text = cut < 0 ? `${text} ${anchor(link)}` : `${text.slice(0, cut)} ${anchor(link)}${text.slice(cut)}`;
    }
    body.push(`<p>${text}</p>`);
  });
  // Links that did not find a paragraph (short article, many links) go to the related list.
  const leftovers = inline.slice(Math.ceil(paragraphs.length / stride));
  const asideLinks = [...related, ...leftovers];
  if (asideLinks.length > 0) {
    body.push(`<aside class="related"><h2>${labels.related}</h2><ul>${asideLinks.map((l) => `<li>${anchor(l)}</li>`).join('')}</ul></aside>`);
  }
  body.push('</article>', '</main>');
  body.push(`<!-- ${COMMENT_MARKER}: generated by the crawler's test web -->`);
  const year = 2024;
  body.push(
    `<footer class="site"><p>${footer.map((l) => anchor(l)).join(' · ')}</p><p>&copy; ${year} ${host}. ${labels.rights}.</p></footer>`,
  );

  return `<!DOCTYPE html>\n<html lang="${page.lang}">\n<head>\n${head.join('\n')}\n</head>\n<body>\n${body.join('\n')}\n</body>\n</html>\n`;
}
