/**
 * The layout of a page's visible text as main-text selection needs it, recorded during the
 * one walk of html-walker.ts: text blocks (one per run of text between block boundaries)
 * and boxes (one per block-level element or table cell, with what its class says). A box's
 * blocks are a contiguous range of the block list, so "everything inside this element" is
 * a range check, and box totals add up child to parent in one backward pass.
 */
import type { ElementHints } from './boilerplate-hints.js';

/** Bits of what the text being added sits in (PageLayout.text). */
export const IN_LINK = 1;
export const IN_CHROME = 2;
export const IN_UNLIKELY = 4;
export const IN_CAPTION = 8;

/** Commas of other scripts (Readability's list): a paragraph's commas say it is prose. */
const OTHER_COMMAS = new Set([0x60c, 0xfe50, 0xfe10, 0xfe11, 0x2e41, 0x2e34, 0x2e32, 0xff0c, 0x3001]);

/**
 * An author or date element with more text than this is not a byline (Readability's
 * `_isValidByline` says 100 characters; visible characters here exclude spaces): WordPress
 * puts `author-<name>` on the whole article.
 */
const MAX_BYLINE_CHARS = 100;

/** Where the text stood when an author or date element opened (PageLayout.openByline). */
interface BylineStart {
  piece: number;
  block: number;
  raw: number;
  total: number;
}

export interface TextBlock {
  /** Range of the walker's text pieces this block covers. */
  start: number;
  end: number;
  /** Innermost box (index into boxes), or -1 outside any. */
  box: number;
  /** Characters of visible text other than whitespace; of them inside links, and in elements of each kind (TextKind). */
  rawChars: number;
  linkChars: number;
  /** links that start in the block */
  links: number;
  chromeChars: number;
  unlikelyChars: number;
  captionChars: number;
  bylineChars: number;
  /** 1–6 for the text of an h1–h6, else 0 */
  headingLevel: number;
  commas: number;
  /** Collapsed text length: filled in by the walker once the walk is done. */
  chars: number;
}

export interface Box {
  /** Enclosing box, or -1. */
  parent: number;
  tag: string;
  /** the element's class attribute (at most MAX_CLASS_CHARS): boxes of one kind share tag and class */
  cls: string;
  /** class weight (boilerplate-hints.ts) */
  weight: number;
  byline: boolean;
  share: boolean;
  /** The box's blocks are blocks[firstBlock, endBlock). */
  firstBlock: number;
  endBlock: number;
  /** direct child boxes */
  children: number;
  /** img, embedded media (iframe, video, object, embed) and form inputs directly inside */
  images: number;
  embeds: number;
  inputs: number;
}

/**
 * Boxes are recorded up to this many (deeper or later elements count toward the innermost
 * recorded box): enough for any real page (a 500 KB news page has ~4,000 block elements),
 * and a bound for pathological markup.
 */
const MAX_BOXES = 20_000;
/**
 * Boxes nest at most this deep (deeper elements count toward the deepest box): main-text
 * selection walks a box's ancestors, and real pages nest block elements 10 to 50 deep.
 */
const MAX_BOX_DEPTH = 64;

/** Of a box's class attribute, this much is kept: enough to tell `sect1` from `sidebar`, bounded for class soup. */
const MAX_CLASS_CHARS = 100;

export class PageLayout {
  readonly blocks: TextBlock[] = [];
  readonly boxes: Box[] = [];
  /** innermost open box, and how many are open */
  private box = -1;
  private depth = 0;
  private blockStart = 0;
  private raw = 0;
  private commas = 0;
  private link = 0;
  private links = 0;
  private chrome = 0;
  private unlikely = 0;
  private caption = 0;
  private byline = 0;
  /** visible characters so far on the page */
  private total = 0;
  private readonly bylines: BylineStart[] = [];
  /** level of the innermost open h1–h6 (0 outside headings), kept by the walker */
  headingLevel = 0;

  /** Opens a box for a block-level element; false when a cap is reached (then do not close it). */
  openBox(tag: string, cls: string, hints: ElementHints, pieces: number): boolean {
    if (this.boxes.length >= MAX_BOXES || this.depth >= MAX_BOX_DEPTH) return false;
    this.depth++;
    this.endBlock(pieces);
    if (this.box >= 0) this.boxes[this.box]!.children++;
    this.boxes.push({
      parent: this.box,
      tag,
      cls: cls.length > MAX_CLASS_CHARS ? cls.slice(0, MAX_CLASS_CHARS) : cls,
      weight: hints.weight,
      byline: hints.byline,
      share: hints.share,
      firstBlock: this.blocks.length,
      endBlock: this.blocks.length,
      children: 0,
      images: 0,
      embeds: 0,
      inputs: 0,
    });
    this.box = this.boxes.length - 1;
    return true;
  }

  closeBox(pieces: number): void {
    this.endBlock(pieces);
    const box = this.boxes[this.box]!;
    box.endBlock = this.blocks.length;
    this.box = box.parent;
    this.depth--;
  }

  /** Counts an element without text that main-text selection weighs (images, media, inputs). */
  element(tag: string): void {
    if (this.box < 0) return;
    const box = this.boxes[this.box]!;
    if (tag === 'img' || tag === 'picture') box.images++;
    else if (tag === 'input') box.inputs++;
    else box.embeds++;
  }

  /**
   * Adds a text node's chunks to the current block; `within` says what they sit in (IN_*
   * bits). Counts characters other than whitespace and controls (whitespace between tags must
   * not dilute link density) and, in the same pass, commas.
   */
  text(chunks: readonly string[], within: number): void {
    let n = 0;
    for (const s of chunks) {
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c <= 32) continue;
        n++;
        if (c === 0x2c || (c >= 0x60c && OTHER_COMMAS.has(c))) this.commas++;
      }
    }
    this.raw += n;
    this.total += n;
    if (within === 0) return;
    if (within & IN_LINK) this.link += n;
    if (within & IN_CHROME) this.chrome += n;
    if (within & IN_UNLIKELY) this.unlikely += n;
    if (within & IN_CAPTION) this.caption += n;
  }

  /** Whether the current block has visible text yet. */
  get hasText(): boolean {
    return this.raw > 0;
  }

  /** A link starts (in the current block). */
  linkStart(): void {
    this.links++;
  }

  /** An author or date element opens; returns what `closeByline` takes. */
  openByline(pieces: number): number {
    this.bylines.push({ piece: pieces, block: this.blocks.length, raw: this.raw, total: this.total });
    return this.bylines.length - 1;
  }

  /**
   * An author or date element closes: if it was short, its text counts as byline text in
   * the blocks it spans (it is only known now whether it was short). Returns the first
   * text piece of a short one with text, else -1.
   */
  closeByline(opened: number): number {
    const from = this.bylines[opened]!;
    if (opened === this.bylines.length - 1) this.bylines.pop();
    const chars = this.total - from.total;
    if (chars === 0 || chars > MAX_BYLINE_CHARS) return -1;
    for (let i = from.block; i < this.blocks.length; i++) {
      const b = this.blocks[i]!;
      b.bylineChars += i === from.block ? b.rawChars - from.raw : b.rawChars;
    }
    this.byline += from.block === this.blocks.length ? this.raw - from.raw : this.raw;
    return from.piece;
  }

  /** Closes the current text block (at block-box and table-cell boundaries); `pieces` is where the next one starts. */
  endBlock(pieces: number): void {
    if (this.raw > 0) {
      this.blocks.push({
        start: this.blockStart,
        end: pieces,
        box: this.box,
        rawChars: this.raw,
        linkChars: this.link,
        links: this.links,
        chromeChars: this.chrome,
        unlikelyChars: this.unlikely,
        captionChars: this.caption,
        bylineChars: this.byline,
        headingLevel: this.headingLevel,
        commas: this.commas,
        chars: 0,
      });
    }
    this.blockStart = pieces;
    this.raw = this.commas = this.link = this.links = this.chrome = this.unlikely = this.caption = this.byline = 0;
  }
}
