/**
 * A binary min-heap ordered by `before(a, b)` (a goes first). The gate keeps two: the
 * timetable of hosts by the time they come due, and the due hosts ranked by breadth.
 */
export class BinaryHeap<T> {
  private readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(a[i]!, a[parent]!)) break;
      [a[parent], a[i]] = [a[i]!, a[parent]!];
      i = parent;
    }
  }

  /** Keeps only the items `keep` says to, in heap order again (O(n)). */
  retain(keep: (item: T) => boolean): void {
    const a = this.items;
    let n = 0;
    for (const item of a) if (keep(item)) a[n++] = item;
    a.length = n;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  private siftDown(from: number): void {
    const a = this.items;
    let i = from;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.before(a[l]!, a[m]!)) m = l;
      if (r < a.length && this.before(a[r]!, a[m]!)) m = r;
      if (m === i) break;
      [a[m], a[i]] = [a[i]!, a[m]!];
      i = m;
    }
  }
}
