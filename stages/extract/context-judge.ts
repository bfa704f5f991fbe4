/**
 * For pages without structure to score (no element holds the paragraphs: div soup, text
 * straight in the body), jusText's way: each block is judged by its length and then by its
 * neighbours. Long blocks are content; near-good ones next to long ones are too, short ones
 * only between long ones, and headings that lead into long text within a few blocks.
 * Mostly-link blocks are never content here. A page with no long block at all (a stub, a
 * short note) keeps everything else it had.
 */
import type { TextBlock } from './page-layout.js';

/** Block lengths (collapsed chars) for the context-free classes; jusText's length_low/high are 70/200. */
const GOOD_CHARS = 150;
const NEAR_GOOD_CHARS = 60;
/** A heading counts as content when good text follows within this many blocks. */
const HEADING_LOOKAHEAD = 3;

type Verdict = 'bad' | 'short' | 'near-good' | 'good';

/** Clears in `kept` the blocks their context does not support. */
export function judgeByContext(blocks: readonly TextBlock[], kept: Uint8Array): void {
  const n = blocks.length;
  const verdicts: Verdict[] = blocks.map((b, i) => {
    if (kept[i] === 0 || b.linkChars * 2 > b.rawChars) return 'bad';
    if (b.headingLevel > 0) return 'short';
    if (b.chars >= GOOD_CHARS) return 'good';
    return b.chars >= NEAR_GOOD_CHARS ? 'near-good' : 'short';
  });
  if (!verdicts.includes('good')) {
    verdicts.forEach((v, i) => v === 'bad' && (kept[i] = 0));
    return;
  }
  // the nearest good/bad verdict before and after each block, skipping short and near-good ones
  const before = new Array<Verdict | null>(n);
  const after = new Array<Verdict | null>(n);
  let last: Verdict | null = null;
  for (let i = 0; i < n; i++) {
    before[i] = last;
    if (verdicts[i] === 'good' || verdicts[i] === 'bad') last = verdicts[i]!;
  }
  last = null;
  for (let i = n - 1; i >= 0; i--) {
    after[i] = last;
    if (verdicts[i] === 'good' || verdicts[i] === 'bad') last = verdicts[i]!;
  }
  const keep = verdicts.map((v, i) => {
    if (v === 'good') return true;
    if (v === 'bad') return false;
    if (v === 'near-good') return before[i] === 'good' || after[i] === 'good';
    return before[i] === 'good' && after[i] === 'good';
  });
  for (let i = 0; i < n; i++) {
    if (blocks[i]!.headingLevel === 0 || keep[i] || verdicts[i] === 'bad') continue;
    for (let j = i + 1; j < n && j <= i + HEADING_LOOKAHEAD; j++) {
      if (verdicts[j] === 'bad') break;
      if (verdicts[j] === 'good') {
        keep[i] = true;
        break;
      }
    }
  }
  for (let i = 0; i < n; i++) if (!keep[i]) kept[i] = 0;
}
