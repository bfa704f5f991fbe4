/**
 * The public article-extraction benchmark (121 real article pages with their ground-truth
 * article body, and what well-known extractors made of them), read from the shared folder
 * beside the repository: it is not copied into the project. Scored with shingle-score.ts,
 * the benchmark's own scoring.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { extractHtml } from '../stages/extract/extract-html.js';
import { benchmarkMetrics, pageF1, shingleCounts, type BenchmarkMetrics, type ShingleCounts } from './shingle-score.js';

const BENCHMARK = 'conformance/article-extraction';
/**
 * Below this F1 on the benchmark, `npm run quality:extract` and the test suite fail. The score is
 * deterministic (the same extractor on the same pages), so the target sits just under where the
 * extractor stands: a change to the main-text rules for other kinds of pages (documentation,
 * listings) must not cost the articles. Readability.js scores 0.943 here.
 */
export const BENCHMARK_TARGET_F1 = 0.97;

export interface BenchmarkPage {
  id: string;
  url: string;
  html: string;
  truth: string;
}

/** The repository's root: the nearest folder above this module with a package.json (works from dist/ and from source). */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  return dir;
}

/** `../shared/…` beside the repository, else `/work/shared/…` (CI clones the repository elsewhere). */
export function benchmarkDir(): string {
  const candidates = [path.resolve(repoRoot(), '..', 'shared', BENCHMARK), path.join('/work/shared', BENCHMARK)];
  const found = candidates.find((d) => existsSync(path.join(d, 'ground-truth.json')));
  if (found === undefined) throw new Error(`the article-extraction benchmark is not in ${candidates.join(' nor ')}`);
  return found;
}

const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));

export function loadBenchmarkPages(dir = benchmarkDir()): BenchmarkPage[] {
  const truth = readJson(path.join(dir, 'ground-truth.json')) as Record<string, { url: string; articleBody: string }>;
  return Object.entries(truth).map(([id, t]) => ({
    id,
    url: t.url,
    html: gunzipSync(readFileSync(path.join(dir, 'html', `${id}.html.gz`))).toString('utf8'),
    truth: t.articleBody ?? '',
  }));
}

/** The reference extractors' outputs by name (`trafilatura`, `readability_js`, `html-text` …): id → article body. */
export function loadReferenceOutputs(dir = benchmarkDir()): Map<string, Map<string, string>> {
  const refs = new Map<string, Map<string, string>>();
  const refDir = path.join(dir, 'reference-outputs');
  for (const file of readdirSync(refDir).filter((f) => f.endsWith('.json')).sort()) {
    let data = readJson(path.join(refDir, file)) as Record<string, { articleBody?: string }>;
    // evaluate.py also accepts {version, output}
    if ('output' in data && 'version' in data) data = data.output as unknown as Record<string, { articleBody?: string }>;
    refs.set(file.slice(0, -'.json'.length), new Map(Object.entries(data).map(([id, v]) => [id, v.articleBody ?? ''])));
  }
  return refs;
}

export interface PageResult {
  id: string;
  counts: ShingleCounts;
  f1: number;
}

export interface Scored {
  metrics: BenchmarkMetrics;
  pages: PageResult[];
}

/** Scores predicted article bodies (id → text; a missing id counts as empty) against the truth. */
export function scoreOutputs(pages: readonly BenchmarkPage[], predicted: (id: string) => string): Scored {
  const results = pages.map((p) => {
    const counts = shingleCounts(p.truth, predicted(p.id));
    return { id: p.id, counts, f1: pageF1(counts) };
  });
  return { metrics: benchmarkMetrics(results.map((r) => r.counts)), pages: results };
}

export interface ExtractorRun {
  /** id → main text, id → full text, id → where the main text came from */
  mainText: Map<string, string>;
  fullText: Map<string, string>;
  textSource: Map<string, string>;
  /** per page, ms of extractHtml (all it does: parse, walk, main text, metadata), the median of `repeats` runs */
  ms: number[];
}

/**
 * Runs extractHtml over every page, timing each: `warmups` passes over all pages first, so
 * the JIT has settled, then `repeats` timed passes (each page's median is its time).
 */
export function runExtractor(pages: readonly BenchmarkPage[], opts: { warmups?: number; repeats?: number } = {}): ExtractorRun {
  const { warmups = 1, repeats = 1 } = opts;
  for (let w = 0; w < warmups; w++) for (const p of pages) extractHtml(p.html, p.url);
  const run: ExtractorRun = { mainText: new Map(), fullText: new Map(), textSource: new Map(), ms: [] };
  const times = pages.map(() => [] as number[]);
  for (let r = 0; r < repeats; r++) {
    pages.forEach((p, i) => {
      const started = performance.now();
      const doc = extractHtml(p.html, p.url);
      times[i]!.push(performance.now() - started);
      run.mainText.set(p.id, doc.mainText);
      run.fullText.set(p.id, doc.text);
      run.textSource.set(p.id, doc.textSource);
    });
  }
  run.ms = times.map((t) => quantile(t, 0.5));
  return run;
}

/** The q-quantile (0..1) of `xs`, nearest rank. */
export function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

/** Pages whose main text is empty while their full text has more than this: the failure the fallback exists for. */
export const READABLE_CHARS = 500;

export function emptyMainText(pages: readonly BenchmarkPage[], run: ExtractorRun): string[] {
  return pages.filter((p) => (run.mainText.get(p.id) ?? '').trim() === '' && (run.fullText.get(p.id) ?? '').length > READABLE_CHARS).map((p) => p.id);
}
