/**
 * node dist/scripts/extract-cost.js [--against OTHER_DIST] [--repeats N] — extractHtml's time
 * per page on the article-extraction benchmark's 121 pages (scripts/article-benchmark.ts): a
 * quick before/after check of a change to the extract thread's work, not a crawl benchmark.
 * With `--against`, the extractHtml of another build (the `dist` folder of a checkout of the
 * code before the change) is timed in the same process, page by page in turn with this one,
 * so that both see the same load on a shared machine. Each page's time is its fastest of N
 * runs (default 15) after two warm-up passes; the median, p95 and mean over pages are printed,
 * and the markdown's size beside the main text's.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { extractHtml } from '../stages/extract/extract-html.js';
import { Walker } from '../stages/extract/html-walker.js';
import { parseDocument } from '../stages/extract/text-run-parse.js';
import { chunkedTextAdapter } from '../stages/extract/chunked-text-adapter.js';
import { documentBaseUrl, resolveHref } from '../stages/extract/links.js';
import { loadBenchmarkPages, quantile } from './article-benchmark.js';

type Extract = (html: string, url: string) => { mainText: string; markdown?: string };

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
}

const repeats = Number(option('--repeats') ?? 15);
const against = option('--against');
const pages = loadBenchmarkPages();
const extractors: Array<[string, Extract]> = [['this build', extractHtml]];
if (against !== undefined) {
  const other = (await import(pathToFileURL(path.resolve(against, 'stages/extract/extract-html.js')).href)) as { extractHtml: Extract };
  extractors.push([`the build in ${against}`, other.extractHtml]);
}

for (let w = 0; w < 2; w++) for (const [, extract] of extractors) for (const p of pages) extract(p.html, p.url);
const fastest = extractors.map(() => pages.map(() => Infinity));
for (let r = 0; r < repeats; r++) {
  pages.forEach((p, i) => {
    // alternate which build goes first, so neither always runs on a warmer cache
    for (let k = 0; k < extractors.length; k++) {
      const e = (k + r + i) % extractors.length;
      const started = performance.now();
      extractors[e]![1](p.html, p.url);
      fastest[e]![i] = Math.min(fastest[e]![i]!, performance.now() - started);
    }
  });
}

const kb = pages.reduce((a, p) => a + p.html.length, 0) / pages.length / 1024;
console.log(`extractHtml per page on ${pages.length} pages (${kb.toFixed(0)} KB on average), each page's fastest of ${repeats} runs:`);
extractors.forEach(([name], e) => {
  const ms = fastest[e]!;
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  console.log(`  ${name}: median ${quantile(ms, 0.5).toFixed(2)} ms, p95 ${quantile(ms, 0.95).toFixed(2)} ms, mean ${mean.toFixed(2)} ms`);
});
// the rendering alone (the walk's recording of marks is in the times above): Walker as extractHtml drives it
const render: number[] = [];
let text = 0;
let markdown = 0;
for (const p of pages) {
  const walker = new Walker();
  walker.walk(parseDocument(p.html, { treeAdapter: chunkedTextAdapter }));
  const { main } = walker.texts();
  const base = documentBaseUrl(walker.baseHref, p.url);
  let md = '';
  let best = Infinity;
  for (let r = 0; r < repeats; r++) {
    const started = performance.now();
    md = walker.markdown(main.blocks, (href) => resolveHref(href, base));
    best = Math.min(best, performance.now() - started);
  }
  render.push(best);
  text += main.text.length;
  markdown += md.length;
}
console.log(`  of which rendering the markdown (walker.markdown): median ${quantile(render, 0.5).toFixed(3)} ms, p95 ${quantile(render, 0.95).toFixed(3)} ms`);
console.log(`markdown: ${(markdown / pages.length / 1024).toFixed(1)} KB a page on average, ${(markdown / text).toFixed(2)} times the main text's characters`);
