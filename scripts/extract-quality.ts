/**
 * npm run quality:extract — prints token-level precision, recall and F1 of the main text
 * extracted from the labelled pages (see scripts/extraction-eval.ts), per page and overall.
 * Exits 1 when the overall (micro) F1 is below the target, so CI can run it too.
 */
import { evaluateExtraction, languageAccuracy, type PageScore } from './extraction-eval.js';
import { extractHtml } from '../stages/extract/extract-html.js';
import { renderPage } from '../testweb/render-page.js';
import { buildSiteModel } from '../testweb/site-model.js';
import type { HtmlResource } from '../testweb/model-types.js';

const TARGET_F1 = 0.9;

const pct = (x: number) => (100 * x).toFixed(1).padStart(5);

function line(p: PageScore): string {
  return `${pct(p.precision)}  ${pct(p.recall)}  ${pct(p.f1)}  ${String(p.expectedTokens).padStart(6)}  ${String(p.extractedTokens).padStart(6)}  ${p.set.padEnd(7)}  ${p.name}`;
}

const summary = await evaluateExtraction();
console.log('    P%     R%    F1%  expect   got    set      page');
for (const p of summary.pages) console.log(line(p));
for (const set of ['fixture', 'testweb'] as const) {
  const pages = summary.pages.filter((p) => p.set === set);
  const m = pages.reduce((a, p) => ({ e: a.e + p.expectedTokens, g: a.g + p.extractedTokens, x: a.x + p.matchedTokens }), { e: 0, g: 0, x: 0 });
  const P = m.x / Math.max(1, m.g);
  const R = m.x / Math.max(1, m.e);
  const macro = pages.reduce((a, p) => a + p.f1, 0) / Math.max(1, pages.length);
  console.log(`${set}: ${pages.length} pages, micro P ${pct(P)} R ${pct(R)} F1 ${pct(P + R === 0 ? 0 : (2 * P * R) / (P + R))}, macro F1 ${pct(macro)}`);
}
const { micro, macroF1 } = summary;
console.log(`overall: ${summary.pages.length} pages, micro P ${pct(micro.precision)} R ${pct(micro.recall)} F1 ${pct(micro.f1)}, macro F1 ${pct(macroF1)} (target F1 >= ${TARGET_F1})`);
const languages = await languageAccuracy();
for (const [what, a] of Object.entries(languages)) {
  console.log(`language detection (markup hidden), ${what}: ${a.correct}/${a.texts} right, ${a.unsure} unsure, ${a.wrong} wrong`);
}

// extraction cost on the test web's ~25 KB pages (all of extractHtml: parse, walk, main text)
const model = buildSiteModel({ hosts: 10, seed: 1 });
const pages = model.hosts.flatMap((h) => [...h.resources.values()].filter((r): r is HtmlResource => r.kind === 'html').map((r) => renderPage(h.name, r)));
for (const html of pages.slice(0, 50)) extractHtml(html, 'http://warm.up/');
const started = performance.now();
for (const html of pages) extractHtml(html, 'http://bench.test/');
const kb = pages.reduce((a, p) => a + p.length, 0) / pages.length / 1024;
console.log(`extraction time: ${((performance.now() - started) / pages.length).toFixed(2)} ms/page over ${pages.length} test-web pages of ${kb.toFixed(1)} KB on average`);
if (micro.f1 < TARGET_F1) process.exitCode = 1;
