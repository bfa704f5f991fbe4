/** A bounded set of strings: past `max`, the one added longest ago is forgotten (only a cache of what KV holds). */
export class KnownSet {
  private readonly items = new Set<string>();

  constructor(private readonly max = 100_000) {}

  has(item: string): boolean {
    return this.items.has(item);
  }

  add(item: string): void {
    this.items.add(item);
    if (this.items.size > this.max) this.items.delete(this.items.values().next().value!);
  }
}
