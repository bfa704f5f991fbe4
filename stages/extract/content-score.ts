/**
 * Where a page's content is: Mozilla Readability's candidate scoring, on the boxes of the
 * page's layout instead of a live DOM.
 * - Every paragraph (a box's own text of at least 25 characters) scores
 *   1 + its commas + 1 + one per 100 characters (at most 3), given to the box that holds it
 *   and, halved and then divided by three times the level, to up to four more ancestors.
 * - A candidate box starts from its tag (div +5, lists −3, headings −5 …) and class weight,
 *   and its final score is scaled by its share of text outside links.
 * - The best one, moved up to an ancestor when several near-best candidates share it or
 *   when its parent scores as well, is the content; so are its siblings that score at least
 *   a fifth as much, and sibling paragraphs of prose.
 * - For documents, it also moves up when it is one of several sections of a kind, or a data
 *   table whose introduction sits beside it (climbThroughSections, climbOutOfTable).
 * Linear in blocks and boxes (ancestor walks are at most five deep, or bounded by the few
 * top candidates).
 */
import type { BoxStats } from './box-stats.js';
import type { PageLayout } from './page-layout.js';

/** Readability's defaults: minimum paragraph length, ancestors scored, candidates compared. */
const MIN_PARAGRAPH_CHARS = 25;
const SCORED_ANCESTORS = 5;
const TOP_CANDIDATES = 5;
/** Near-best candidates (at least this share of the best) that share an ancestor make it the content. */
const ALTERNATIVE_SHARE = 0.75;
const MIN_ALTERNATIVES = 3;

/** Boxes whose own text is one paragraph: the paragraph is the box, its parent the first candidate. */
const PARAGRAPH_BOXES = new Set(['p', 'li', 'dt', 'dd', 'pre', 'td', 'th', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'figcaption', 'address', 'caption']);

const TAG_WEIGHT: Readonly<Record<string, number>> = {
  div: 5, pre: 3, td: 3, blockquote: 3,
  address: -3, ol: -3, ul: -3, dl: -3, dd: -3, dt: -3, li: -3, form: -3,
  h1: -5, h2: -5, h3: -5, h4: -5, h5: -5, h6: -5, th: -5,
};

export interface ContentRegion {
  /** the chosen box, or -1 when the page has no paragraph (then everything counts) */
  top: number;
  /** the boxes that are content with all they hold: the top box and its siblings that belong with it */
  roots: number[];
  /** blocks that are content on their own: paragraphs directly beside the top box */
  loose: number[];
}

const isRoot = (layout: PageLayout, box: number) => box < 0 || layout.boxes[box]!.tag === 'body' || layout.boxes[box]!.tag === 'html';

/** Whether `box` is `ancestor` or inside it. */
function within(layout: PageLayout, box: number, ancestor: number): boolean {
  for (let b = box; b >= 0; b = layout.boxes[b]!.parent) if (b === ancestor) return true;
  return false;
}

/** In a listing, these boxes are its items: each is a paragraph, however short. */
const ITEM_BOXES = new Set(['li', 'dt', 'dd', 'td', 'th']);

/** `listing`: the page's links are its content, so items score as paragraphs and links weigh as any text. */
export function scoreBoxes(layout: PageLayout, stats: BoxStats, weightClasses: boolean, listing = false): Float64Array {
  const { boxes } = layout;
  const score = new Float64Array(boxes.length).fill(NaN); // NaN: not a candidate
  const initialize = (b: number) => {
    if (Number.isNaN(score[b]!)) score[b] = (TAG_WEIGHT[boxes[b]!.tag] ?? 0) + (weightClasses ? boxes[b]!.weight : 0);
  };
  for (let b = 0; b < boxes.length; b++) {
    const chars = stats.ownChars[b]!;
    const box = boxes[b]!;
    if (chars < MIN_PARAGRAPH_CHARS && !(listing && chars > 0 && ITEM_BOXES.has(box.tag))) continue;
    // text beside child boxes is a paragraph of its own inside the box (Readability wraps it in a <p>)
    const paragraphBox = PARAGRAPH_BOXES.has(box.tag) || box.children === 0;
    let ancestor = paragraphBox ? box.parent : b;
    const own = 1 + stats.ownCommas[b]! + 1 + Math.min(3, Math.floor(chars / 100));
    for (let level = 0; level < SCORED_ANCESTORS && ancestor >= 0; level++) {
      initialize(ancestor);
      score[ancestor] += own / (level === 0 ? 1 : level === 1 ? 2 : level * 3);
      ancestor = boxes[ancestor]!.parent;
    }
  }
  if (!listing) for (let b = 0; b < boxes.length; b++) if (!Number.isNaN(score[b]!)) score[b] = score[b]! * (1 - stats.linkDensity(b));
  return score;
}

/** `listing`: as for scoreBoxes; then the lists beside the best one, of its kind, belong to it too. */
export function chooseRegion(layout: PageLayout, stats: BoxStats, score: Float64Array, blockText: (i: number) => string, listing = false): ContentRegion {
  const { boxes } = layout;
  const ranked: number[] = [];
  for (let b = 0; b < boxes.length; b++) if (!Number.isNaN(score[b]!)) ranked.push(b);
  ranked.sort((a, b) => score[b]! - score[a]!);
  let top = ranked[0] ?? -1;
  if (top < 0 || isRoot(layout, top)) return everything(layout);

  top = commonAncestorOfAlternatives(layout, score, ranked.slice(0, TOP_CANDIDATES), top);
  if (Number.isNaN(score[top]!)) score[top] = 0;
  top = climbWhileParentScores(layout, score, top);
  top = climbThroughSections(layout, stats, top);
  top = climbOutOfTable(layout, stats, top);
  // a lone child is no different from its parent, whose siblings may belong to the content too
  for (let p = boxes[top]!.parent; !isRoot(layout, p) && boxes[p]!.children === 1 && stats.ownChars[p] === 0; p = boxes[p]!.parent) top = p;
  return { top, ...withSiblings(layout, stats, score, top, blockText, listing) };
}

/** A page without a paragraph to score: all of it is the content (cleaning still applies). */
function everything(layout: PageLayout): ContentRegion {
  const roots: number[] = [];
  layout.boxes.forEach((b, i) => b.parent < 0 && roots.push(i));
  const loose: number[] = [];
  layout.blocks.forEach((b, i) => b.box < 0 && loose.push(i));
  return { top: -1, roots, loose };
}

/** Readability: when at least three near-best candidates sit inside one ancestor of the best, that ancestor is the content. */
function commonAncestorOfAlternatives(layout: PageLayout, score: Float64Array, ranked: number[], top: number): number {
  const alternatives = ranked.slice(1).filter((b) => score[b]! / score[top]! >= ALTERNATIVE_SHARE);
  if (alternatives.length < MIN_ALTERNATIVES) return top;
  for (let p = layout.boxes[top]!.parent; !isRoot(layout, p); p = layout.boxes[p]!.parent) {
    let inside = 0;
    for (const a of alternatives) if (within(layout, a, p)) inside++;
    if (inside >= MIN_ALTERNATIVES) return p;
  }
  return top;
}

/** Readability: a parent that scores higher than the child (and at least a third of the best) is the better content. */
function climbWhileParentScores(layout: PageLayout, score: Float64Array, top: number): number {
  let last = score[top]!;
  const threshold = last / 3;
  for (let p = layout.boxes[top]!.parent; !isRoot(layout, p); p = layout.boxes[p]!.parent) {
    if (Number.isNaN(score[p]!)) continue;
    if (score[p]! < threshold) break;
    if (score[p]! > last) return p;
    last = score[p]!;
  }
  return top;
}

/** A box (not a cell) holding this many cells, and most of its text in them, is a data table. */
const TABLE_CELLS = 3;
const TABLE_TEXT_SHARE = 0.8;

/**
 * A data table's cells score as paragraphs, so a reference page's table (PostgreSQL's system
 * catalogs: a column per row) outscores the few paragraphs that introduce it. When the best box
 * is a table, or wraps one, the content is its nearest ancestor (of the few nearest) that adds
 * prose beside it, unless the ancestor adds mostly links. (A cell of a table layout holding an
 * article is no data table.)
 */
function climbOutOfTable(layout: PageLayout, stats: BoxStats, top: number): number {
  const { boxes, blocks } = layout;
  if (!isDataTable(layout, top)) return top;
  const { firstBlock, endBlock } = boxes[top]!;
  for (let a = boxes[top]!.parent, level = 0; level < SECTION_LEVELS && !isRoot(layout, a); a = boxes[a]!.parent, level++) {
    const added = stats.chars[a]! - stats.chars[top]!;
    if (added > 0 && stats.linkChars[a]! - stats.linkChars[top]! >= added * PROSE_LINK_DENSITY) return top;
    for (let i = boxes[a]!.firstBlock; i < boxes[a]!.endBlock; i++) {
      if (i >= firstBlock && i < endBlock) continue;
      const b = blocks[i]!;
      if (b.chars >= SECTION_PROSE_CHARS && b.linkChars < b.rawChars * PROSE_LINK_DENSITY && b.chromeChars * 2 <= b.rawChars && b.unlikelyChars * 2 <= b.rawChars) return a;
    }
  }
  return top;
}

const CELLS = new Set(['td', 'th']);

function isDataTable(layout: PageLayout, box: number): boolean {
  const { boxes, blocks } = layout;
  if (CELLS.has(boxes[box]!.tag)) return false;
  let cells = 0;
  let lastCell = -1;
  let inCells = 0;
  let all = 0;
  for (let i = boxes[box]!.firstBlock; i < boxes[box]!.endBlock; i++) {
    const b = blocks[i]!;
    all += b.chars;
    let c = b.box;
    while (c >= 0 && c !== box && !CELLS.has(boxes[c]!.tag)) c = boxes[c]!.parent;
    if (c < 0 || c === box) continue;
    inCells += b.chars;
    if (c !== lastCell) cells++;
    lastCell = c;
  }
  return cells >= TABLE_CELLS && inCells >= all * TABLE_TEXT_SHARE;
}

/** Ancestors of the best box looked at for sibling sections, at each step up. */
const SECTION_LEVELS = 3;
/** A sibling section with this much text (counted characters), and less than PROSE_LINK_DENSITY of it in links, holds prose. */
const SECTION_PROSE_CHARS = 100;
const PROSE_LINK_DENSITY = 0.25;

/**
 * A document split into sections (DocBook's div.sect1, Sphinx's and Node's section, AsciiDoc's
 * div.sect1): paragraphs score the section they sit in, so the best box is one section of
 * several (git's manual pages kept one of their eight). When the best box, or one of its few
 * nearest ancestors, opens with a heading and has a sibling of its kind (same tag and class)
 * that opens with a heading of the same level and holds prose, the content is their parent;
 * and so on up.
 */
function climbThroughSections(layout: PageLayout, stats: BoxStats, top: number): number {
  const { boxes } = layout;
  let siblings: Siblings | null = null;
  for (;;) {
    let found = -1;
    for (let x = top, level = 0; level < SECTION_LEVELS && !isRoot(layout, boxes[x]!.parent); level++, x = boxes[x]!.parent) {
      siblings ??= siblingLinks(layout);
      if (hasProseSiblingOfKind(layout, stats, siblings, x)) {
        found = boxes[x]!.parent;
        break;
      }
    }
    if (found < 0) return top;
    top = found;
  }
}

interface Siblings {
  firstChild: Int32Array;
  nextSibling: Int32Array;
}

/** Each box's first child and next sibling (boxes are in document order, children after their parent). */
function siblingLinks(layout: PageLayout): Siblings {
  const n = layout.boxes.length;
  const firstChild = new Int32Array(n).fill(-1);
  const nextSibling = new Int32Array(n).fill(-1);
  const lastChild = new Int32Array(n).fill(-1);
  for (let b = 0; b < n; b++) {
    const p = layout.boxes[b]!.parent;
    if (p < 0) continue;
    if (lastChild[p]! >= 0) nextSibling[lastChild[p]!] = b;
    else firstChild[p] = b;
    lastChild[p] = b;
  }
  return { firstChild, nextSibling };
}

function hasProseSiblingOfKind(layout: PageLayout, stats: BoxStats, siblings: Siblings, x: number): boolean {
  const box = layout.boxes[x]!;
  const level = openingHeading(layout, x);
  // a div without a class is of no kind: page layouts are made of them (an article's and its comments' alike)
  if (level === 0 || (box.tag === 'div' && box.cls === '')) return false;
  for (let c = siblings.firstChild[box.parent]!; c >= 0; c = siblings.nextSibling[c]!) {
    const sib = layout.boxes[c]!;
    if (c === x || sib.tag !== box.tag || sib.cls !== box.cls || openingHeading(layout, c) !== level) continue;
    if (stats.chars[c]! >= SECTION_PROSE_CHARS && stats.linkDensity(c) < PROSE_LINK_DENSITY) return true;
  }
  return false;
}

/** The level of the heading a box opens with, else 0: sections of one document open with headings of one level. */
function openingHeading(layout: PageLayout, box: number): number {
  const { firstBlock, endBlock } = layout.boxes[box]!;
  return firstBlock < endBlock ? layout.blocks[firstBlock]!.headingLevel : 0;
}

/** Sentence-ending punctuation: a short linkless paragraph that ends a sentence is prose. */
const SENTENCE_END = /\.( |$)/;

/** The top box and the siblings that belong with it. */
function withSiblings(
  layout: PageLayout,
  stats: BoxStats,
  score: Float64Array,
  top: number,
  blockText: (i: number) => string,
  listing: boolean,
): Pick<ContentRegion, 'roots' | 'loose'> {
  const { boxes, blocks } = layout;
  const parent = boxes[top]!.parent;
  const roots: number[] = [];
  const loose: number[] = [];
  if (parent < 0) return { roots: [top], loose };
  // a top box reached by climbing out of lone children may not be a candidate: it scores 0 then
  const threshold = Math.max(10, (Number.isNaN(score[top]!) ? 0 : score[top]!) * 0.2);
  const isProse = (chars: number, linkDensity: number, text: () => string) =>
    (chars > 80 && linkDensity < 0.25) || (chars > 0 && chars <= 80 && linkDensity === 0 && SENTENCE_END.test(text()));
  const p = boxes[parent]!;
  let i = p.firstBlock;
  while (i < p.endBlock) {
    const b = blocks[i]!;
    if (b.box === parent) {
      // text directly in the parent: a paragraph beside the top box
      if (isProse(b.chars, b.rawChars === 0 ? 0 : b.linkChars / b.rawChars, () => blockText(i))) loose.push(i);
      i++;
      continue;
    }
    // the child box of the parent that holds block i
    let c = b.box;
    while (c >= 0 && boxes[c]!.parent !== parent) c = boxes[c]!.parent;
    if (c < 0) {
      i++;
      continue;
    }
    const child = boxes[c]!;
    const keep =
      c === top ||
      (listing && child.tag === boxes[top]!.tag && child.cls === boxes[top]!.cls) ||
      (!Number.isNaN(score[c]!) && score[c]! >= threshold) ||
      ((child.tag === 'p' || child.children === 0) &&
        isProse(stats.chars[c]!, stats.linkDensity(c), () => blocksText(child.firstBlock, child.endBlock, blockText)));
    if (keep) roots.push(c);
    i = Math.max(child.endBlock, i + 1);
  }
  return { roots, loose };
}

function blocksText(from: number, to: number, blockText: (i: number) => string): string {
  let s = '';
  for (let i = from; i < to; i++) s += (s ? ' ' : '') + blockText(i);
  return s;
}
