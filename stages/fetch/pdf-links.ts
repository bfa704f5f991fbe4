import { constants as zlibConstants, inflateSync } from 'node:zlib';

/**
 * Limits that keep `harvestPdfLinks` bounded in time and memory on hostile input. The defaults suit
 * bodies of a few tens of MB.
 */
export interface PdfHarvestLimits {
  /** inflated bytes kept from one FlateDecode stream; a stream that inflates to more is skipped */
  maxStreamOutputBytes: number;
  /** inflated bytes in all, after which no further stream is inflated */
  maxTotalInflatedBytes: number;
  /** FlateDecode streams that are inflated at all */
  maxStreams: number;
  /** a URL longer than this is dropped */
  maxUrlLength: number;
  /** distinct candidate URLs that are parsed at all (the URL parser is the costliest step per match) */
  maxCandidates: number;
}

export const DEFAULT_PDF_LIMITS: PdfHarvestLimits = {
  maxStreamOutputBytes: 5 * 1024 * 1024,
  maxTotalInflatedBytes: 50 * 1024 * 1024,
  maxStreams: 10_000,
  maxUrlLength: 4096,
  maxCandidates: 20_000,
};

/** A PDF string (literal or hex) after /URI is given up on when longer than this, in source bytes. */
const MAX_PDF_STRING_SOURCE = 16 * 1024;

/**
 * Best-effort harvest of http(s) links from a PDF, without a PDF parser:
 * - the `/URI (…)` or `/URI <…>` of link actions (PDF literal-string escapes and hex strings decoded),
 * - any `http://` or `https://` text in the file, which covers uncompressed content streams,
 * - the same two inside FlateDecode streams (content streams, and the object streams where
 *   PDF 1.5+ files keep their link annotations), inflated with a cap per stream and in total.
 *
 * Returns absolute http/https URLs, serialized by the WHATWG URL parser (`new URL(u).href`), without
 * duplicates, in order of first appearance, at most `maxLinks`. Trailing punctuation (`.`, `,`, `)`,
 * `>`, …) is stripped. Never throws; a garbage or truncated file gives what could be found.
 * Text split across text-showing operators, or drawn with glyph-indexed fonts, is not recovered.
 */
export function harvestPdfLinks(bytes: Uint8Array, maxLinks = 1000, limits: Partial<PdfHarvestLimits> = {}): string[] {
  const found = new LinkSet(Math.max(0, Math.floor(maxLinks)), { ...DEFAULT_PDF_LIMITS, ...limits });
  if (found.full) return found.list;
  try {
    harvest(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), found);
  } catch {
    // best effort: keep whatever was found before the surprise
  }
  return found.list;
}

class LinkSet {
  readonly list: string[] = [];
  private readonly seen = new Set<string>();
  /** candidates as written, so that a URL repeated a million times is parsed once */
  private readonly tried = new Set<string>();
  constructor(
    private readonly max: number,
    readonly limits: PdfHarvestLimits,
  ) {}
  get full(): boolean {
    return this.list.length >= this.max || this.tried.size >= this.limits.maxCandidates;
  }
  add(candidate: string): void {
    if (this.full || this.tried.has(candidate)) return;
    this.tried.add(candidate);
    const url = cleanUrl(candidate, this.limits.maxUrlLength);
    if (url !== null && !this.seen.has(url)) {
      this.seen.add(url);
      this.list.push(url);
    }
  }
}

const STREAM = Buffer.from('stream', 'latin1');
const ENDSTREAM = Buffer.from('endstream', 'latin1');

function harvest(pdf: Buffer, found: LinkSet): void {
  const { limits } = found;
  let inflatedTotal = 0;
  let streams = 0;
  let cursor = 0; // everything before it has been scanned
  let from = 0;
  while (!found.full) {
    const kw = pdf.indexOf(STREAM, from);
    if (kw < 0) break;
    from = kw + STREAM.length;
    // the keyword follows the stream's dictionary: white space or its ">>" before it (so not the
    // "stream" of "endstream", nor of a word such as "upstream" in some text)
    if (kw > 0 && !isPdfWhitespace(pdf[kw - 1]!) && pdf[kw - 1] !== 0x3e) continue;
    // the keyword is followed by CRLF or LF (a lone CR is tolerated, as readers do)
    let dataStart = from;
    if (pdf[dataStart] === 0x0d) dataStart++;
    if (pdf[dataStart] === 0x0a) dataStart++;
    if (dataStart === from) continue;
    // No "endstream": a truncated file (a size cap). The rest is this stream's data, which a
    // Z_SYNC_FLUSH inflate can still partly decode; no other stream can follow.
    const endKw = pdf.indexOf(ENDSTREAM, dataStart);
    const end = endKw < 0 ? pdf.length : endKw;
    from = endKw < 0 ? pdf.length : endKw + ENDSTREAM.length;

    scanText(latin1(pdf, cursor, dataStart), found);
    cursor = from;
    const data = pdf.subarray(dataStart, end);
    let text: string | null = null;
    if (looksLikeZlib(data) && streams < limits.maxStreams && inflatedTotal < limits.maxTotalInflatedBytes) {
      streams++;
      const budget = Math.min(limits.maxStreamOutputBytes, limits.maxTotalInflatedBytes - inflatedTotal);
      try {
        // Z_SYNC_FLUSH: a truncated stream gives what it has instead of an error; bytes after the
        // end of the zlib stream (the EOL before "endstream") are ignored.
        const out = inflateSync(data, { maxOutputLength: budget, finishFlush: zlibConstants.Z_SYNC_FLUSH });
        inflatedTotal += out.length;
        text = out.toString('latin1');
      } catch {
        // Corrupt, or more than the cap. Count the work that may have been done before the error:
        // the cap, or what the input could inflate to at deflate's best ratio (about 1032:1), so that
        // a small broken stream costs little but many bombs cannot add up.
        inflatedTotal += Math.min(budget, data.length * DEFLATE_MAX_RATIO);
      }
    }
    // an uncompressed stream (or one that would not inflate) is scanned as it is
    scanText(text ?? latin1(pdf, dataStart, end), found);
    if (endKw < 0) break;
  }
  if (!found.full && cursor < pdf.length) scanText(latin1(pdf, cursor, pdf.length), found);
}

const DEFLATE_MAX_RATIO = 1032;

const latin1 = (b: Buffer, start: number, end: number) => b.toString('latin1', start, end);

/** A zlib header: deflate, window ≤ 32 KB, check bits right. */
function looksLikeZlib(d: Uint8Array): boolean {
  if (d.length < 2) return false;
  const cmf = d[0]!;
  const flg = d[1]!;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

// /URI followed by a string, or an http(s) URL in the text (the scheme is case-insensitive)
const LINK_START = /\/URI[\0\t\n\f\r ]*([(<])|[hH][tT][tT][pP][sS]?:\/\//g;

/** Finds links in one stretch of (latin1-decoded) PDF bytes. Linear in its length. */
function scanText(s: string, found: LinkSet): void {
  LINK_START.lastIndex = 0;
  for (let m = LINK_START.exec(s); m !== null && !found.full; m = LINK_START.exec(s)) {
    if (m[1] !== undefined) {
      const open = m.index + m[0].length - 1;
      const str = m[1] === '(' ? readLiteralString(s, open) : readHexString(s, open);
      if (str.value !== null) {
        const uri = pdfTextString(str.value).trim();
        if (/^https?:\/\//i.test(uri)) found.add(uri);
      }
      // Past the string, even one given up on: a string is read once, so the scan stays linear.
      LINK_START.lastIndex = Math.max(str.end, open + 1);
    } else {
      let end = m.index + m[0].length;
      while (end < s.length && isUrlChar(s.charCodeAt(end))) end++;
      found.add(s.slice(m.index, end));
      LINK_START.lastIndex = end;
    }
  }
  LINK_START.lastIndex = 0;
}

/**
 * What a bare URL in PDF text may contain: printable ASCII but for the PDF delimiters and the
 * characters that cannot be in a URL as written: ( ) < > [ ] { } " \ and space.
 */
function isUrlChar(c: number): boolean {
  if (c <= 0x20 || c >= 0x7f) return false;
  switch (c) {
    case 0x28: // (
    case 0x29: // )
    case 0x3c: // <
    case 0x3e: // >
    case 0x5b: // [
    case 0x5d: // ]
    case 0x7b: // {
    case 0x7d: // }
    case 0x22: // "
    case 0x5c: // \
      return false;
    default:
      return true;
  }
}

/**
 * A PDF literal string starting at the '(' at `open`: balanced parentheses, and the escapes
 * \n \r \t \b \f \( \) \\ \ddd and a backslash before an end of line. `value: null` when it is not
 * closed within MAX_PDF_STRING_SOURCE bytes; `end` is where reading stopped.
 */
function readLiteralString(s: string, open: number): { value: string | null; end: number } {
  const limit = Math.min(s.length, open + MAX_PDF_STRING_SOURCE);
  let depth = 1;
  let out = '';
  let i = open + 1;
  while (i < limit) {
    const c = s[i]!;
    if (c === '\\') {
      const n = s[i + 1];
      i += 2;
      switch (n) {
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case '\r':
          if (s[i] === '\n') i++; // a line continuation
          break;
        case '\n':
          break;
        case undefined:
          return { value: null, end: i };
        default:
          if (n >= '0' && n <= '7') {
            let code = n.charCodeAt(0) - 0x30;
            for (let k = 0; k < 2 && s[i]! >= '0' && s[i]! <= '7'; k++, i++) code = code * 8 + (s.charCodeAt(i) - 0x30);
            out += String.fromCharCode(code & 0xff);
          } else {
            out += n; // \( \) \\ , and an unknown escape is the character itself
          }
      }
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return { value: out, end: i + 1 };
    out += c;
    i++;
  }
  return { value: null, end: limit };
}

/** A PDF hex string starting at the '<' at `open`; white space is ignored, an odd last digit is padded with 0. */
function readHexString(s: string, open: number): { value: string | null; end: number } {
  const limit = Math.min(s.length, open + MAX_PDF_STRING_SOURCE);
  let digits = '';
  for (let i = open + 1; i < limit; i++) {
    const c = s[i]!;
    if (c === '>') {
      if (digits.length % 2 === 1) digits += '0';
      return { value: Buffer.from(digits, 'hex').toString('latin1'), end: i + 1 };
    }
    const code = c.charCodeAt(0);
    if ((code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66)) digits += c;
    else if (!isPdfWhitespace(code)) return { value: null, end: i }; // not a hex string ("<<" is a dictionary)
  }
  return { value: null, end: limit };
}

/** NUL, HT, LF, FF, CR, SP */
const isPdfWhitespace = (c: number) => c === 0x00 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d || c === 0x20;

/** A PDF text string's bytes (as latin1 code units) to text: UTF-16BE or UTF-8 when marked so, else as is. */
function pdfTextString(raw: string): string {
  const bytes = Buffer.from(raw, 'latin1');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes.subarray(3));
  return raw;
}

const TRAILING_PUNCTUATION = new Set(['.', ',', ';', ':', '!', '?', "'", '"', '>', ']', '}', '*']);

/** An absolute http(s) URL without trailing punctuation, serialized, or null. */
function cleanUrl(candidate: string, maxLength: number): string | null {
  if (candidate.length > maxLength) return null;
  let u = candidate;
  for (;;) {
    const last = u[u.length - 1];
    if (last === undefined) return null;
    if (TRAILING_PUNCTUATION.has(last)) u = u.slice(0, -1);
    // a closing parenthesis stays when it closes one opened in the URL (…/Foo_(bar))
    else if (last === ')' && count(u, '(') < count(u, ')')) u = u.slice(0, -1);
    else break;
  }
  if (!/^https?:\/\/./i.test(u)) return null;
  try {
    const url = new URL(u);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return null;
    return url.href;
  } catch {
    return null;
  }
}

function count(s: string, ch: string): number {
  let n = 0;
  for (let i = s.indexOf(ch); i >= 0; i = s.indexOf(ch, i + 1)) n++;
  return n;
}
