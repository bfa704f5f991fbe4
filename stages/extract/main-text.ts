/**
 * Main-text selection: which text blocks of a page are its content, after Mozilla
 * Readability (which scores 0.947 on the article-extraction benchmark), on the layout the
 * one walk of html-walker.ts records instead of on a live DOM, so that it costs a few
 * linear passes over blocks and boxes rather than a second parse.
 * 1. Blocks mostly in page chrome (nav, aside, footer, ARIA landmarks) never count; blocks
 *    mostly in elements whose class names boilerplate (comments, sidebars …) do not count
 *    on the first attempt.
 * 2. Boxes are scored and the content region chosen (content-score.ts), then cleaned
 *    (content-clean.ts). Inside it, what the article-extraction benchmark's ground truth
 *    (and a reader) leaves out goes too: the heading that repeats the page title (it is
 *    `title`), bylines and date lines, captions and photo credits, ad labels, rows of links,
 *    and link lines after the last text. A page without structure to score is judged
 *    block by block (context-judge.ts).
 * 3. Like Readability, an attempt that leaves little text is tried again with fewer rules
 *    (unlikely classes kept, then class weights ignored, then no conditional cleaning); a
 *    looser attempt wins only if it finds much more. A page whose every attempt is empty,
 *    while it has visible text, gets its full text, marked as such
 *    (`text_source = fallback_full`): the main text is never empty when the page is not.
 * 4. Not Readability's: a listing attempt, for pages whose links are the content (tables of
 *    contents, indexes), which wins where the prose found little or the links are most of
 *    the same content; and asides in the content's flow (DocBook's sidebars) kept.
 */
import { BoxStats } from './box-stats.js';
import { cleanContent } from './content-clean.js';
import { chooseRegion, scoreBoxes } from './content-score.js';
import { judgeByContext } from './context-judge.js';
import { isAdLabel, isBylineLine, isDateLine } from './furniture-lines.js';
import type { PageLayout, TextBlock } from './page-layout.js';

export type TextSource = 'main' | 'fallback_full';

export interface MainText {
  text: string;
  source: TextSource;
  /** the blocks `text` is made of, one line each (indices into the layout's blocks, ascending) */
  blocks: number[];
}

interface Attempt {
  stripUnlikely: boolean;
  weightClasses: boolean;
  cleanConditionally: boolean;
  /** links are the content: list items score as paragraphs, link text counts as any text */
  listing: boolean;
}

const ATTEMPTS: readonly Attempt[] = [
  { stripUnlikely: true, weightClasses: true, cleanConditionally: true, listing: false },
  { stripUnlikely: false, weightClasses: true, cleanConditionally: true, listing: false },
  { stripUnlikely: false, weightClasses: false, cleanConditionally: true, listing: false },
  { stripUnlikely: false, weightClasses: false, cleanConditionally: false, listing: false },
];
/** A table of contents, an index, a listing: the page's links are its content. */
const LISTING: Attempt = { stripUnlikely: true, weightClasses: true, cleanConditionally: false, listing: true };
/**
 * An attempt with less text than this is tried again with fewer rules (Readability's
 * `charThreshold` is 500 characters of raw textContent, indentation included; this counts
 * collapsed text, and a post of a few sentences is a post).
 */
const MIN_ARTICLE_CHARS = 300;
/** A looser attempt must find this many times the text of a stricter one to replace it; so must a listing. */
const LOOSER_GAIN = 2;
/** A listing replaces prose it holds this much of (its cleaning differs a little). */
const LISTING_HOLDS = 0.9;
/** A block this long, mostly outside links, in a box whose class says content, is a paragraph a reader came for. */
const PROSE_CHARS = 100;
/** A heading this similar to the page title is the headline (Readability's `_headerDuplicatesTitle`). */
const TITLE_SIMILARITY = 0.75;

/** The blocks an attempt kept, and what they hold. */
interface Selection {
  kept: Uint8Array;
  chars: number;
  /** of them, in elements whose class names boilerplate */
  unlikely: number;
  /** a paragraph in a box whose class says content */
  prose: boolean;
}

/** `texts[i]` is the collapsed text of block i; `title` the page's `<title>`. */
export function selectMainText(layout: PageLayout, texts: readonly string[], title: string): MainText {
  const titleWords = new Set(words(title));
  const headline = layout.blocks.map((b, i) => b.headingLevel > 0 && b.headingLevel <= 2 && similarity(titleWords, texts[i]!) > TITLE_SIMILARITY);
  let best: Selection | null = null;
  for (const attempt of ATTEMPTS) {
    const found = measure(layout, selectBlocks(layout, texts, headline, attempt));
    if (best === null || gains(found, best)) best = found;
    if (found.chars >= MIN_ARTICLE_CHARS) break;
  }
  if (best !== null && listingMayWin(layout, headline, best)) {
    const listing = measure(layout, selectBlocks(layout, texts, headline, LISTING));
    if (listingWins(listing, best)) best = listing;
  }
  const blocks: number[] = [];
  if (best === null || best.chars === 0) {
    texts.forEach((t, i) => t.length > 0 && blocks.push(i));
    const full = blocks.map((i) => texts[i]!).join('\n');
    return { text: full, source: full === '' ? 'main' : 'fallback_full', blocks };
  }
  best.kept.forEach((k, i) => k === 1 && texts[i]!.length > 0 && blocks.push(i));
  return { text: blocks.map((i) => texts[i]!).join('\n'), source: 'main', blocks };
}

function measure(layout: PageLayout, kept: Uint8Array): Selection {
  const found: Selection = { kept, chars: 0, unlikely: 0, prose: false };
  for (let i = 0; i < kept.length; i++) {
    if (kept[i] === 0) continue;
    const b = layout.blocks[i]!;
    found.chars += b.chars;
    if (b.unlikelyChars * 2 > b.rawChars) found.unlikely += b.chars;
    else if (!found.prose && b.chars >= PROSE_CHARS && b.linkChars * 4 < b.rawChars && inContentClass(layout, b.box)) found.prose = true;
  }
  return found;
}

/**
 * Whether a looser attempt replaces a stricter one: for an article the strict rules lost, not
 * for a cookie notice beside a short text; nor for what the class names call boilerplate (a
 * footer) beside a paragraph they call content.
 */
function gains(looser: Selection, stricter: Selection): boolean {
  return looser.chars > stricter.chars * LOOSER_GAIN && !(stricter.prose && looser.unlikely * 2 > looser.chars);
}

/**
 * Whether the links are the page's content rather than what the prose attempts found: when
 * those found little, or only text the class names call boilerplate, a listing with twice the
 * text (a table of contents, an index); else a listing that holds the prose and has twice its
 * text (the few paragraphs that open a documentation index, with its table of contents).
 */
function listingWins(listing: Selection, prose: Selection): boolean {
  if (prose.chars < MIN_ARTICLE_CHARS || prose.unlikely * 2 > prose.chars) return gains(listing, prose);
  if (listing.chars < prose.chars * LOOSER_GAIN) return false;
  let held = 0;
  for (let i = 0; i < prose.kept.length; i++) if (prose.kept[i] === 1 && listing.kept[i] === 1) held++;
  let keptBlocks = 0;
  for (let i = 0; i < prose.kept.length; i++) keptBlocks += prose.kept[i]!;
  return held >= keptBlocks * LISTING_HOLDS;
}

/** A listing can only win with twice the text: not worth an attempt when the page has not that much after its headline. */
function listingMayWin(layout: PageLayout, headline: readonly boolean[], prose: Selection): boolean {
  let available = 0;
  for (let i = Math.max(0, headline.indexOf(true)); i < layout.blocks.length; i++) {
    const b = layout.blocks[i]!;
    if (b.chromeChars * 2 <= b.rawChars && b.unlikelyChars * 2 <= b.rawChars) available += b.chars;
  }
  return available > prose.chars * LOOSER_GAIN;
}

/** Whether `box` or an ancestor has a class or id that says content (`body`, `article`, `main` …). */
function inContentClass(layout: PageLayout, box: number): boolean {
  for (let b = box; b >= 0; b = layout.boxes[b]!.parent) if (layout.boxes[b]!.weight > 0) return true;
  return false;
}

/** `headline[i]`: block i is a heading that repeats the title. */
function selectBlocks(layout: PageLayout, texts: readonly string[], headline: readonly boolean[], attempt: Attempt): Uint8Array {
  const { blocks, boxes } = layout;
  // a listing is what follows the page's headline: the site's menus come before it
  const from = attempt.listing ? Math.max(0, headline.indexOf(true)) : 0;
  const counts = (i: number) => {
    const b = blocks[i]!;
    return i >= from && b.chars > 0 && b.chromeChars * 2 <= b.rawChars && !(attempt.stripUnlikely && b.unlikelyChars * 2 > b.rawChars);
  };
  const stats = new BoxStats(layout, counts);
  const score = scoreBoxes(layout, stats, attempt.weightClasses, attempt.listing);
  const region = chooseRegion(layout, stats, score, (i) => texts[i]!, attempt.listing);

  const inside = new Uint8Array(boxes.length);
  for (const r of region.roots) inside[r] = 1;
  for (let b = 0; b < boxes.length; b++) if (inside[b] === 0 && boxes[b]!.parent >= 0 && inside[boxes[b]!.parent] === 1) inside[b] = 1;
  const kept = new Uint8Array(blocks.length);
  for (const r of region.roots) kept.fill(1, boxes[r]!.firstBlock, boxes[r]!.endBlock);
  for (const i of region.loose) kept[i] = 1;

  const removed = new Uint8Array(blocks.length);
  const boxText = (b: number) => texts.slice(boxes[b]!.firstBlock, boxes[b]!.endBlock).join(' ');
  cleanContent(layout, stats, inside, removed, boxText, attempt, region.top);
  const inRegion = kept.slice();
  const dropped = (i: number) => headline[i] || isFurniture(blocks[i]!, texts[i]!) || (!attempt.listing && isLinkLine(blocks[i]!));
  for (let i = 0; i < blocks.length; i++) {
    if (kept[i] === 1 && (removed[i] === 1 || !counts(i) || dropped(i))) kept[i] = 0;
  }
  if (attempt.stripUnlikely) keepAsidesInFlow(blocks, inRegion, removed, kept, dropped);
  if (attempt.listing) return kept;
  dropTrailingLinks(blocks, kept);
  // nothing held the paragraphs (div soup, text straight in the body): judge blocks by their neighbours
  if (region.top < 0) judgeByContext(blocks, kept);
  return kept;
}

/** An aside in the flow of the content holds prose: a paragraph this long, and under PROSE_LINK_SHARE of its text in links. */
const ASIDE_PROSE_CHARS = 100;
const PROSE_LINK_SHARE = 0.25;

/**
 * Boxes whose class names boilerplate (`sidebar`, `extra`, `remark` …) but sit in the flow of
 * the content, between kept text, and hold prose, are part of it: DocBook's and AsciiDoc's
 * sidebars (the Debian handbook's "BACK TO BASICS" boxes), Sphinx's. Comment sections, share
 * bars, related links and sign-up boxes come after the text, are mostly links, or are short.
 */
function keepAsidesInFlow(
  blocks: readonly TextBlock[],
  inRegion: Uint8Array,
  removed: Uint8Array,
  kept: Uint8Array,
  dropped: (i: number) => boolean,
): void {
  const aside = (i: number) => {
    const b = blocks[i]!;
    return inRegion[i] === 1 && removed[i] === 0 && b.chars > 0 && b.unlikelyChars * 2 > b.rawChars && b.chromeChars * 2 <= b.rawChars;
  };
  let keptBefore = false;
  for (let i = 0; i < blocks.length; ) {
    if (!aside(i)) {
      if (kept[i] === 1) keptBefore = true;
      i++;
      continue;
    }
    let end = i;
    let raw = 0;
    let links = 0;
    let paragraph = false;
    while (end < blocks.length && (aside(end) || (blocks[end]!.chars === 0 && inRegion[end] === 1))) {
      const b = blocks[end]!;
      raw += b.rawChars;
      links += b.linkChars;
      if (b.chars >= ASIDE_PROSE_CHARS && b.linkChars < b.rawChars * PROSE_LINK_SHARE) paragraph = true;
      end++;
    }
    let keptAfter = false;
    for (let j = end; j < blocks.length && !keptAfter; j++) if (kept[j] === 1) keptAfter = true;
    if (keptBefore && keptAfter && paragraph && links < raw * PROSE_LINK_SHARE) {
      for (let j = i; j < end; j++) if (aside(j) && !dropped(j)) kept[j] = 1;
    }
    i = end;
  }
}

/** Link lines after the article's last text are where to go next (next post, related, tags), not the article. */
function dropTrailingLinks(blocks: readonly TextBlock[], kept: Uint8Array): void {
  for (let i = blocks.length - 1; i >= 0; i--) {
    if (kept[i] === 0) continue;
    const b = blocks[i]!;
    if (b.linkChars * 2 <= b.rawChars) return;
    kept[i] = 0;
  }
}

/** Longer text in an author or date element is prose about the author (a bio), not a byline. */
const MAX_BYLINE_CHARS = 150;

/** Figure captions and photo credits, author and date lines, ad labels: the article's furniture, not its text. */
function isFurniture(b: TextBlock, text: string): boolean {
  if (b.captionChars * 2 > b.rawChars || (b.bylineChars * 2 > b.rawChars && b.chars <= MAX_BYLINE_CHARS)) return true;
  return b.chars <= MAX_BYLINE_CHARS && b.headingLevel === 0 && (isBylineLine(text) || isDateLine(text) || isAdLabel(text));
}

/**
 * A line of several links and little else (a menu row, "Tags: a, b, c"); a line that is one
 * link ("Get it at Walmart for $238.99", a URL) is often part of the article.
 */
function isLinkLine(b: TextBlock): boolean {
  return b.links >= 2 && b.linkChars * 2 > b.rawChars;
}

const words = (s: string) => s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);

/** Readability's `_textSimilarity`: the share of `text` made of words that the title has too. */
function similarity(titleWords: ReadonlySet<string>, text: string): number {
  const textWords = words(text);
  if (titleWords.size === 0 || textWords.length === 0) return 0;
  const unique = textWords.filter((w) => !titleWords.has(w));
  return 1 - unique.join(' ').length / textWords.join(' ').length;
}
