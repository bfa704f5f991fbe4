/**
 * What the markdown of the main text needs beyond the text blocks, recorded during the one
 * walk of html-walker.ts: where links and inline code start and end (as positions in the
 * walker's text pieces), and for each text block the structure it sits in (list items,
 * blockquotes, `pre`, table cells). markdown-render.ts turns the main text's blocks into
 * markdown from this after the walk; nothing here is read by main-text selection.
 */
import type { DefaultTreeAdapterTypes } from 'parse5';
import type { RawLink } from './html-walker.js';

type Element = DefaultTreeAdapterTypes.Element;

export const LINK_OPEN = 0;
export const LINK_CLOSE = 1;
export const CODE_OPEN = 2;
export const CODE_CLOSE = 3;

/** An inline mark at a text-piece position: a link's or an inline code span's start or end. */
export interface InlineMark {
  at: number;
  kind: typeof LINK_OPEN | typeof LINK_CLOSE | typeof CODE_OPEN | typeof CODE_CLOSE;
  /** the link's (the same object on its open and close marks) */
  link: RecordedLink | null;
}

export interface RecordedLink {
  raw: RawLink;
  /** piece positions of its start and end (end -1 while open) */
  open: number;
  close: number;
}

/** The structure a text block sits in, as of its first visible text. */
export interface BlockContext {
  /** blockquote depth */
  quote: number;
  /** the list markers and indentation before the block's text (`- `, `  1. `), '' outside lists */
  listPrefix: string;
  /** whether listPrefix starts an item (else it only indents a continuation) */
  item: boolean;
  /** 1-based id of the innermost `pre`, 0 outside */
  pre: number;
  /** innermost table (index into RecordedTable[]), -1 outside; row and column of the cell, -1 outside one */
  table: number;
  row: number;
  col: number;
}

export interface RecordedTable {
  /** cells hold more than a paragraph each (several, lists, headings, tables …), or one column only: the table lays out a page, it is not data */
  layout: boolean;
  /** cells in each row */
  rows: number[];
}

interface ListLevel {
  ordered: boolean;
  /** the last item's number */
  n: number;
  /** the current item's marker (`- `, `12. `), whose width indents the item's continuation */
  marker: string;
  /** an item opened whose marker no text has taken yet */
  pending: boolean;
  /** made for an item outside any list, and ended with it */
  implicit: boolean;
}

interface OpenTable {
  index: number;
  row: number;
  col: number;
  inCell: number;
  /** block elements opened in the current cell */
  cellBlocks: number;
}

const LIST = 1;
const ITEM = 2;
const QUOTE = 3;
const PRE = 4;
const CODE = 5;
const TABLE = 6;
const CELL = 7;

/**
 * Quotes and lists deeper than this render at this depth: the markers of every level would
 * make each line as long as the nesting is deep (100k nested lists in a 1 MB page), and no
 * reader follows a twentieth level. Real pages nest lists three or four deep.
 */
export const MAX_NESTING = 8;
/** A table of more columns is not read as a table (and its rows are not padded to that width). */
const MAX_COLUMNS = 64;

const INLINE_CODE = new Set(['code', 'kbd', 'samp', 'tt']);
/** Table-internal block elements, which do not make a table a layout. */
const TABLE_PARTS = new Set(['table', 'tbody', 'thead', 'tfoot', 'tr', 'caption']);
/** A fence's language from `class="language-js"` / `lang-js` on `pre` or its `code`. */
const LANGUAGE_CLASS = /(?:^|\s)(?:language|lang)-([\w+#.-]{1,30})/;

export class MarkdownMarks {
  readonly marks: InlineMark[] = [];
  /** by block index; blocks without visible text have none */
  readonly contexts: BlockContext[] = [];
  readonly tables: RecordedTable[] = [];
  /** fence language of each `pre` by id − 1 ('' when not said) */
  readonly preLanguages: string[] = [];
  private readonly frames: number[] = [];
  private readonly lists: ListLevel[] = [];
  private readonly openTables: OpenTable[] = [];
  private readonly pres: number[] = [];
  private readonly openLinks: RecordedLink[] = [];
  private quote = 0;

  /**
   * An element opens (visible, its block break already made; `at` is the text-piece
   * position): returns whether it opened a scope, which `close` must end when the element does.
   */
  open(el: Element, block: boolean, at: number): boolean {
    const tag = el.tagName;
    const table = this.openTables[this.openTables.length - 1];
    if (block && table !== undefined && table.inCell > 0 && !TABLE_PARTS.has(tag)) {
      // one paragraph in a cell is how word processors write every cell; more is a page's column
      if ((tag === 'p' || tag === 'div') && table.cellBlocks === 0) table.cellBlocks++;
      else this.tables[table.index]!.layout = true;
    }
    switch (tag) {
      case 'ul':
      case 'ol':
      case 'menu': {
        const start = tag === 'ol' ? Number.parseInt(attr(el, 'start') ?? '1', 10) : 1;
        this.lists.push({ ordered: tag === 'ol', n: Number.isFinite(start) ? start - 1 : 0, marker: '', pending: false, implicit: false });
        return this.push(LIST);
      }
      case 'li': {
        // an item outside any list is a list of its own
        if (this.lists.length === 0) this.lists.push({ ordered: false, n: 0, marker: '', pending: false, implicit: true });
        const level = this.lists[this.lists.length - 1]!;
        level.n++;
        level.marker = level.ordered ? `${level.n}. ` : '- ';
        level.pending = true;
        return this.push(ITEM);
      }
      case 'blockquote':
        this.quote++;
        return this.push(QUOTE);
      case 'pre':
      case 'listing':
      case 'xmp':
        this.preLanguages.push(LANGUAGE_CLASS.exec(attr(el, 'class') ?? '')?.[1] ?? '');
        this.pres.push(this.preLanguages.length);
        return this.push(PRE);
      case 'table':
        if (table !== undefined && table.inCell > 0) this.tables[table.index]!.layout = true;
        this.tables.push({ layout: false, rows: [] });
        this.openTables.push({ index: this.tables.length - 1, row: -1, col: -1, inCell: 0, cellBlocks: 0 });
        return this.push(TABLE);
      case 'tr':
        if (table !== undefined) {
          table.row++;
          table.col = -1;
          this.tables[table.index]!.rows.push(0);
        }
        return false;
      case 'td':
      case 'th':
        if (table === undefined || table.row < 0) return false;
        table.col++;
        this.tables[table.index]!.rows[table.row] = table.col + 1;
        table.inCell++;
        table.cellBlocks = 0;
        return this.push(CELL);
      default: {
        if (!INLINE_CODE.has(tag)) return false;
        const pre = this.pres[this.pres.length - 1];
        if (pre === undefined) {
          this.marks.push({ at, kind: CODE_OPEN, link: null });
          return this.push(CODE);
        }
        // <pre><code class="language-js">: the fence's language
        if (this.preLanguages[pre - 1] === '') this.preLanguages[pre - 1] = LANGUAGE_CLASS.exec(attr(el, 'class') ?? '')?.[1] ?? '';
        return false;
      }
    }
  }

  /** The scope the last `open` that returned true opened ends; `at` is the text-piece position. */
  close(at: number): void {
    switch (this.frames.pop()) {
      case LIST:
        this.lists.pop();
        break;
      case ITEM: {
        const level = this.lists[this.lists.length - 1];
        if (level?.implicit) this.lists.pop();
        else if (level !== undefined) level.pending = false;
        break;
      }
      case QUOTE:
        this.quote--;
        break;
      case PRE:
        this.pres.pop();
        break;
      case CODE:
        this.marks.push({ at, kind: CODE_CLOSE, link: null });
        break;
      case TABLE: {
        const t = this.openTables.pop()!;
        const rec = this.tables[t.index]!;
        let columns = 0;
        for (const cells of rec.rows) if (cells > columns) columns = cells;
        if (columns <= 1 || columns > MAX_COLUMNS) rec.layout = true;
        break;
      }
      case CELL:
        this.openTables[this.openTables.length - 1]!.inCell--;
        break;
    }
  }

  linkOpen(raw: RawLink, at: number): void {
    const link: RecordedLink = { raw, open: at, close: -1 };
    this.openLinks.push(link);
    this.marks.push({ at, kind: LINK_OPEN, link });
  }

  /** The innermost open link ends (anchors nest, as elements do). */
  linkClose(at: number): void {
    const link = this.openLinks.pop();
    if (link === undefined) return;
    link.close = at;
    this.marks.push({ at, kind: LINK_CLOSE, link });
  }

  /** Block `index` gets its first visible text: what it sits in now is its context. */
  blockText(index: number): void {
    if (this.contexts[index] !== undefined) return;
    let listPrefix = '';
    let item = false;
    const lists = this.lists;
    for (let i = Math.max(0, lists.length - MAX_NESTING); i < lists.length; i++) {
      const level = lists[i]!;
      if (level.pending) {
        listPrefix += level.marker;
        level.pending = false;
        item = true;
      } else {
        listPrefix += ' '.repeat(level.marker.length || 2);
      }
    }
    const table = this.openTables[this.openTables.length - 1];
    this.contexts[index] = {
      quote: Math.min(this.quote, MAX_NESTING),
      listPrefix,
      item,
      pre: this.pres[this.pres.length - 1] ?? 0,
      table: table?.index ?? -1,
      row: table !== undefined && table.inCell > 0 ? table.row : -1,
      col: table !== undefined && table.inCell > 0 ? table.col : -1,
    };
  }

  private push(frame: number): true {
    this.frames.push(frame);
    return true;
  }
}

function attr(el: Element, name: string): string | null {
  for (const a of el.attrs) if (a.name === name) return a.value;
  return null;
}
