/**
 * parse5's document parse, with a text's words and the spaces between them reaching the
 * tree as one token instead of one token per word and one per space.
 *
 * parse5 tokenizes text into alternating runs of whitespace and other characters, because a
 * few insertion modes treat whitespace on its own (ignored before <head>, kept in a table).
 * In the modes where a page's text lives (in body, cell, caption, template, select, and the
 * raw text of script, style and textarea) both kinds of token are inserted the same way, so
 * the split only costs: a token emitted, dispatched and inserted for every word and every
 * space, on a page of mostly text about half of parse5's work
 * (docs/performance.md#parse5-text-runs).
 *
 * So, in those modes only, whitespace that follows other characters joins their token. The
 * tree is the same: a text node holds the same characters either way (the test compares
 * parse5's serialization of both on real pages). A token still starts as whitespace or not as
 * parse5 decides, so a leading newline after <pre> or <textarea> is dropped as before.
 *
 * This uses parse5 8.1's `Parser` class (exported, though marked internal) and overrides one
 * protected tokenizer method, `_emitCodePoint`. Were a later parse5 to lack what it relies on,
 * `parseDocument` falls back to parse5's own parse; a renamed method also fails the build (the
 * override is checked), and the unit test compares the trees on every upgrade. Each parse
 * builds parse5's own tokenizer before replacing it: one object a page, not worth reaching
 * further into parse5's constructor.
 */
import {
  InsertionMode,
  Parser,
  Token,
  Tokenizer,
  parse,
  type DefaultTreeAdapterMap,
  type DefaultTreeAdapterTypes,
  type ParserOptions,
} from 'parse5';

/** Modes where a whitespace token and a character token are inserted alike (parse5's onCharacter/onWhitespaceCharacter). */
const MODES_INSERTING_ALIKE: ReadonlySet<InsertionMode> = new Set([
  InsertionMode.IN_BODY,
  InsertionMode.IN_CAPTION,
  InsertionMode.IN_CELL,
  InsertionMode.IN_TEMPLATE,
  InsertionMode.TEXT,
  InsertionMode.IN_SELECT,
  InsertionMode.IN_SELECT_IN_TABLE,
]);

/** HTML's whitespace as parse5's tokenizer splits on it: space, LF, tab, form feed, CR. */
function isHtmlWhitespace(cp: number): boolean {
  return cp === 0x20 || cp === 0x0a || cp === 0x09 || cp === 0x0c || cp === 0x0d;
}

class TextRunTokenizer extends Tokenizer {
  /** the parser that made this tokenizer (TextRunParser), whose insertion mode decides */
  protected declare handler: Parser<DefaultTreeAdapterMap>;

  protected override _emitCodePoint(cp: number): void {
    // the mode cannot change within a run of text: no token is handled until the run ends
    if (
      isHtmlWhitespace(cp) &&
      this.currentCharacterToken?.type === Token.TokenType.CHARACTER &&
      MODES_INSERTING_ALIKE.has(this.handler.insertionMode)
    ) {
      this._extendRun(cp);
      return;
    }
    super._emitCodePoint(cp);
  }
}

class TextRunParser extends Parser<DefaultTreeAdapterMap> {
  constructor(options: ParserOptions<DefaultTreeAdapterMap>) {
    super(options);
    this.tokenizer = new TextRunTokenizer(this.options, this);
  }
}

/** What the override calls on parse5's tokenizer; absent in a parse5 that renamed them. */
const PARSE5_HAS_RUNS = ['_emitCodePoint', '_extendRun'].every(
  (m) => typeof (Tokenizer.prototype as unknown as Record<string, unknown>)[m] === 'function',
);

/** The document tree of `html`, as parse5's `parse` builds it. */
export function parseDocument(html: string, options: ParserOptions<DefaultTreeAdapterMap>): DefaultTreeAdapterTypes.Document {
  if (!PARSE5_HAS_RUNS) return parse(html, options);
  const parser = new TextRunParser(options);
  parser.tokenizer.write(html, true);
  return parser.document;
}
