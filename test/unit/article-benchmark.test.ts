// The public article-extraction benchmark (../shared/conformance/article-extraction, not
// copied into the project): its scoring ported to TypeScript, and the main text's score.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BENCHMARK_TARGET_F1, emptyMainText, loadBenchmarkPages, loadReferenceOutputs, runExtractor, scoreOutputs } from '../../scripts/article-benchmark.js';
import { benchmarkMetrics, shingleCounts, tokenize } from '../../scripts/shingle-score.js';

describe('article-extraction benchmark', () => {
  const pages = loadBenchmarkPages();
  const refs = loadReferenceOutputs();

  it('shingle scoring as evaluate.py does it: \\w+ tokens with case kept, 4-token shingles, per-page normalised counts', () => {
    assert.deepEqual(tokenize('Don’t stop_me now, 2 times! Überall – ça'), ['Don', 't', 'stop_me', 'now', '2', 'times', 'Überall', 'ça']);
    assert.deepEqual(shingleCounts('', ''), { tp: 0, fp: 0, fn: 0 });
    // fewer than four tokens make one shorter shingle
    assert.deepEqual(shingleCounts('a b', 'a b'), { tp: 1, fp: 0, fn: 0 });
    // a b c d e: shingles abcd, bcde; predicted a b c d x: abcd, bcdx
    assert.deepEqual(shingleCounts('a b c d e', 'a b c d x'), { tp: 1 / 3, fp: 1 / 3, fn: 1 / 3 });
    assert.deepEqual(shingleCounts('a b c d', 'A B C D'), { tp: 0, fp: 0.5, fn: 0.5 });
    // a page that predicts nothing counts for recall only; precision is the mean over pages that predicted
    const m = benchmarkMetrics([shingleCounts('a b c d', ''), shingleCounts('a b c d', 'a b c d')]);
    assert.deepEqual([m.precision, m.recall], [1, 0.5]);
  });

  it('gives the numbers `python3 evaluate.py` gives for the reference outputs (to 6 decimals)', () => {
    // from evaluate.py run over reference-outputs/ (copied to output/) on this machine
    const python: Record<string, [number, number, number]> = {
      'html-text': [0.511933, 0.993786, 0.67576],
      readability_js: [0.908464, 0.979921, 0.942841],
      trafilatura: [0.927463, 0.978894, 0.952485],
      boilerpipe: [0.862227, 0.883168, 0.872572],
    };
    for (const [name, [p, r, f1]] of Object.entries(python)) {
      const { metrics } = scoreOutputs(pages, (id) => refs.get(name)!.get(id) ?? '');
      assert.deepEqual([metrics.precision, metrics.recall, metrics.f1].map((x) => Number(x.toFixed(6))), [p, r, f1], name);
    }
  });

  it(`main text: F1 >= ${BENCHMARK_TARGET_F1} on the benchmark, and never empty where the page has text`, () => {
    const run = runExtractor(pages, { warmups: 0 });
    const { metrics } = scoreOutputs(pages, (id) => run.mainText.get(id) ?? '');
    const figures = `P ${metrics.precision.toFixed(3)} R ${metrics.recall.toFixed(3)} F1 ${metrics.f1.toFixed(3)}`;
    assert.ok(metrics.f1 >= BENCHMARK_TARGET_F1, `${figures} (npm run quality:extract lists the worst pages)`);
    assert.deepEqual(emptyMainText(pages, run), []);
  });
});
