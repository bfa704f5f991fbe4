// Main text (boilerplate removed) from extractHtml, and the quality gate over the labelled set.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { extractHtml } from '../../stages/extract/extract-html.js';
import { evaluateExtraction, languageAccuracy, scorePage } from '../../scripts/extraction-eval.js';

const PAGE = 'https://example.com/p';
const PROSE =
  'The harbour seal is found along temperate and Arctic marine coastlines of the Northern Hemisphere, and it is the most widely ' +
  'distributed species of pinniped, hauling out on sandbanks, rocky shores and beaches between its fishing trips.';
const PROSE2 =
  'Individual harbour seals have a unique pattern of spots, either dark on a light background or light on a dark one, and they ' +
  'vary in colour from brownish black to tan or grey, with underparts that are generally lighter than the back.';

const main = (body: string) => extractHtml(`<!doctype html><html><body>${body}</body></html>`, PAGE).mainText;

describe('main text', () => {
  it('removes a cookie banner (by id, class or aria-label) but keeps it in the full text', () => {
    for (const attrs of ['id="cookie-banner"', 'class="cc-window consent"', 'role="dialog" aria-label="Cookie settings"', 'class="gdpr"']) {
      const html = `<div ${attrs}><p>We use cookies to improve your experience and to show personalised advertising on this website, you can accept or reject them.</p></div><p>${PROSE}</p>`;
      assert.equal(main(html), PROSE, attrs);
      assert.match(extractHtml(html, PAGE).text, /We use cookies/);
    }
  });

  it('removes a link-dense block without any class hint (div soup)', () => {
    const links = ['Home', 'World news', 'Business and economy', 'Science', 'Sport results', 'Weather forecast'].map((t, i) => `<a href="/${i}">${t}</a>`).join(' | ');
    assert.equal(main(`<div>${links}</div><div>${PROSE}</div><div>${PROSE2}</div><div>${links}</div>`), `${PROSE}\n${PROSE2}`);
  });

  it('removes nav, header, footer, aside and ARIA landmarks outside the article', () => {
    const html =
      `<header><p>Site name and a slogan that is long enough to look like a paragraph of text, but is not content at all.</p></header>` +
      `<nav><p>Menu</p></nav><div role="navigation">Skip</div><div role="banner">Banner text</div>` +
      `<p>${PROSE}</p><aside><p>${PROSE2}</p></aside><div role="complementary">More</div><footer><p>© 2024 Example Ltd. All rights reserved.</p></footer>`;
    assert.equal(main(html), PROSE);
  });

  it("prefers <article>: short blocks inside it are kept; the article's header, comments and share bars are not", () => {
    const html =
      `<main><article><header><h1>Seals</h1><p class="byline">By Ann · 3 min</p></header><p>${PROSE}</p>` +
      `<ul><li>Length: 1.85 m</li><li>Mass: 168 kg</li></ul><p>${PROSE2}</p>` +
      `<div class="share-buttons">Share: <span>X</span> <span>Mail</span></div></article>` +
      `<section class="comments"><p>${PROSE2} I loved this.</p></section></main>` +
      `<div class="sidebar"><p>${PROSE} Advertisement.</p></div>`;
    assert.equal(main(html), `${PROSE}\nLength: 1.85 m\nMass: 168 kg\n${PROSE2}`);
  });

  it('drops the headline that repeats the title, bylines, date lines, captions and ad labels inside the article', () => {
    const html =
      `<html><head><title>Harbour seals return to the bay | Coast News</title></head><body><article>` +
      `<h1>Harbour seals return to the bay</h1><div>By Ann Berg and Tom Ruiz</div><div>Published 10:02 AM EST Nov 19, 2019</div>` +
      `<p>${PROSE}</p><figure><img src="s.jpg"><figcaption>A seal on a sandbank. Photo: Jane Doe</figcaption></figure>` +
      `<div><span>Advertisement</span></div><h2>Spots</h2><p>${PROSE2}</p><span class="credit">Getty Images</span></article></body></html>`;
    assert.equal(extractHtml(html, PAGE).mainText, `${PROSE}\nSpots\n${PROSE2}`);
  });

  it('a byline class on a whole article (WordPress: author-<name>) is not a byline', () => {
    const html = `<article class="post author-ann"><p>${PROSE}</p><p>A short line.</p><p>${PROSE2}</p></article>`;
    assert.equal(main(html), `${PROSE}\nA short line.\n${PROSE2}`);
  });

  it('takes the container with the most prose over a sidebar full of links, and drops trailing link lines', () => {
    const related = ['Seals in winter', 'Where to watch seals', 'The grey seal'].map((t, i) => `<p><a href="/r${i}">${t}</a></p>`).join('');
    const html =
      `<div class="wrap"><div class="col">${related}</div><div class="col"><p>${PROSE}</p><p>${PROSE2}</p>` +
      `<p>${PROSE} ${PROSE2}</p><p><a href="/next">Next post</a></p></div></div>`;
    assert.equal(main(html), `${PROSE}\n${PROSE2}\n${PROSE} ${PROSE2}`);
  });

  it('never empty while the page has text: all of it is chrome, so the full text stands in (text_source fallback_full)', () => {
    const html = `<!doctype html><html><body><nav><p>${PROSE}</p></nav><footer><p>${PROSE2}</p></footer></body></html>`;
    const r = extractHtml(html, PAGE);
    assert.equal(r.textSource, 'fallback_full');
    assert.equal(r.mainText, r.text);
    assert.equal(extractHtml(`<p>${PROSE}</p>`, PAGE).textSource, 'main');
    assert.equal(extractHtml('<html><body></body></html>', PAGE).mainText, '');
  });

  it('judges div soup by length and neighbours: a heading leading into prose is kept, a lone short line is not', () => {
    const html = `<div>Login</div><div><h2>A title for the story</h2></div><div>${PROSE}</div><div>A short line.</div><div>${PROSE2}</div><div>Imprint</div>`;
    assert.equal(main(html), `A title for the story\n${PROSE}\nA short line.\n${PROSE2}`);
  });

  it('div soup: a long unhinted notice in a box of its own is dropped; a paragraph right beside the prose is kept', () => {
    const notice = 'We use cookies and similar technologies to remember your preferences and to measure how our pages are used, please accept them.';
    const body = Array.from({ length: 10 }, (_, i) => `<div>${i % 2 ? PROSE : PROSE2}</div>`).join('');
    const text = main(`<div><div>${notice}</div></div><div><div>${body}</div></div>`);
    assert.doesNotMatch(text, /We use cookies/);
    assert.equal(text.split('\n').length, 10);
    // beside the element that holds the prose, a paragraph of prose belongs to it (Readability's
    // sibling rule: an article split around a figure or an ad)
    assert.match(main(`<div>${notice}</div><div><div>${body}</div></div>`), /We use cookies/);
  });

  it("an id named after the section's heading or an API entry is no boilerplate hint; the same id on a comment box is", () => {
    const doc =
      `<article><section id="lexical-structure"><h2>Lexical structure</h2><p>${PROSE}</p></section>` +
      `<section id="comments"><h2>Comments</h2><p>${PROSE2}</p></section>` +
      `<dl><dt id="email.policy.Policy.header_store_parse">header_store_parse(name, value)</dt><dd>${PROSE}</dd></dl></article>`;
    assert.equal(main(doc), `Lexical structure\n${PROSE}\nComments\n${PROSE2}\nheader_store_parse(name, value)\n${PROSE}`);
    const blog = `<article><p>${PROSE}</p><p>${PROSE2}</p></article><div id="comments"><p>${PROSE2} Great post, thanks!</p></div>`;
    assert.equal(main(blog), `${PROSE}\n${PROSE2}`);
  });

  it('a stub page (nothing long enough to judge) keeps its clean text', () => {
    assert.equal(main('<h1>Gone fishing</h1><p>Back on Monday.</p><nav><a href="/">Home</a></nav>'), 'Gone fishing\nBack on Monday.');
  });

  it('table layouts: each cell is judged on its own, the row still reads as one line in the full text', () => {
    const nav = ['Home', 'Layouts', 'Meetings', 'Gallery', 'Join us'].map((t) => `<a href="/${t}">${t}</a>`).join(' | ');
    const html = `<table><tr><td>${nav}</td><td>${PROSE}<br><br>${PROSE2}</td></tr></table>`;
    assert.equal(main(html), `${PROSE}\n${PROSE2}`);
    assert.match(extractHtml(html, PAGE).text, /Join us The harbour seal/);
  });
});

describe('extraction quality (labelled set)', () => {
  it('scorePage: token multiset precision and recall', () => {
    const s = scorePage('fixture', 'x', 'the cat sat on the mat', 'The cat, the dog');
    assert.equal(s.matchedTokens, 3);
    assert.equal(s.precision, 3 / 4);
    assert.equal(s.recall, 3 / 6);
  });

  it('overall token F1 of the main text is at least 0.90 (micro), on the fixtures and the test web alike', async () => {
    const summary = await evaluateExtraction();
    assert.ok(summary.pages.filter((p) => p.set === 'fixture').length >= 15, 'at least 15 hand-written pages');
    assert.ok(summary.micro.f1 >= 0.9, `micro F1 ${summary.micro.f1.toFixed(3)}`);
    assert.ok(summary.macroF1 >= 0.9, `macro F1 ${summary.macroF1.toFixed(3)}`);
    const fixtures = summary.pages.filter((p) => p.set === 'fixture');
    const matched = fixtures.reduce((a, p) => a + p.matchedTokens, 0);
    const f1 = (2 * matched) / fixtures.reduce((a, p) => a + p.expectedTokens + p.extractedTokens, 0);
    assert.ok(f1 >= 0.9, `hand-written pages alone: micro F1 ${f1.toFixed(3)}`);
  });

  it('the language detector, with the markup hidden, names no wrong language on the labelled pages', async () => {
    const { pages, paragraphs } = await languageAccuracy();
    assert.equal(pages.wrong + paragraphs.wrong, 0);
    assert.ok(pages.correct >= pages.texts * 0.9, `${pages.correct}/${pages.texts} pages right`);
  });
});
