/**
 * The scoring of the article-extraction benchmark (scrapinghub/article-extraction-benchmark,
 * its evaluate.py), ported line for line so that `npm run quality:extract` prints the same
 * numbers as `python3 evaluate.py` without needing Python:
 * - a page's text is cut into `\w+` tokens (case kept) and those into 4-token shingles;
 * - per page, true/false positives and false negatives are counted over the shingle
 *   multisets and normalised to sum to 1 (a long page weighs no more than a short one);
 * - precision is the mean over pages that predicted anything (tp + fp > 0), recall the mean
 *   over pages whose truth has anything (tp + fn > 0), and F1 is that of the two means.
 */

export interface ShingleCounts {
  tp: number;
  fp: number;
  fn: number;
}

export interface BenchmarkMetrics {
  precision: number;
  recall: number;
  f1: number;
}

/**
 * Python's `re.compile(r'\w+', re.UNICODE)`: letters (Lu Ll Lt Lm Lo), numbers and '_'.
 * Combining marks are not word characters for Python, so they split words here too.
 */
const TOKEN = /[\p{L}\p{N}_]+/gu;

export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

/** evaluate.py's `_ngrams`: a text shorter than n tokens is one (shorter) shingle; no tokens, none. */
function shingles(text: string, n: number): Map<string, number> {
  const tokens = tokenize(text);
  const counts = new Map<string, number>();
  const last = Math.max(1, tokens.length - n + 1);
  for (let i = 0; i < last; i++) {
    const shingle = tokens.slice(i, i + n);
    if (shingle.length === 0) continue;
    // U+0001 cannot be part of a \w token, so joined shingles are as distinct as tuples
    const key = shingle.join('\u0001');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** evaluate.py's `string_shingle_matching`: normalised tp/fp/fn of one page. */
export function shingleCounts(truth: string, predicted: string, n = 4): ShingleCounts {
  const want = shingles(truth, n);
  const got = shingles(predicted, n);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const [key, t] of want) {
    const p = got.get(key) ?? 0;
    tp += Math.min(t, p);
    fn += Math.max(0, t - p);
  }
  for (const [key, p] of got) fp += Math.max(0, p - (want.get(key) ?? 0));
  const sum = tp + fp + fn;
  return sum > 0 ? { tp: tp / sum, fp: fp / sum, fn: fn / sum } : { tp, fp, fn };
}

function precisionOf({ tp, fp, fn }: ShingleCounts): number {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fp === 0) return 0;
  return tp / (tp + fp);
}

function recallOf({ tp, fp, fn }: ShingleCounts): number {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fn === 0) return 0;
  return tp / (tp + fn);
}

const mean = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;

/** evaluate.py's `metrics_from_tp_fp_fns`, over the pages' counts. */
export function benchmarkMetrics(pages: readonly ShingleCounts[]): BenchmarkMetrics {
  const precision = mean(pages.filter((c) => c.tp + c.fp > 0).map(precisionOf));
  const recall = mean(pages.filter((c) => c.tp + c.fn > 0).map(recallOf));
  return { precision, recall, f1: (2 * precision * recall) / (precision + recall) };
}

/** One page's F1 from its counts (for listing the worst pages). */
export function pageF1(c: ShingleCounts): number {
  const p = precisionOf(c);
  const r = recallOf(c);
  return p + r === 0 ? 0 : (2 * p * r) / (p + r);
}
