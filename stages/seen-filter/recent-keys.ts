/**
 * Exact keys (exact-key.ts) this process knows to be in the exact record: written by it, or
 * read from it. A Bloom hit on one of them needs no KV read. Most links that get past
 * normalize's own recent-URL filter and hit the Bloom filter are repeats of URLs decided
 * not long ago (a host's navigation seen again once normalize forgot it), so a bounded set of
 * recent keys answers most of them. Bounded: when the current half is full the older half
 * is forgotten; a key read again goes into the current half, so keys in steady use stay.
 * Safe to lose at any time: the exact record is the authority.
 */
export class RecentKeys {
  private current = new Set<string>();
  private previous = new Set<string>();

  constructor(readonly capacity: number) {}

  has(key: string): boolean {
    if (this.current.has(key)) return true;
    if (!this.previous.has(key)) return false;
    this.add(key);
    return true;
  }

  add(key: string): void {
    if (this.current.size >= this.capacity / 2) {
      this.previous = this.current;
      this.current = new Set();
    }
    this.current.add(key);
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }
}
