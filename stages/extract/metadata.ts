/**
 * Small normalizers for document metadata: language tags, whitespace.
 */

const LANG_TAG = /^[a-z]{2,8}(?:-[a-z0-9]{1,8})*$/;

/**
 * Normalizes a language tag from `<html lang>` or a Content-Language value:
 * first comma-separated entry, trimmed, `_` → `-`, lowercased, e.g. `en_US` → `en-us`.
 * Returns null when empty or not shaped like a BCP 47 tag.
 */
export function normalizeLanguage(raw: string | null | undefined): string | null {
  if (raw == null) return null;
  const comma = raw.indexOf(',');
  const tag = (comma >= 0 ? raw.slice(0, comma) : raw).trim().replace(/_/g, '-').toLowerCase();
  return LANG_TAG.test(tag) ? tag : null;
}

/** Marker for a hard line break inside text passed to collapseWhitespace(s, true). */
export const LINE_BREAK = '\u0000';

/** JS `\s` plus all C0 controls (U+0000 included; collapseChunks may also treat it as a line break). */
export function isSpace(c: number): boolean {
  if (c <= 32) return true;
  if (c < 0xa0) return false;
  return (
    c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
    c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

/**
 * Collapses every run of whitespace (and C0 controls) to a single space and trims the
 * ends. With `lineBreaks`, a run containing LINE_BREAK (U+0000) becomes '\n' instead, so
 * callers can mark block boundaries with it. One linear pass, no regex.
 */
export function collapseWhitespace(s: string, lineBreaks = false): string {
  return collapseChunks([[s]], lineBreaks);
}

/**
 * collapseWhitespace over the concatenation of all strings in `chunks.slice(from, to)` (an
 * array of string arrays, flattened in order), without materializing it. Words may span
 * strings: [['bo'], ['ld']] gives 'bold'. Stops early once the output exceeds `maxLength`
 * (the result may then be somewhat longer than `maxLength`; callers truncate).
 */
export function collapseChunks(
  chunks: readonly (readonly string[])[],
  lineBreaks = false,
  from = 0,
  to = chunks.length,
  maxLength = Infinity,
): string {
  return collapseMarking(chunks, lineBreaks, from, to, maxLength, NO_MARKS, UNUSED_MARKS);
}

const NO_MARKS: readonly number[] = [];
const UNUSED_MARKS: number[] = []; // never written: nothing to mark

/**
 * collapseChunks(chunks, true) and, in the same pass, collapseChunks(chunks, false, r.start,
 * r.end) of each range: the page's full text and its blocks' texts, in one pass over the
 * pieces instead of two. `ranges` are in order and do not overlap.
 *
 * Why slices of the full text are the ranges' texts: collapsing writes a word's characters
 * by the end of the piece holding them, and a separator (' ', or '\n' for a run holding
 * LINE_BREAK) only just before the next word. So the output written while a range's pieces
 * were read is that range's words with the separators between them, after at most one
 * separator before its first word; words hold no whitespace, so dropping that separator and
 * turning '\n' into ' ' gives what collapsing the range alone without line breaks gives.
 */
export function collapseChunksAndRanges(
  chunks: readonly (readonly string[])[],
  ranges: readonly { start: number; end: number }[],
): { text: string; rangeTexts: string[] } {
  const at: number[] = [];
  for (const r of ranges) at.push(r.start, r.end);
  const marks: number[] = [];
  const text = collapseMarking(chunks, true, 0, chunks.length, Infinity, at, marks);
  const rangeTexts = ranges.map((_, i) => {
    let t = text.slice(marks[2 * i]!, marks[2 * i + 1]!);
    const c = t.charCodeAt(0);
    if (c === 32 || c === 10) t = t.slice(1);
    return t.includes('\n') ? t.replaceAll('\n', ' ') : t;
  });
  return { text, rangeTexts };
}

/** collapseChunks, also pushing onto `marks` the output's length when reaching each piece index of `at` (ascending). */
function collapseMarking(
  chunks: readonly (readonly string[])[],
  lineBreaks: boolean,
  from: number,
  to: number,
  maxLength: number,
  at: readonly number[],
  marks: number[],
): string {
  let out = '';
  let pending = 0; // separator owed before the next non-space char: 0 none, 1 ' ', 2 '\n'
  let nextMark = 0;
  for (let q = from; q < to && out.length <= maxLength; q++) {
    while (nextMark < at.length && at[nextMark]! <= q) {
      marks.push(out.length);
      nextMark++;
    }
    const group = chunks[q]!;
    for (let p = 0; p < group.length; p++) {
      const s = group[p]!;
      const n = s.length;
      let seg = -1; // start of the not yet copied part of s, while inside a word
      let i = 0;
      while (i < n) {
        const c = s.charCodeAt(i);
        if (!isSpace(c)) {
          if (seg < 0) {
            if (pending !== 0) {
              if (out.length > 0) out += pending === 2 ? '\n' : ' ';
              pending = 0;
            }
            seg = i;
          }
          i++;
          continue;
        }
        // Fast path: a single ' ' between two non-space chars is already collapsed; keep copying.
        if (seg >= 0 && c === 32 && i + 1 < n && !isSpace(s.charCodeAt(i + 1))) {
          i += 2;
          continue;
        }
        let brk = lineBreaks && c === 0;
        let j = i + 1;
        for (; j < n; j++) {
          const d = s.charCodeAt(j);
          if (!isSpace(d)) break;
          if (d === 0 && lineBreaks) brk = true;
        }
        if (seg >= 0) {
          out += s.slice(seg, i);
          seg = -1;
        }
        if (brk) pending = 2;
        else if (pending === 0) pending = 1;
        i = j;
      }
      if (seg >= 0) out += seg === 0 ? s : s.slice(seg);
    }
  }
  while (nextMark < at.length) {
    marks.push(out.length);
    nextMark++;
  }
  return out;
}

/** Truncates to at most `max` UTF-16 units without splitting a surrogate pair. */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return s.slice(0, end).trimEnd();
}
