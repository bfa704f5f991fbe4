/**
 * 64-bit SimHash (Charikar) over word shingles, plus helpers to compare, serialize and
 * index fingerprints (the exact digest is content-digest.ts).
 *
 * Hot path avoids BigInt: each word is hashed once (murmur3-style over UTF-16 code units)
 * and finalized into two 32-bit lanes, each shingle hash is a mix of its words' lane
 * hashes, and 64 per-bit counters are accumulated with plain 32-bit integer ops (4 bits
 * per add, SWAR style). BigInt is only used to assemble the final fingerprint.
 */
import { fmix32 } from './hash32.js';

export const DEFAULT_SHINGLE_SIZE = 3;
export const DEFAULT_BLOCK_K = 3;

/**
 * Word tokens: runs of letters, combining marks and digits (marks so that e.g. Devanagari
 * words are not split at vowel signs). Han, Hiragana and Katakana characters are emitted
 * one per token, since those scripts do not separate words with spaces.
 *
 * WORD_RE is the reference definition (used by tokenizeWords); simhash64 uses an
 * equivalent hand-written scanner over a per-code-unit class table, which avoids
 * allocating a string per word. (Built from a string: the `v` flag is newer than the
 * compile target's regex checker.)
 */
const CJK = '\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}';
const WORD_RE = new RegExp(`[[\\p{L}\\p{M}\\p{N}]--[${CJK}]]+|[${CJK}]`, 'gv');
const WORD_CHAR_RE = /^[\p{L}\p{M}\p{N}]$/u;
const CJK_CHAR_RE = new RegExp(`^[${CJK}]$`, 'u');

const NOT_WORD = 0;
const WORD = 1;
const CJK_WORD = 2;

function classify(ch: string): number {
  return CJK_CHAR_RE.test(ch) ? CJK_WORD : WORD_CHAR_RE.test(ch) ? WORD : NOT_WORD;
}

/** Class of every BMP code unit (surrogates: NOT_WORD, pairs are classified separately). */
let bmpClasses: Uint8Array | null = null;

function getBmpClasses(): Uint8Array {
  if (bmpClasses === null) {
    // ~20 ms once per process.
    const table = new Uint8Array(0x10000);
    for (let c = 0; c < 0x10000; c++) {
      if (c < 0xd800 || c > 0xdfff) table[c] = classify(String.fromCharCode(c));
    }
    bmpClasses = table;
  }
  return bmpClasses;
}

const WORD_SEED = 0x9747b28c;
const LANE_SEED = 0x5bd1e995;
const SHINGLE_SEED_LO = 0x85ebca6b;
const SHINGLE_SEED_HI = 0xc2b2ae35;


/** Murmur3-style mixing step: absorb a 32-bit value `k` into state `h` (mixIn of scramble). */
function absorb(h: number, k: number): number {
  return mixIn(h, scramble(k));
}

/** The half of absorb that depends on `k` alone: done once per word, not once per shingle it is in. */
function scramble(k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, 0x1b873593);
}

/** The half of absorb that folds a scrambled value into the state. */
function mixIn(h: number, scrambled: number): number {
  h ^= scrambled;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function flushCounts(counts: Int32Array, accLo: Int32Array, accHi: Int32Array): void {
  for (let j = 0; j < 8; j++) {
    const l = accLo[j]!;
    const h = accHi[j]!;
    for (let m = 0; m < 4; m++) {
      counts[j + 8 * m] += (l >>> (8 * m)) & 0xff;
      counts[32 + j + 8 * m] += (h >>> (8 * m)) & 0xff;
    }
    accLo[j] = 0;
    accHi[j] = 0;
  }
}

/** Lane hashes of a finished word, from its absorb state and length in UTF-16 units. */
function finishLo(h: number, len: number): number {
  return fmix32(h ^ len) | 0;
}
function finishHi(h: number, len: number): number {
  return fmix32(Math.imul(h ^ len ^ LANE_SEED, 0x27d4eb2f)) | 0;
}

/** The two 32-bit lane hashes of one (already lowercased) word. Reference for wordHashes. */
export function hashWord(word: string): [number, number] {
  let h = WORD_SEED;
  for (let j = 0; j < word.length; j++) h = absorb(h, word.charCodeAt(j));
  return [finishLo(h, word.length), finishHi(h, word.length)];
}

/**
 * Lane hashes of the last text's words, reused (a page's text is tens of thousands of
 * characters). They grow with the texts up to SCRATCH_MAX code units, allocated when first
 * needed rather than at start-up in every thread that imports this module; a longer text gets
 * arrays of its own, so one huge page does not leave megabytes held for the life of the thread.
 */
const SCRATCH_MAX = 1 << 16;
let scratchLo = new Int32Array(0);
let scratchHi = new Int32Array(0);

/** Arrays for `n` words: the reused ones (grown, up to SCRATCH_MAX), or new ones past it. */
function wordArrays(n: number): { lo: Int32Array; hi: Int32Array } {
  if (n > SCRATCH_MAX) return { lo: new Int32Array(n), hi: new Int32Array(n) };
  if (scratchLo.length < n) {
    const size = Math.min(SCRATCH_MAX, Math.max(n, 2 * scratchLo.length, 4096));
    scratchLo = new Int32Array(size);
    scratchHi = new Int32Array(size);
  }
  return { lo: scratchLo, hi: scratchHi };
}

/**
 * Lowercases `text`, splits it into words exactly like tokenizeWords and hashes each word
 * like hashWord, without materializing the words. Returns the lane hashes in `lo`/`hi`
 * (valid up to `count`, and only until the next call: the arrays are reused).
 */
export function wordHashes(text: string): { lo: Int32Array; hi: Int32Array; count: number } {
  const s = text.toLowerCase();
  const n = s.length;
  const table = getBmpClasses();
  // At most one word per code unit.
  const { lo, hi } = wordArrays(n);
  let count = 0;
  let h = WORD_SEED;
  let len = 0; // > 0 while inside a WORD run
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    let cls: number;
    let units = 1;
    if (c < 0xd800 || c > 0xdfff) {
      cls = table[c]!;
      if (cls === WORD) {
        // the common case, kept apart from the surrogate pairs' bookkeeping below
        h = absorb(h, c);
        len += 1;
        continue;
      }
    } else if (c <= 0xdbff && i + 1 < n && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      cls = classify(s.slice(i, i + 2));
      units = 2;
      if (cls === WORD) {
        h = absorb(absorb(h, c), s.charCodeAt(++i));
        len += 2;
        continue;
      }
    } else {
      cls = NOT_WORD; // a lone surrogate
    }
    if (len > 0) {
      lo[count] = finishLo(h, len);
      hi[count++] = finishHi(h, len);
      h = WORD_SEED;
      len = 0;
    }
    if (cls === CJK_WORD) {
      let k = absorb(WORD_SEED, c);
      if (units === 2) k = absorb(k, s.charCodeAt(++i));
      lo[count] = finishLo(k, units);
      hi[count++] = finishHi(k, units);
    } else if (units === 2) {
      i++; // skip the low surrogate of a non-word astral character
    }
  }
  if (len > 0) {
    lo[count] = finishLo(h, len);
    hi[count++] = finishHi(h, len);
  }
  return { lo, hi, count };
}

/** Splits text into lowercased word tokens (see WORD_RE). */
export function tokenizeWords(text: string): string[] {
  return text.toLowerCase().match(WORD_RE) ?? [];
}

/**
 * 64-bit SimHash of `text` over shingles of `shingleSize` consecutive words; every shingle
 * occurrence has weight 1. Texts with fewer words than `shingleSize` form one shingle.
 * Returns 0n when the text has no words.
 */
export function simhash64(text: string, shingleSize: number = DEFAULT_SHINGLE_SIZE): bigint {
  return simhashAndWords(text, shingleSize).hash;
}

/** simhash64 and the number of words it was made of (tokenizeWords(text).length, without a second pass). */
export function simhashAndWords(text: string, shingleSize: number = DEFAULT_SHINGLE_SIZE): { hash: bigint; words: number } {
  if (!Number.isInteger(shingleSize) || shingleSize < 1) {
    throw new RangeError(`shingleSize must be a positive integer, got ${shingleSize}`);
  }
  const { lo, hi, count: nWords } = wordHashes(text);
  if (nWords === 0) return { hash: 0n, words: 0 };

  const size = Math.min(shingleSize, nWords);
  const nShingles = nWords - size + 1;
  // Per-bit counters. Bits are counted 4 at a time: accLo[j] holds, in byte m, the count of
  // bit j + 8m since the last flush; flushed before any byte can overflow (255 adds).
  const counts = new Int32Array(64);
  const accLo = new Int32Array(8);
  const accHi = new Int32Array(8);
  let pending = 0;
  // every word is in up to `size` shingles: its half of absorb is done once, here
  for (let j = 0; j < nWords; j++) {
    lo[j] = scramble(lo[j]!);
    hi[j] = scramble(hi[j]!);
  }
  for (let i = 0; i < nShingles; i++) {
    let a = SHINGLE_SEED_LO;
    let b = SHINGLE_SEED_HI;
    for (let j = i; j < i + size; j++) {
      a = mixIn(a, lo[j]!);
      b = mixIn(b, hi[j]!);
    }
    a = fmix32(a ^ size);
    b = fmix32(b ^ size);
    for (let j = 0; j < 8; j++) {
      accLo[j] += (a >>> j) & 0x01010101;
      accHi[j] += (b >>> j) & 0x01010101;
    }
    if (++pending === 255) {
      flushCounts(counts, accLo, accHi);
      pending = 0;
    }
  }
  flushCounts(counts, accLo, accHi);

  // Bit set iff more than half of the shingles had it set (i.e. weighted sum > 0).
  let outLo = 0;
  let outHi = 0;
  for (let bit = 0; bit < 32; bit++) {
    if (2 * counts[bit]! > nShingles) outLo |= 1 << bit;
    if (2 * counts[bit + 32]! > nShingles) outHi |= 1 << bit;
  }
  return { hash: (BigInt(outHi >>> 0) << 32n) | BigInt(outLo >>> 0), words: nWords };
}

/** Set bits of a 32-bit value. */
export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Number of differing bits between two 64-bit fingerprints (inputs taken mod 2^64). */
export function hammingDistance(a: bigint, b: bigint): number {
  const x = BigInt.asUintN(64, a ^ b);
  return popcount32(Number(x & 0xffffffffn)) + popcount32(Number(x >> 32n));
}

/** 16 lowercase hex chars, zero padded. */
export function simhashToHex(h: bigint): string {
  return BigInt.asUintN(64, h).toString(16).padStart(16, '0');
}

const HEX64 = /^[0-9a-fA-F]{1,16}$/;

/** Inverse of simhashToHex; throws on anything that is not 1–16 hex digits. */
export function simhashFromHex(s: string): bigint {
  if (!HEX64.test(s)) throw new SyntaxError(`invalid simhash hex: ${JSON.stringify(s)}`);
  return BigInt('0x' + s);
}

/**
 * Pigeonhole index keys: the 64 bits are split into k+1 contiguous blocks (most significant
 * first; when 64 is not divisible the leading blocks get one extra bit) and one key
 * `b<i>-<hex>` is returned per block. Two fingerprints within Hamming distance k differ in
 * at most k blocks, so they share at least one key. For k=3: four 16-bit blocks, e.g.
 * `b0-1a2f`, where block 0 is the first 4 hex chars of simhashToHex(h).
 */
export function blockKeys(h: bigint, k: number = DEFAULT_BLOCK_K): string[] {
  if (!Number.isInteger(k) || k < 0 || k > 63) {
    throw new RangeError(`k must be an integer in [0, 63], got ${k}`);
  }
  const v = BigInt.asUintN(64, h);
  const blocks = k + 1;
  const base = Math.floor(64 / blocks);
  const extra = 64 % blocks;
  const keys: string[] = new Array(blocks);
  let remaining = 64;
  for (let i = 0; i < blocks; i++) {
    const bits = base + (i < extra ? 1 : 0);
    remaining -= bits;
    const value = (v >> BigInt(remaining)) & ((1n << BigInt(bits)) - 1n);
    keys[i] = `b${i}-${value.toString(16).padStart(Math.ceil(bits / 4), '0')}`;
  }
  return keys;
}
