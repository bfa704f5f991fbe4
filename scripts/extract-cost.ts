/**
 * node dist/scripts/extract-cost.js — extractHtml's time per page on the article-extraction
 * benchmark's 121 pages (scripts/article-benchmark.ts), and what share of the main text its
 * markdown adds: a quick before/after check for a change to the extract thread's work, not a
 * benchmark of the crawl. Each page's time is its median of `--repeats` runs (default 7) after
 * two warm-up passes over all pages.
 */
import { extractHtml } from '../stages/extract/extract-html.js';
import { loadBenchmarkPages, quantile, runExtractor } from './article-benchmark.js';

const at = process.argv.indexOf('--repeats');
const repeats = at > 0 ? Number(process.argv[at + 1]) : 7;
const pages = loadBenchmarkPages();
const run = runExtractor(pages, { warmups: 2, repeats });
const mean = run.ms.reduce((a, b) => a + b, 0) / run.ms.length;
console.log(
  `extractHtml per page over ${pages.length} pages: median ${quantile(run.ms, 0.5).toFixed(2)} ms, ` +
    `p95 ${quantile(run.ms, 0.95).toFixed(2)} ms, mean ${mean.toFixed(2)} ms (median of ${repeats} runs each)`,
);
let text = 0;
let markdown = 0;
for (const p of pages) {
  const doc = extractHtml(p.html, p.url) as { mainText: string; markdown?: string };
  text += doc.mainText.length;
  markdown += doc.markdown?.length ?? 0;
}
if (markdown > 0) console.log(`markdown: ${(markdown / pages.length / 1024).toFixed(1)} KB a page, ${(markdown / text).toFixed(2)} times the main text's characters`);
