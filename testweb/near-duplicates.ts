// Near-duplicate pairs with known edit sizes, for measuring the SimHash index
// (bench/near-dup-bench.ts). Deterministic from a seed, built from the test web's own word
// lists and random helpers, shaped like the visible text of a test web page: site chrome
// (host, tagline, navigation, footer) shared by every page of a template, then an article.
//
// A pair is (original, variant): the variant is the original with exactly `editedWords`
// article words edited at distinct positions (substituted, inserted or deleted), or, for
// `unrelated` pairs, a different article in the same chrome.

import { deriveSeed, mulberry32, pick, randInt, shuffled, type Rng } from './prng.js';
import { LABELS, WORDS, phrase, type PageLanguage } from './words.js';

/** Words edited in the variant, per the issue: 0 (identical text) up to 100. */
export const EDIT_SIZES = [0, 1, 2, 5, 10, 20, 50, 100] as const;

/**
 * Ground truth: a variant is a near-duplicate of its original iff at most this fraction of
 * the original's words were edited. 2 % is up to one word in fifty: a corrected typo, a
 * changed date, byline, counter or ad line, a reworded sentence or two in a 1,000-word
 * article: the same document to a reader, which is what the crawler should store once.
 * A 5 % edit (50 words of 1,000) rewrites a paragraph: a new version, not a copy.
 */
export const NEAR_DUPLICATE_MAX_EDIT_FRACTION = 0.02;

export interface NearDuplicatePair {
  /** unique within one generated set, e.g. `edit20-7` or `unrelated-3` */
  id: string;
  kind: 'edit' | 'unrelated';
  original: string;
  variant: string;
  /** words in the original text (chrome + article) */
  words: number;
  /** article words edited (0 for unrelated pairs, which share only the chrome) */
  editedWords: number;
  /** the ground truth (see NEAR_DUPLICATE_MAX_EDIT_FRACTION) */
  nearDuplicate: boolean;
}

export interface NearDuplicateOptions {
  /** pairs per edit size (default 100) */
  pairsPerSize?: number;
  /** unrelated pairs (default: pairsPerSize × 2) */
  unrelatedPairs?: number;
  /** article length range in words (default 1000–3000) */
  minWords?: number;
  maxWords?: number;
}

const LANGS: readonly PageLanguage[] = ['en', 'de', 'fr'];

/** The text every page of one template shows around its article. */
function chrome(templateSeed: number, lang: PageLanguage): { head: string[]; foot: string[] } {
  const rng = mulberry32(deriveSeed(templateSeed, 'chrome'));
  const l = LABELS[lang];
  const host = `t${templateSeed % 1000}.site.test`;
  const head = [host, ...phrase(rng, lang, 5, 9).split(' '), l.home, l.articles, l.docs, l.blog];
  const foot = [...l.related.split(' ')];
  for (let i = 0; i < 6; i++) foot.push(...phrase(rng, lang, 2, 5).split(' '));
  foot.push(...l.contact.split(' '), ...l.rights.split(' '), host);
  return { head, foot };
}

function article(rng: Rng, lang: PageLanguage, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(pick(rng, WORDS[lang]));
  return out;
}

/** A word of `lang` other than `not`. */
function otherWord(rng: Rng, lang: PageLanguage, not: string | undefined): string {
  let w = pick(rng, WORDS[lang]);
  while (w === not) w = pick(rng, WORDS[lang]);
  return w;
}

/**
 * Exactly `count` edits of `words`: 60 % substitutions, 20 % insertions (a new word before
 * the position), 20 % deletions, at positions that are distinct and never adjacent, so two
 * edits never cancel or merge (a deletion next to an insertion would be one substitution):
 * the word-level edit distance is the edit size asked for.
 */
export function editWords(words: readonly string[], count: number, rng: Rng, lang: PageLanguage): string[] {
  if (count > Math.ceil(words.length / 2)) throw new RangeError(`cannot make ${count} non-adjacent edits in ${words.length} words`);
  const positions = new Map<number, 'sub' | 'ins' | 'del'>();
  for (const p of shuffled(rng, words.map((_, i) => i))) {
    if (positions.size === count) break;
    if (positions.has(p - 1) || positions.has(p + 1)) continue;
    const r = rng();
    positions.set(p, r < 0.6 ? 'sub' : r < 0.8 ? 'ins' : 'del');
  }
  // greedy picking can strand the last few: fill from the left where there is room
  for (let p = 0; positions.size < count && p < words.length; p += 2) {
    if (!positions.has(p) && !positions.has(p - 1) && !positions.has(p + 1)) positions.set(p, 'sub');
  }
  if (positions.size < count) throw new RangeError(`could not place ${count} non-adjacent edits in ${words.length} words`);
  const out: string[] = [];
  words.forEach((w, i) => {
    const op = positions.get(i);
    if (op === 'sub') out.push(otherWord(rng, lang, w));
    else if (op === 'ins') out.push(otherWord(rng, lang, w), w);
    else if (op !== 'del') out.push(w);
  });
  return out;
}

/**
 * The pairs for `seed`: `pairsPerSize` per edit size, then the unrelated pairs. Every pair
 * has its own template (so pairs are independent), language and article length.
 */
export function nearDuplicatePairs(seed: number, options: NearDuplicateOptions = {}): NearDuplicatePair[] {
  const perSize = options.pairsPerSize ?? 100;
  const unrelated = options.unrelatedPairs ?? perSize * 2;
  const minWords = options.minWords ?? 1000;
  const maxWords = options.maxWords ?? 3000;
  const pairs: NearDuplicatePair[] = [];
  const make = (id: string, editedWords: number | null): NearDuplicatePair => {
    const rng = mulberry32(deriveSeed(seed, id));
    const lang = pick(rng, LANGS);
    const { head, foot } = chrome(deriveSeed(seed, id, 'template'), lang);
    const n = randInt(rng, minWords, maxWords);
    const body = article(rng, lang, n);
    const variantBody = editedWords === null ? article(rng, lang, n) : editWords(body, editedWords, rng, lang);
    const words = head.length + n + foot.length;
    const edited = editedWords ?? 0;
    return {
      id,
      kind: editedWords === null ? 'unrelated' : 'edit',
      original: [...head, ...body, ...foot].join(' '),
      variant: [...head, ...variantBody, ...foot].join(' '),
      words,
      editedWords: edited,
      nearDuplicate: editedWords !== null && edited <= NEAR_DUPLICATE_MAX_EDIT_FRACTION * words,
    };
  };
  for (const size of EDIT_SIZES) {
    for (let i = 0; i < perSize; i++) pairs.push(make(`edit${size}-${i}`, size));
  }
  for (let i = 0; i < unrelated; i++) pairs.push(make(`unrelated-${i}`, null));
  return pairs;
}
