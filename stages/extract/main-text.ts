/**
 * Main-text selection: which text blocks of a page are its content and which are
 * boilerplate (menus, banners, sidebars, comments, cookie notices, footers).
 *
 * The walk in extract-html.ts cuts the visible text into blocks (one per block-level box
 * or table cell) and notes for each how much of its text sat in links and in elements
 * hinted as boilerplate (boilerplate-hints.ts), and its innermost content container
 * (`<main>`, `<article>`, class "article-body" …). Then, in the spirit of Readability and
 * jusText:
 * 1. A block mostly inside boilerplate elements, or mostly link text, is never content.
 * 2. If one content container holds at least half of the page's remaining ("clean") text,
 *    the tightest such container wins and every clean block inside it is content (short
 *    ones too: list items, table cells, captions, bylines).
 * 3. Otherwise (div soup, table layouts, many small articles) each clean block is judged by
 *    its length (good / near-good / short) and then by its neighbours: near-good blocks next
 *    to good text and short blocks between good text are content, as are headings that lead
 *    into good text. Then, Readability-style, if one plain element (div, section, table …)
 *    holds nearly all of that text, what lies outside it (a cookie notice or newsletter box
 *    that is long enough to pass as prose) is dropped.
 * Linear in the number of blocks (plus containers × their nesting depth, which is capped).
 */

export interface TextBlock {
  /** Range of the walker's text pieces this block covers. */
  start: number;
  end: number;
  /** Characters of visible text (whitespace collapsed). */
  chars: number;
  /** Raw characters of text, of them inside links, of them inside boilerplate elements. */
  rawChars: number;
  linkChars: number;
  boilerplateChars: number;
  /** Innermost content container (index into the containers array), or -1. */
  container: number;
  /** 1–6 for the text of an h1–h6, else 0 */
  headingLevel: number;
}

export interface ContentContainer {
  /** Enclosing container, or -1. */
  parent: number;
  /** a hinted content container (`<main>`, `<article>`, "article-body" …); else a plain div, section, table … */
  hinted: boolean;
}

/** Above this share of link text a block is navigation, not prose (jusText uses 0.2–0.5). */
export const MAX_LINK_DENSITY = 0.5;
/** Block lengths (collapsed chars) for the context-free classes; jusText's length_low/high are 70/200. */
export const GOOD_CHARS = 150;
export const NEAR_GOOD_CHARS = 60;
/** A container must hold this share of the clean text to be taken as the page's content. */
export const CONTAINER_SHARE = 0.5;
/**
 * Among nested containers, an inner one holding this share of the best one's text (and all
 * its h1 headlines: `.entry-content` without the `.entry-header` above it is too tight) is
 * tighter and as good.
 */
export const TIGHTER_SHARE = 0.85;
/** Without hints, a plain element must hold this share of the text judged content to cut away the rest. */
export const REGION_SHARE = 0.9;
/** A heading counts as content when good text follows within this many blocks. */
const HEADING_LOOKAHEAD = 3;

type Verdict = 'bad' | 'short' | 'near-good' | 'good';

function isClean(b: TextBlock): boolean {
  if (b.rawChars === 0 || b.chars === 0) return false;
  if (b.boilerplateChars * 2 > b.rawChars) return false;
  return b.linkChars <= b.rawChars * MAX_LINK_DENSITY;
}

/** Returns, per block, whether it belongs to the main text. */
export function selectMainBlocks(blocks: readonly TextBlock[], containers: readonly ContentContainer[]): boolean[] {
  const clean = blocks.map(isClean);
  const chosen = chooseContainer(blocks, containers, clean, true, CONTAINER_SHARE);
  if (chosen >= 0) {
    return blocks.map((b, i) => clean[i]! && within(b.container, chosen, containers));
  }
  const keep = judgeByContext(blocks, clean);
  const region = chooseContainer(blocks, containers, keep, false, REGION_SHARE);
  return region < 0 ? keep : blocks.map((b, i) => keep[i]! && within(b.container, region, containers));
}

function within(container: number, target: number, containers: readonly ContentContainer[]): boolean {
  for (let c = container; c >= 0; c = containers[c]!.parent) if (c === target) return true;
  return false;
}

/**
 * The tightest container holding at least `share` of the text of the `counted` blocks (and
 * every h1 among them), considering hinted containers only or all of them; -1 if none.
 */
function chooseContainer(
  blocks: readonly TextBlock[],
  containers: readonly ContentContainer[],
  counted: readonly boolean[],
  hintedOnly: boolean,
  share: number,
): number {
  if (containers.length === 0) return -1;
  const text = new Array<number>(containers.length).fill(0);
  const headlines = new Array<number>(containers.length).fill(0);
  let total = 0;
  blocks.forEach((b, i) => {
    if (!counted[i]) return;
    total += b.chars;
    const h1 = b.headingLevel === 1 ? 1 : 0;
    for (let c = b.container; c >= 0; c = containers[c]!.parent) {
      text[c] += b.chars;
      headlines[c] += h1;
    }
  });
  if (total === 0) return -1;
  const eligible = (c: number) => !hintedOnly || containers[c]!.hinted;
  let best = -1;
  for (let c = 0; c < containers.length; c++) if (eligible(c) && (best < 0 || text[c]! > text[best]!)) best = c;
  if (best < 0 || text[best]! < total * share) return -1;
  // the tightest container inside `best` that still holds nearly all of its text
  const tighter = hintedOnly ? TIGHTER_SHARE : share;
  let tight = best;
  for (let c = 0; c < containers.length; c++) {
    if (
      eligible(c) && text[c]! >= text[best]! * tighter && text[c]! < text[tight]! &&
      headlines[c] === headlines[best] && within(c, best, containers)
    ) {
      tight = c;
    }
  }
  return tight;
}

function judgeByContext(blocks: readonly TextBlock[], clean: readonly boolean[]): boolean[] {
  const verdicts: Verdict[] = blocks.map((b, i) => {
    if (!clean[i]) return 'bad';
    if (b.headingLevel > 0) return 'short';
    if (b.chars >= GOOD_CHARS) return 'good';
    return b.chars >= NEAR_GOOD_CHARS ? 'near-good' : 'short';
  });
  const n = blocks.length;
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
    if (blocks[i]!.headingLevel === 0 || keep[i] || !clean[i]) continue;
    for (let j = i + 1; j < n && j <= i + HEADING_LOOKAHEAD; j++) {
      if (verdicts[j] === 'bad') break;
      if (verdicts[j] === 'good') {
        keep[i] = true;
        break;
      }
    }
  }
  // A page with no block long enough to judge (a stub, a short note) is all content.
  if (!keep.includes(true) && !verdicts.includes('good')) return [...clean];
  return keep;
}
