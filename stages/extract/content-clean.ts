/**
 * Cleaning the chosen content region, as Mozilla Readability's `_prepArticle` does: inside
 * the content, boxes that look like something else are dropped (children judged before their
 * parents, and a dropped child no longer counts in its parent's totals):
 * - share bars with little text, headings (h1, h2) with a negative class;
 * - div, table, ul, form and fieldset boxes with a negative class, and, unless they hold at
 *   least ten commas (prose), those that are mostly links, more images than paragraphs,
 *   forms, embeds without text, or a lone "Advertisement" / "Loading…" label.
 */
import type { BoxStats } from './box-stats.js';
import type { PageLayout } from './page-layout.js';

const CONDITIONAL_TAGS = new Set(['div', 'table', 'ul', 'form', 'fieldset']);
const LIST_TAGS = new Set(['ul', 'ol']);
/** Readability's `shareElementThreshold`: a share box with more text is content after all. */
const SHARE_MAX_CHARS = 500;
const PROSE_COMMAS = 10;
const AD_WORDS = /^(ad(vertising|vertisement)?|pub(licité)?|werb(ung)?|广告|Реклама|Anuncio)$/iu;
const LOADING_WORDS = /^((loading|正在加载|Загрузка|chargement|cargando)(…|\.\.\.)?)$/iu;

export interface CleanOptions {
  weightClasses: boolean;
  cleanConditionally: boolean;
}

/**
 * Marks in `removed` the blocks of the boxes inside the content (`inside[box]`) that cleaning
 * drops; `stats` is updated as boxes go. The box scoring chose (`top`) is not judged itself:
 * the cleaning is of what it holds (a short page whose one paragraph has a link is more than
 * a fifth links, and was dropped whole for it).
 */
export function cleanContent(
  layout: PageLayout,
  stats: BoxStats,
  inside: Uint8Array,
  removed: Uint8Array,
  boxText: (box: number) => string,
  opts: CleanOptions,
  top: number,
): void {
  const { boxes } = layout;
  const inFigure = new Uint8Array(boxes.length);
  for (let b = 0; b < boxes.length; b++) {
    const p = boxes[b]!.parent;
    inFigure[b] = p >= 0 && (inFigure[p] === 1 || boxes[p]!.tag === 'figure') ? 1 : 0;
  }
  const remove = (b: number) => {
    const box = boxes[b]!;
    removed.fill(1, box.firstBlock, box.endBlock);
    for (let p = box.parent; p >= 0; p = boxes[p]!.parent) stats.addInto(p, b, -1);
  };
  for (let b = boxes.length - 1; b >= 0; b--) {
    if (inside[b] !== 1 || stats.chars[b] === 0 || b === top) continue;
    const box = boxes[b]!;
    const weight = opts.weightClasses ? box.weight : 0;
    if (box.share && stats.chars[b]! < SHARE_MAX_CHARS) remove(b);
    else if ((box.tag === 'h1' || box.tag === 'h2') && weight < 0) remove(b);
    else if (opts.cleanConditionally && CONDITIONAL_TAGS.has(box.tag) && dropConditionally(b, weight, stats, inFigure[b] === 1, LIST_TAGS.has(box.tag), boxText)) remove(b);
  }
}

/** Readability's `_cleanConditionally` verdict for one box. */
function dropConditionally(b: number, weight: number, stats: BoxStats, inFigure: boolean, list: boolean, boxText: (box: number) => string): boolean {
  if (weight < 0) return true;
  if (stats.commas[b]! >= PROSE_COMMAS) return false;
  const chars = stats.chars[b]!;
  const isList = list || stats.listChars[b]! > chars * 0.9;
  const paragraphs = stats.paragraphs[b]!;
  const images = stats.images[b]!;
  const embeds = stats.embeds[b]!;
  const linkDensity = stats.linkDensity(b);
  const headingDensity = chars === 0 ? 0 : stats.headingChars[b]! / chars;
  if (chars < 30) {
    const text = boxText(b);
    if (AD_WORDS.test(text) || LOADING_WORDS.test(text)) return true;
  }
  return (
    (!inFigure && images > 1 && paragraphs / images < 0.5) ||
    (!isList && stats.listItems[b]! - 100 > paragraphs) ||
    stats.inputs[b]! > Math.floor(paragraphs / 3) ||
    (!isList && !inFigure && headingDensity < 0.9 && chars < 25 && (images === 0 || images > 2) && linkDensity > 0) ||
    (!isList && weight < 25 && linkDensity > 0.2) ||
    (weight >= 25 && linkDensity > 0.5) ||
    (embeds === 1 && chars < 75) ||
    embeds > 1
  );
}
