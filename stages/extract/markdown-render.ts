/**
 * The main text as markdown: the blocks main-text selection kept, in order, rendered from the
 * walker's text pieces with what markdown-marks.ts recorded during the same walk: `#`
 * headings, paragraphs, `-` and `1.` list items (nested by indentation), `[text](url)` links
 * with absolute URLs, inline code, fenced code blocks for `pre` (its text as written), GFM
 * pipe tables for data tables (a table whose cells hold paragraphs, lists or tables lays out a
 * page, and its cells become paragraphs), `>` blockquotes. Whitespace is collapsed as in
 * `text`, so the words are those of `text`; only the markup around them is added.
 */
import { isSpace } from './metadata.js';
import type { TextBlock } from './page-layout.js';
import { CODE_CLOSE, CODE_OPEN, LINK_CLOSE, LINK_OPEN, type BlockContext, type InlineMark, type MarkdownMarks, type RecordedLink } from './markdown-marks.js';

type Pieces = readonly (readonly string[])[];

const NO_CONTEXT: BlockContext = { quote: 0, listPrefix: '', item: false, pre: 0, table: -1, row: -1, col: -1 };

/** Text at a line's start that markdown would read as a heading, quote, list item, rule or setext underline. */
const BLOCK_SYNTAX = /^(?:#{1,6}(?=\s|$)|>|[-+*](?=\s|$)|(?:[-*_=]\s*){3,}$)/;
const ORDERED_ITEM = /^\d{1,9}(?=[.)](?:\s|$))/;
const LINK_TEXT_SPECIAL = /[[\]\\]/g;
const CELL_SPECIAL = /\|/g;
const URL_SPECIAL = /[()\\<> ]/g;

interface Unit {
  text: string;
  ctx: BlockContext;
}

/** `kept`: the main text's block indices, ascending; `resolve` makes an href absolute (null: leave the text unlinked). */
export function renderMarkdown(
  pieces: Pieces,
  blocks: readonly TextBlock[],
  marks: MarkdownMarks,
  kept: readonly number[],
  resolve: (href: string) => string | null,
): string {
  const inline = new InlineRenderer(pieces, marks.marks, resolve);
  let out = '';
  let prev: BlockContext | null = null;
  for (let k = 0; k < kept.length; ) {
    const b = kept[k]!;
    const ctx = marks.contexts[b] ?? NO_CONTEXT;
    let unit: Unit;
    if (ctx.pre > 0) {
      const lines: string[] = [];
      for (; k < kept.length && (marks.contexts[kept[k]!] ?? NO_CONTEXT).pre === ctx.pre; k++) lines.push(rawText(pieces, blocks[kept[k]!]!));
      unit = { text: fence(lines.join('\n'), marks.preLanguages[ctx.pre - 1] ?? ''), ctx };
    } else if (ctx.col >= 0 && !marks.tables[ctx.table]!.layout) {
      const rows = new Map<number, string[]>();
      let columns = 0;
      for (; k < kept.length; k++) {
        const c = marks.contexts[kept[k]!] ?? NO_CONTEXT;
        if (c.table !== ctx.table || c.col < 0) break;
        let row = rows.get(c.row);
        if (row === undefined) rows.set(c.row, (row = []));
        const text = inline.render(blocks[kept[k]!]!, true);
        row[c.col] = row[c.col] ? `${row[c.col]} ${text}` : text;
        columns = Math.max(columns, c.col + 1, marks.tables[ctx.table]!.rows[c.row] ?? 0);
      }
      unit = { text: pipeTable([...rows.values()], columns), ctx };
    } else {
      const block = blocks[b]!;
      const text = inline.render(block, false);
      unit = { text: block.headingLevel > 0 ? `${'#'.repeat(block.headingLevel)} ${text}` : escapeLineStart(text), ctx };
      k++;
    }
    if (unit.text === '') continue;
    if (prev !== null) out += separator(prev, unit.ctx);
    out += prefixed(unit);
    prev = unit.ctx;
  }
  return out;
}

/** Items of a list follow each other line by line; anything else is a paragraph of its own (a blank line, inside a quote a `>` line). */
function separator(prev: BlockContext, next: BlockContext): string {
  if (next.item && prev.listPrefix !== '') return '\n';
  const quote = Math.min(prev.quote, next.quote);
  return quote > 0 ? `\n${'>'.repeat(quote)}\n` : '\n\n';
}

/** The unit's lines with its list marker (or indentation) and quote markers. */
function prefixed(unit: Unit): string {
  const { listPrefix, quote } = unit.ctx;
  if (listPrefix === '' && quote === 0) return unit.text;
  const q = '> '.repeat(quote);
  const indent = ' '.repeat(listPrefix.length);
  return unit.text
    .split('\n')
    .map((line, i) => q + (i === 0 ? listPrefix : line === '' ? '' : indent) + line)
    .join('\n');
}

function escapeLineStart(text: string): string {
  const ordered = ORDERED_ITEM.exec(text);
  if (ordered !== null) return `${ordered[0]}\\${text.slice(ordered[0].length)}`;
  return BLOCK_SYNTAX.test(text) ? `\\${text}` : text;
}

/** A `pre` block's text as written (the walk's block breaks, from `<br>`, are line breaks). */
function rawText(pieces: Pieces, block: TextBlock): string {
  let s = '';
  for (let q = block.start; q < block.end; q++) for (const chunk of pieces[q]!) s += chunk;
  return s.replace(/^\u0000+/, '').replaceAll('\u0000', '\n');
}

function fence(code: string, language: string): string {
  const body = code.replace(/^\n+/, '').trimEnd();
  if (body === '') return '';
  let longest = 0;
  for (const run of body.match(/`{3,}/g) ?? []) longest = Math.max(longest, run.length);
  const ticks = '`'.repeat(Math.max(3, longest + 1));
  return `${ticks}${language}\n${body}\n${ticks}`;
}

/** GFM has no table without a header row: the first row is the header. */
function pipeTable(rows: readonly string[][], columns: number): string {
  const line = (cells: readonly string[]) => {
    let s = '|';
    for (let c = 0; c < columns; c++) s += ` ${cells[c] ?? ''} |`;
    return s;
  };
  const lines = [line(rows[0]!), line(new Array<string>(columns).fill('---'))];
  for (let r = 1; r < rows.length; r++) lines.push(line(rows[r]!));
  return lines.join('\n');
}

/** One block's text, whitespace collapsed, with its links and inline code marked up. */
class InlineRenderer {
  /** the first mark at or after the last block rendered (blocks come in order) */
  private next = 0;

  constructor(
    private readonly pieces: Pieces,
    private readonly marks: readonly InlineMark[],
    private readonly resolve: (href: string) => string | null,
  ) {}

  /** `cell`: the text goes in a table cell, where `|` must be escaped. */
  render(block: TextBlock, cell: boolean): string {
    const { start, end } = block;
    const marks = this.marks;
    while (this.next < marks.length && marks[this.next]!.at < start) this.next++;
    let m = this.next;
    let out = '';
    let pending = false;
    /** markup opened (`[`, a backtick) but not yet written: it goes just before the next word, after the separator */
    let opening = '';
    let link: RecordedLink | null = null;
    let linkUrl = '';
    let code = 0;
    /** where the open inline code's text starts in `out`, -1 while its backtick is still in `opening` */
    let codeStart = -1;
    const special = cell ? CELL_SPECIAL : null;
    for (let q = start; q <= end; q++) {
      for (; m < marks.length && marks[m]!.at === q; m++) {
        const mark = marks[m]!;
        if (mark.kind === LINK_OPEN) {
          const l = mark.link!;
          // a link is marked up only inside one block (one that spans blocks is a card: its text stays plain)
          if (link !== null || l.close < 0 || l.close > end) continue;
          const url = this.resolve(l.raw.href);
          if (url === null) continue;
          opening += '[';
          link = l;
          linkUrl = url.replace(URL_SPECIAL, (c) => (c === ' ' ? '%20' : c === '<' ? '%3C' : c === '>' ? '%3E' : `\\${c}`));
        } else if (mark.kind === LINK_CLOSE) {
          if (mark.link !== link) continue;
          // a link without text is left out
          if (opening.includes('[')) opening = opening.replace('[', '');
          else out += `](${linkUrl})`;
          link = null;
        } else if (mark.kind === CODE_OPEN) {
          if (code++ > 0) continue;
          opening += '`';
          codeStart = -1;
        } else if (mark.kind === CODE_CLOSE && code > 0) {
          if (--code > 0) continue;
          if (codeStart < 0) opening = opening.replace('`', '');
          else out = closeCode(out, codeStart);
        }
      }
      if (q === end) break;
      const group = this.pieces[q]!;
      for (let p = 0; p < group.length; p++) {
        const s = group[p]!;
        let i = 0;
        while (i < s.length) {
          if (isSpace(s.charCodeAt(i))) {
            pending = true;
            i++;
            continue;
          }
          let j = i + 1;
          while (j < s.length && !isSpace(s.charCodeAt(j))) j++;
          if (pending && out.length > 0) out += ' ';
          pending = false;
          if (opening !== '') {
            out += opening;
            if (code > 0 && codeStart < 0) codeStart = out.length;
            opening = '';
          }
          let word = s.slice(i, j);
          if (code === 0 && link !== null) word = word.replace(LINK_TEXT_SPECIAL, '\\$&');
          if (special !== null) word = word.replace(special, '\\|');
          out += word;
          i = j;
        }
      }
    }
    // inline code that a block break cut (a <br> inside <code>) ends with its block
    return code > 0 && codeStart >= 0 ? closeCode(out, codeStart) : out;
  }
}

/** Ends inline code whose text starts at `from` (just after its backtick); a double backtick when it holds one. */
function closeCode(out: string, from: number): string {
  const body = out.slice(from);
  if (!body.includes('`')) return `${out}\``;
  return `${out.slice(0, from - 1)}\`\` ${body} \`\``;
}
