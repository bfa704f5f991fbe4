/**
 * A map whose entries expire and whose size is bounded: the least recently used entry leaves
 * first when it is full, and expired entries leave when they are read or when a sweep passes.
 * A Map keeps insertion order, so moving an entry to the end on each read makes the first key
 * the least recently used one.
 */
export class TtlLru<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private lastSweep = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
    /** how often (ms of `now`) a write also drops every expired entry: O(size), so not on every write */
    private readonly sweepEveryMs = 60_000,
  ) {
    if (!(maxEntries >= 1)) throw new Error(`a cache needs room for at least one entry, got ${maxEntries}`);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The live value of `key`, or undefined (an expired entry is dropped on the way). */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.until <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, until: number): void {
    const now = this.now();
    if (now - this.lastSweep >= this.sweepEveryMs) this.sweep(now);
    this.entries.delete(key);
    this.entries.set(key, { value, until });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, entry] of this.entries) if (entry.until <= now) this.entries.delete(key);
  }
}
