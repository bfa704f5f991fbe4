/**
 * Totals of each box of a page's layout over the blocks that count in one main-text attempt:
 * text, link text, commas, and how many paragraphs, list items, images … it holds, itself
 * and all its descendants. Boxes are in document (pre-)order, so every child comes after
 * its parent and one backward pass adds each box into its parent.
 */
import type { PageLayout } from './page-layout.js';

const PARAGRAPH_TAGS = new Set(['p']);
const LIST_TAGS = new Set(['ul', 'ol']);

export class BoxStats {
  readonly chars: Float64Array;
  readonly linkChars: Float64Array;
  readonly commas: Float64Array;
  /** text directly in the box (not in a child box) */
  readonly ownChars: Float64Array;
  readonly ownCommas: Float64Array;
  readonly paragraphs: Float64Array;
  readonly listItems: Float64Array;
  readonly images: Float64Array;
  readonly embeds: Float64Array;
  readonly inputs: Float64Array;
  readonly headingChars: Float64Array;
  /** text inside ul/ol boxes (the box itself included) */
  readonly listChars: Float64Array;

  constructor(layout: PageLayout, counts: (block: number) => boolean) {
    const n = layout.boxes.length;
    // one allocation for all the totals: a dozen typed arrays per attempt showed in profiles of small pages
    const all = new Float64Array(n * 12);
    let next = 0;
    const arrays = () => all.subarray(n * next, n * ++next);
    this.chars = arrays();
    this.linkChars = arrays();
    this.commas = arrays();
    this.ownChars = arrays();
    this.ownCommas = arrays();
    this.paragraphs = arrays();
    this.listItems = arrays();
    this.images = arrays();
    this.embeds = arrays();
    this.inputs = arrays();
    this.headingChars = arrays();
    this.listChars = arrays();
    layout.blocks.forEach((b, i) => {
      if (b.box < 0 || !counts(i)) return;
      this.ownChars[b.box] += b.chars;
      this.commas[b.box] += b.commas;
      this.ownCommas[b.box] += b.commas;
      // link text as a share of the raw (non-space) characters, applied to the collapsed length
      this.linkChars[b.box] += b.rawChars === 0 ? 0 : (b.chars * b.linkChars) / b.rawChars;
      if (b.headingLevel > 0) this.headingChars[b.box] += b.chars;
    });
    for (let i = n - 1; i >= 0; i--) {
      const box = layout.boxes[i]!;
      this.chars[i] += this.ownChars[i]!;
      if (PARAGRAPH_TAGS.has(box.tag)) this.paragraphs[i]++;
      if (box.tag === 'li') this.listItems[i]++;
      this.images[i] += box.images;
      this.embeds[i] += box.embeds;
      this.inputs[i] += box.inputs;
      if (LIST_TAGS.has(box.tag)) this.listChars[i] = this.chars[i]!;
      if (box.parent >= 0) this.addInto(box.parent, i, 1);
    }
  }

  /** Adds (sign 1) or takes away (sign −1) box `from`'s totals to box `to`. */
  addInto(to: number, from: number, sign: 1 | -1): void {
    this.chars[to] += sign * this.chars[from]!;
    this.linkChars[to] += sign * this.linkChars[from]!;
    this.commas[to] += sign * this.commas[from]!;
    this.paragraphs[to] += sign * this.paragraphs[from]!;
    this.listItems[to] += sign * this.listItems[from]!;
    this.images[to] += sign * this.images[from]!;
    this.embeds[to] += sign * this.embeds[from]!;
    this.inputs[to] += sign * this.inputs[from]!;
    this.headingChars[to] += sign * this.headingChars[from]!;
    this.listChars[to] += sign * this.listChars[from]!;
  }

  linkDensity(box: number): number {
    const chars = this.chars[box]!;
    return chars === 0 ? 0 : this.linkChars[box]! / chars;
  }
}
