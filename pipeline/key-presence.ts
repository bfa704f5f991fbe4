/**
 * Which keys of a bucket this process has seen exist, as a hint for compare-and-set: a key it
 * never saw is most likely new (a new page's SimHash blocks, a host met for the first time),
 * so casUpdate writes it with create-if-absent at once instead of reading it first, and only
 * a create that finds the key there costs the read after all. The server's create decides,
 * so a wrong hint costs one round trip and never a wrong value.
 *
 * A bit per hashed key (1 Mi bits, 128 KB per bucket): a collision only makes a new key look
 * seen, which means the read as before. Where other processes create most keys (many simhash
 * workers sharing a large index), guesses go wrong: while more than half of the recent ones
 * did, only one in GUESS_WHEN_WRONG_EVERY is still tried, to notice when that changes.
 */
const BITS = 1 << 20;
const RECENT_GUESSES = 64;
const GUESS_WHEN_WRONG_EVERY = 16;

function fnv1a(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class KeyPresence {
  private readonly bits = new Uint8Array(BITS / 8);
  /** how the last RECENT_GUESSES guesses turned out (true: right), oldest first */
  private readonly recent: boolean[] = [];
  /** the wrong ones among them */
  private wrong = 0;
  /** keys passed over since the last guess while guesses go wrong */
  private skipped = 0;

  seen(key: string): void {
    const b = fnv1a(key) & (BITS - 1);
    this.bits[b >>> 3]! |= 1 << (b & 7);
  }

  /** True: write the key as new without reading it first. */
  guessAbsent(key: string): boolean {
    const b = fnv1a(key) & (BITS - 1);
    if ((this.bits[b >>> 3]! & (1 << (b & 7))) !== 0) return false;
    if (this.wrong * 2 <= this.recent.length) return true;
    this.skipped = (this.skipped + 1) % GUESS_WHEN_WRONG_EVERY;
    return this.skipped === 0;
  }

  /** How a guess turned out: `right` when the create landed. */
  guessed(right: boolean): void {
    this.recent.push(right);
    if (!right) this.wrong += 1;
    if (this.recent.length > RECENT_GUESSES && !this.recent.shift()) this.wrong -= 1;
  }
}
