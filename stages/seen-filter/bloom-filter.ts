/**
 * A scalable Bloom filter (Almeida et al., 2007): a list of plain Bloom filters ("slices").
 * The first slice is sized for the planned number of URLs at 16 bits per URL with k = 11
 * hash functions, a false-positive rate of about 0.046 %. When a slice is full, a new one
 * twice as large is added with half the false-positive rate (1.44 more bits and one more
 * hash per URL), so a crawl larger than planned keeps a bounded false-positive rate (at most
 * twice the first slice's, 0.092 %) instead of degrading silently. Memory stays ~2 bytes per
 * URL at the planned size and grows to at most ~2.2 bytes per URL after a few doublings.
 *
 * Pure: no I/O. The hash must never change: snapshots hold bit positions derived from it.
 */
import { fmix32 } from '../shared/content-identity/hash32.js';

/** Bits per element and hash count of the first slice: 16 bits (2 bytes) at its capacity. */
export const FIRST_SLICE_BITS_PER_ELEMENT = 16;
export const FIRST_SLICE_HASHES = 11;
/** each new slice is this many times larger than the previous one */
const GROWTH = 2;
/** the false-positive rate of each new slice is this fraction of the previous one */
const TIGHTENING = 0.5;

/** Two independent 32-bit hashes of a key, combined by double hashing into k bit positions. */
export interface KeyHash {
  h1: number;
  h2: number;
}

/**
 * MurmurHash3-style mixing of the UTF-16 code units, run with two seeds in one pass.
 * Not cryptographic (nobody gains by choosing URLs that collide here, and an attacker who
 * could would only make their own URLs look seen).
 */
export function hashKey(key: string): KeyHash {
  let a = 0x9747b28c;
  let b = 0x5bd1e995;
  const n = key.length;
  // two UTF-16 code units per round: half the rounds of one per unit
  let i = 0;
  for (; i + 1 < n; i += 2) {
    const c = key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16);
    a = Math.imul(a ^ c, 0xcc9e2d51);
    a = (a << 15) | (a >>> 17);
    a = Math.imul(a, 0x1b873593);
    b = Math.imul(b ^ c, 0x85ebca6b);
    b = (b << 13) | (b >>> 19);
    b = Math.imul(b, 0xc2b2ae35);
  }
  if (i < n) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0xcc9e2d51);
    b = Math.imul(b ^ c, 0x85ebca6b);
  }
  return { h1: fmix32(a ^ n), h2: fmix32(b ^ n ^ 0x5f3759df) };
}


/** The theoretical false-positive rate of a Bloom filter at `bitsPerElement` with `k` hashes, when full. */
export function falsePositiveRate(bitsPerElement: number, k: number): number {
  return (1 - Math.exp(-k / bitsPerElement)) ** k;
}

/** One plain Bloom filter of `bits.length * 8` bits. */
export class BloomSlice {
  readonly bitCount: number;
  constructor(
    /** elements this slice is sized for */
    readonly capacity: number,
    readonly hashes: number,
    readonly bits: Uint8Array,
    /** elements added so far */
    public count = 0,
  ) {
    this.bitCount = bits.length * 8;
  }

  static create(capacity: number, bitsPerElement: number, hashes: number): BloomSlice {
    const bytes = Math.max(8, Math.ceil((capacity * bitsPerElement) / 8));
    return new BloomSlice(capacity, hashes, new Uint8Array(bytes));
  }

  has(h: KeyHash): boolean {
    const m = this.bitCount;
    // enhanced double hashing (Dillinger & Manolios): positions h1 + i*h2 + (i^3 - i)/6, mod m;
    // x, y < m, so a subtraction replaces the (slower) modulo
    let x = h.h1 % m;
    let y = h.h2 % m;
    for (let i = 0; i < this.hashes; i++) {
      if ((this.bits[x >>> 3]! & (1 << (x & 7))) === 0) return false;
      x += y;
      if (x >= m) x -= m;
      y += i + 1;
      if (y >= m) y -= m;
    }
    return true;
  }

  add(h: KeyHash): void {
    const m = this.bitCount;
    let x = h.h1 % m;
    let y = h.h2 % m;
    for (let i = 0; i < this.hashes; i++) {
      this.bits[x >>> 3]! |= 1 << (x & 7);
      x += y;
      if (x >= m) x -= m;
      y += i + 1;
      if (y >= m) y -= m;
    }
    this.count += 1;
  }

  get full(): boolean {
    return this.count >= this.capacity;
  }
}

export class ScalableBloomFilter {
  constructor(readonly slices: BloomSlice[]) {
    if (slices.length === 0) throw new Error('a scalable Bloom filter needs at least one slice');
  }

  /**
   * A filter planned for `expected` elements (at least 1,024): 16 bits each. With `headroom`
   * (e.g. 1.1) the same bits take that many times more elements before a new slice is added:
   * a partition's share of the URLs is never exact (hosts hash unevenly), and a second slice
   * for the last 1 % would cost more than a slightly fuller first one.
   */
  static create(expected: number, headroom = 1): ScalableBloomFilter {
    const planned = Math.max(1024, Math.ceil(expected));
    const capacity = Math.ceil(planned * headroom);
    const bitsPerElement = (planned * FIRST_SLICE_BITS_PER_ELEMENT) / capacity;
    const hashes = headroom === 1 ? FIRST_SLICE_HASHES : Math.max(1, Math.round(bitsPerElement * Math.LN2));
    return new ScalableBloomFilter([BloomSlice.create(capacity, bitsPerElement, hashes)]);
  }

  has(h: KeyHash): boolean {
    for (let i = this.slices.length - 1; i >= 0; i--) if (this.slices[i]!.has(h)) return true;
    return false;
  }

  /** Adds the key unless it is (probably) present; returns true when it was added. */
  add(h: KeyHash): boolean {
    if (this.has(h)) return false;
    let last = this.slices[this.slices.length - 1]!;
    if (last.full) {
      last = nextSlice(last);
      this.slices.push(last);
    }
    last.add(h);
    return true;
  }

  /** elements added */
  get count(): number {
    return this.slices.reduce((n, s) => n + s.count, 0);
  }

  /** bytes of bit arrays: the memory the filter costs */
  get byteSize(): number {
    return this.slices.reduce((n, s) => n + s.bits.length, 0);
  }

  /** The false-positive rate bound: the sum over slices of each one's rate when full. */
  get falsePositiveBound(): number {
    return this.slices.reduce((p, s) => p + falsePositiveRate(s.bitCount / s.capacity, s.hashes), 0);
  }
}

function nextSlice(last: BloomSlice): BloomSlice {
  // halving the rate costs ln 2 / (ln 2)^2 = 1.44 bits per element and one more hash
  const bitsPerElement = last.bitCount / last.capacity + Math.log(1 / TIGHTENING) / Math.LN2 ** 2;
  return BloomSlice.create(last.capacity * GROWTH, bitsPerElement, last.hashes + 1);
}

/** The false-positive rate at the planned size (16 bits per URL, k = 11): what the README states. */
export const FIRST_SLICE_FALSE_POSITIVE_RATE = falsePositiveRate(FIRST_SLICE_BITS_PER_ELEMENT, FIRST_SLICE_HASHES);
