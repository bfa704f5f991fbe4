import { isAscii, isUtf8 } from 'node:buffer';
// Node 20's own TextDecoder is not usable here: it decodes windows-1252 (and so `latin1`, `ascii`)
// as ISO-8859-1 (0x93 → U+0093 instead of “), has no iso-8859-16 nor x-user-defined, and its ICU
// legacy decoders differ from the WHATWG index tables (e.g. Big5 0x88 0x62). @exodus/bytes is a
// maintained, WPT-tested implementation of the WHATWG Encoding standard: labels, BOM sniffing and
// every decoder, with native fast paths where Node's are correct.
import { TextDecoder as WhatwgTextDecoder, getBOMEncoding, normalizeEncoding } from '@exodus/bytes/encoding.js';

/** Where the encoding came from, in the order the sniffing algorithm tries them. */
export type CharsetSource =
  /** a UTF-8, UTF-16LE or UTF-16BE byte order mark */
  | 'bom'
  /** the charset parameter of the Content-Type header */
  | 'header'
  /** a `<meta charset>` or `<meta http-equiv="Content-Type" content="…charset=…">` in the first 1024 bytes */
  | 'meta'
  /** an XML declaration's encoding (`<?xml … encoding="…"?>`, or a UTF-16 `<?x`) the prescan falls back to */
  | 'xml'
  /** nothing declared, and the bytes are valid UTF-8 */
  | 'valid-utf-8'
  /** nothing declared, and the bytes are not valid UTF-8: windows-1252 */
  | 'default';

export interface DecodedBody {
  text: string;
  /** the encoding the text was decoded with: its WHATWG name in lower case (`utf-8`, `windows-1252`, `shift_jis`, …) */
  charset: string;
  source: CharsetSource;
}

export interface DecodeOptions {
  /**
   * The body was cut short (a size cap), so it may end inside a UTF-8 sequence: an incomplete last
   * sequence then does not count against "the bytes are valid UTF-8".
   */
  truncated?: boolean;
}

/** How much of the body the `<meta>` prescan looks at, as the HTML standard encourages. */
export const PRESCAN_BYTES = 1024;

/**
 * Decodes an HTML body to text, choosing the encoding as the WHATWG HTML "encoding sniffing
 * algorithm" does (https://html.spec.whatwg.org/multipage/parsing.html#encoding-sniffing-algorithm):
 *
 * 1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE) wins;
 * 2. else the Content-Type charset (`headerCharset`), if it is a known label;
 * 3. else the prescan of the first 1024 bytes for `<meta charset>` / `<meta http-equiv=content-type>`
 *    (and, when it finds none, an XML declaration's encoding);
 * 4. else a default: UTF-8 when the bytes are valid UTF-8, otherwise windows-1252.
 *
 * Labels resolve as the WHATWG Encoding standard says (`latin1`, `iso-8859-1`, `ascii` → windows-1252;
 * `x-sjis` → shift_jis; `utf-16` → utf-16le); an unknown label is ignored and the next rule applies.
 * Invalid bytes become U+FFFD; this never throws.
 */
export function decodeBody(body: Uint8Array, headerCharset: string | null, options: DecodeOptions = {}): DecodedBody {
  const { charset, source } = sniffCharset(body, headerCharset, options);
  try {
    return { text: decodeAs(body, charset), charset, source };
  } catch {
    // not expected (every name sniffCharset returns has a decoder), but a page must never fail here
    return { text: decodeAs(body, 'utf-8'), charset: 'utf-8', source };
  }
}

/** The encoding `decodeBody` would use, without decoding. */
export function sniffCharset(
  body: Uint8Array,
  headerCharset: string | null,
  options: DecodeOptions = {},
): { charset: string; source: CharsetSource } {
  const bom = getBOMEncoding(body);
  if (bom) return { charset: bom, source: 'bom' };

  // The transport layer's encoding, "if it is supported": an unknown label is as good as none.
  // A header that says UTF-16 is believed (only a <meta> saying so is not: see the prescan).
  const fromHeader = headerCharset ? getEncoding(headerCharset) : null;
  if (fromHeader) return { charset: fromHeader, source: 'header' };

  const prescanned = prescanForEncoding(body.subarray(0, PRESCAN_BYTES));
  if (prescanned) return prescanned;

  // Step 9 of the algorithm leaves the default to the user agent; browsers use a locale's legacy
  // encoding, windows-1252 for most. We depart from that on purpose, as most crawlers do: a document
  // that declares nothing but whose bytes are valid UTF-8 is UTF-8 (UTF-8 has a distinctive bit
  // pattern that legacy text almost never matches by chance, and the spec's own step 8 allows such
  // detection). Pure ASCII is valid UTF-8 and reads the same in both.
  if (looksLikeUtf8(body, options.truncated === true)) return { charset: 'utf-8', source: 'valid-utf-8' };
  return { charset: 'windows-1252', source: 'default' };
}

/**
 * WHATWG "get an encoding": the lower-case name of the encoding `label` means, or null when it means
 * none. Note that a few labels (`iso-2022-kr`, `hz-gb-2312`, …) mean the `replacement` encoding.
 */
export function getEncoding(label: string): string | null {
  return normalizeEncoding(label);
}

function decodeAs(body: Uint8Array, charset: string): string {
  // The `replacement` encoding (labels of encodings that are unsafe on the web, such as ISO-2022-KR)
  // decodes any non-empty input to one U+FFFD. TextDecoder refuses it by name, so it is done here.
  if (charset === 'replacement') return body.length > 0 ? '\uFFFD' : '';
  // fatal: false (the default) → malformed input becomes U+FFFD. The decoder also drops a BOM of its
  // own encoding, which is the only BOM there can be: a BOM always decides the encoding.
  return new WhatwgTextDecoder(charset).decode(body);
}

// ---------------------------------------------------------------------------------------------
// UTF-8 detection

function looksLikeUtf8(body: Uint8Array, truncated: boolean): boolean {
  if (isUtf8(body)) return true;
  // A body cut by a size cap can end inside a multi-byte sequence. Forgive an incomplete last
  // sequence when the caller says the body was cut, or when the rest already holds valid non-ASCII
  // UTF-8 (then the document is UTF-8 beyond reasonable doubt). A document that is all ASCII but for
  // one stray lead byte at its very end is otherwise taken as the legacy encoding it most likely is.
  const cut = incompleteUtf8TailStart(body);
  if (cut < 0) return false;
  const head = body.subarray(0, cut);
  return isUtf8(head) && (truncated || !isAscii(head));
}

/** Where a trailing incomplete (but so far well-formed) UTF-8 sequence starts, or -1 if there is none. */
function incompleteUtf8TailStart(b: Uint8Array): number {
  let i = b.length - 1;
  let continuations = 0;
  while (i >= 0 && continuations < 3 && (b[i]! & 0xc0) === 0x80) {
    i--;
    continuations++;
  }
  if (i < 0) return -1;
  const lead = b[i]!;
  const need = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
  const have = continuations + 1;
  if (need === 0 || have >= need) return -1;
  // Complete the sequence with the smallest allowed bytes and let the real validator judge it (the
  // second byte of E0, ED, F0, F4 sequences has a narrower range than 80–BF).
  const completed = new Uint8Array(need);
  completed.set(b.subarray(i));
  for (let k = have; k < need; k++) completed[k] = k === 1 && lead === 0xe0 ? 0xa0 : k === 1 && lead === 0xf0 ? 0x90 : 0x80;
  return isUtf8(completed) ? i : -1;
}

// ---------------------------------------------------------------------------------------------
// The prescan (https://html.spec.whatwg.org/multipage/parsing.html#prescan-a-byte-stream-to-determine-its-encoding)

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const EQUALS = 0x3d;
const BANG = 0x21;
const QUESTION = 0x3f;
const DASH = 0x2d;

/** 0x09 HT, 0x0A LF, 0x0C FF, 0x0D CR, 0x20 SP */
const isSpace = (b: number | undefined) => b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d || b === 0x20;
const isAsciiAlpha = (b: number | undefined) => b !== undefined && ((b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a));
const lowerByte = (b: number) => (b >= 0x41 && b <= 0x5a ? b + 0x20 : b);

/** A UTF-16BE/LE name becomes UTF-8 where a document declares its own encoding in ASCII bytes. */
const utf16ToUtf8 = (enc: string) => (enc === 'utf-16le' || enc === 'utf-16be' ? 'utf-8' : enc);

/** What the prescan found in `bytes` (the first 1024 bytes of the body), or null. */
export function prescanForEncoding(bytes: Uint8Array): { charset: string; source: 'meta' | 'xml' } | null {
  const end = bytes.length;
  // Prescan for UTF-16 XML declarations: UTF-16 `<?x` (the encoding name is not checked).
  if (startsWith(bytes, 0, [LT, 0, QUESTION, 0, 0x78, 0])) return { charset: 'utf-16le', source: 'xml' };
  if (startsWith(bytes, 0, [0, LT, 0, QUESTION, 0, 0x78])) return { charset: 'utf-16be', source: 'xml' };

  // When the loop runs out of bytes, the prescan is aborted and the answer is "get an XML encoding".
  let pos = 0;
  scan: while (pos < end) {
    if (startsWith(bytes, pos, [LT, BANG, DASH, DASH])) {
      // to the first '>' preceded by "--"; those two dashes may be the ones of "<!--" itself
      const close = indexOfSequence(bytes, [DASH, DASH, GT], pos + 2);
      if (close < 0) break scan;
      pos = close + 2;
    } else if (isMetaStart(bytes, pos)) {
      pos += 5; // at the space or slash after "<meta"
      const names = new Set<string>();
      let gotPragma = false;
      let needPragma: boolean | null = null;
      // undefined: no charset yet; null: a charset attribute whose label is unknown ("failure")
      let charset: string | null | undefined;
      for (;;) {
        const got = getAttribute(bytes, pos);
        if (!got) break scan;
        pos = got.pos;
        if (!got.attr) break;
        const { name, value } = got.attr;
        if (names.has(name)) continue;
        names.add(name);
        if (name === 'http-equiv') {
          if (value === 'content-type') gotPragma = true;
        } else if (name === 'content') {
          const enc = encodingFromMetaContent(value);
          if (enc !== null && charset === undefined) {
            charset = enc;
            needPragma = true;
          }
        } else if (name === 'charset') {
          charset = getEncoding(value);
          needPragma = false;
        }
      }
      // Processing
      if (needPragma !== null && !(needPragma && !gotPragma) && charset) {
        // A document cannot really declare UTF-16 in ASCII bytes: it means UTF-8. x-user-defined
        // means windows-1252 here.
        const enc = utf16ToUtf8(charset);
        return { charset: enc === 'x-user-defined' ? 'windows-1252' : enc, source: 'meta' };
      }
    } else if (bytes[pos] === LT && (isAsciiAlpha(bytes[pos + 1]) || (bytes[pos + 1] === SLASH && isAsciiAlpha(bytes[pos + 2])))) {
      // some other tag: skip its name, then its attributes (a '>' inside a quoted value does not end it)
      while (pos < end && !isSpace(bytes[pos]) && bytes[pos] !== GT) pos++;
      if (pos >= end) break scan;
      for (;;) {
        const got = getAttribute(bytes, pos);
        if (!got) break scan;
        pos = got.pos;
        if (!got.attr) break;
      }
    } else if (bytes[pos] === LT && (bytes[pos + 1] === BANG || bytes[pos + 1] === SLASH || bytes[pos + 1] === QUESTION)) {
      const close = bytes.indexOf(GT, pos + 1);
      if (close < 0) break scan;
      pos = close;
    }
    pos++; // next byte
  }
  const xml = xmlDeclarationEncoding(bytes);
  return xml ? { charset: xml, source: 'xml' } : null;
}

function isMetaStart(b: Uint8Array, pos: number): boolean {
  return (
    b[pos] === LT &&
    lowerByte(b[pos + 1] ?? 0) === 0x6d && // m
    lowerByte(b[pos + 2] ?? 0) === 0x65 && // e
    lowerByte(b[pos + 3] ?? 0) === 0x74 && // t
    lowerByte(b[pos + 4] ?? 0) === 0x61 && // a
    (isSpace(b[pos + 5]) || b[pos + 5] === SLASH)
  );
}

/**
 * The prescan's "get an attribute", from `pos`. Returns null when it runs out of bytes (which aborts
 * the prescan), `attr: null` when there is no further attribute (at a '>'), else the attribute with
 * its name and value ASCII-lower-cased, and where to go on from.
 */
function getAttribute(b: Uint8Array, start: number): { attr: { name: string; value: string } | null; pos: number } | null {
  const end = b.length;
  let pos = start;
  while (pos < end && (isSpace(b[pos]) || b[pos] === SLASH)) pos++;
  if (pos >= end) return null;
  if (b[pos] === GT) return { attr: null, pos };
  let name = '';
  let value = '';
  // the name
  for (;;) {
    if (pos >= end) return null;
    const c = b[pos]!;
    if (c === EQUALS && name.length > 0) {
      pos++;
      break;
    }
    if (isSpace(c)) {
      // Spaces: skip them; without an '=' after them, the attribute has no value
      while (pos < end && isSpace(b[pos])) pos++;
      if (pos >= end) return null;
      if (b[pos] !== EQUALS) return { attr: { name, value: '' }, pos };
      pos++;
      break;
    }
    if (c === SLASH || c === GT) return { attr: { name, value: '' }, pos };
    name += String.fromCharCode(lowerByte(c));
    pos++;
  }
  // Value
  while (pos < end && isSpace(b[pos])) pos++;
  if (pos >= end) return null;
  const first = b[pos]!;
  if (first === 0x22 || first === 0x27) {
    for (pos++; ; pos++) {
      if (pos >= end) return null;
      const c = b[pos]!;
      if (c === first) return { attr: { name, value }, pos: pos + 1 };
      value += String.fromCharCode(lowerByte(c));
    }
  }
  if (first === GT) return { attr: { name, value: '' }, pos };
  value += String.fromCharCode(lowerByte(first));
  for (pos++; ; pos++) {
    if (pos >= end) return null;
    const c = b[pos]!;
    if (isSpace(c) || c === GT) return { attr: { name, value }, pos };
    value += String.fromCharCode(lowerByte(c));
  }
}

const isAsciiWhitespace = (c: string | undefined) => c === '\t' || c === '\n' || c === '\f' || c === '\r' || c === ' ';

/**
 * The "algorithm for extracting a character encoding from a meta element", on a `content` value
 * (https://html.spec.whatwg.org/multipage/urls-and-fetching.html#algorithm-for-extracting-a-character-encoding-from-a-meta-element).
 * Returns the encoding's name, or null for none or an unknown label.
 */
export function encodingFromMetaContent(content: string): string | null {
  const s = content.replace(/[A-Z]+/g, (m) => m.toLowerCase()); // ASCII case-insensitive
  let pos = 0;
  for (;;) {
    const at = s.indexOf('charset', pos);
    if (at < 0) return null;
    pos = at + 7;
    while (isAsciiWhitespace(s[pos])) pos++;
    if (s[pos] !== '=') continue; // look again from that character on
    pos++;
    while (isAsciiWhitespace(s[pos])) pos++;
    const c = s[pos];
    if (c === undefined) return null;
    if (c === '"' || c === "'") {
      const close = s.indexOf(c, pos + 1);
      return close < 0 ? null : getEncoding(s.slice(pos + 1, close));
    }
    let stop = pos;
    while (stop < s.length && !isAsciiWhitespace(s[stop]) && s[stop] !== ';') stop++;
    return getEncoding(s.slice(pos, stop));
  }
}

/**
 * "Get an XML encoding": the encoding of a leading `<?xml … encoding="…"?>`, or null. As in Blink and
 * WebKit, whose algorithm the standard copies, only the declaration itself (up to its '>') is searched.
 */
function xmlDeclarationEncoding(b: Uint8Array): string | null {
  if (!startsWith(b, 0, [LT, QUESTION, 0x78, 0x6d, 0x6c])) return null;
  const declEnd = b.indexOf(GT);
  if (declEnd < 0) return null;
  const decl = b.subarray(0, declEnd);
  const at = indexOfSequence(decl, [0x65, 0x6e, 0x63, 0x6f, 0x64, 0x69, 0x6e, 0x67], 0); // "encoding"
  if (at < 0) return null;
  let pos = at + 8;
  while (pos < decl.length && decl[pos]! <= 0x20) pos++;
  if (decl[pos] !== EQUALS) return null;
  pos++;
  while (pos < decl.length && decl[pos]! <= 0x20) pos++;
  const quote = decl[pos];
  if (quote !== 0x22 && quote !== 0x27) return null;
  pos++;
  const close = decl.indexOf(quote, pos);
  if (close < 0) return null;
  const label = decl.subarray(pos, close);
  if (label.some((x) => x <= 0x20)) return null;
  const enc = getEncoding(String.fromCharCode(...label));
  return enc === null ? null : utf16ToUtf8(enc);
}

function startsWith(b: Uint8Array, pos: number, seq: readonly number[]): boolean {
  if (pos + seq.length > b.length) return false;
  for (let i = 0; i < seq.length; i++) if (b[pos + i] !== seq[i]) return false;
  return true;
}

function indexOfSequence(b: Uint8Array, seq: readonly number[], from: number): number {
  const first = seq[0]!;
  for (let i = b.indexOf(first, from); i >= 0 && i + seq.length <= b.length; i = b.indexOf(first, i + 1)) {
    if (startsWith(b, i, seq)) return i;
  }
  return -1;
}
