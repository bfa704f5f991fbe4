/**
 * The due hosts of a gate's timetable, in the order they are served when the gate cannot
 * serve them all at once (its turns are all taken): seeds, sitemaps and changed pages first
 * (a host whose next URL is in the high lane), then by seed 003's breadth key weighed by
 * importance: the requests granted so far to the host's registrable domain (domain-tally.ts),
 * plus one, over the domain's importance weight (1 + log2(1 + in-links from other domains),
 * domain-importance.ts; 1 with importance off, which leaves the fewest grants first), lowest
 * first; then the shallowest next URL, then the longest due, then the first to arrive. So a
 * domain never crawled goes before one crawled, among those never crawled the most linked goes
 * first, and a domain linked 1,000 times (weight about 11) is served about 11 times as often
 * as an unlinked one while both have work. The key is taken when a host becomes due and
 * checked again when it comes to the top (its domain may have been granted more meanwhile),
 * so the heap never holds a better key than the host has.
 *
 * No host waits here for ever: one that has waited here longer than `maxWaitMs` is served before any
 * better-ranked host (a FIFO beside the heap finds it), so a much-crawled domain is slowed,
 * never starved. Entries are (host, due time); one whose host was served or notified again
 * since is stale (`isCurrent` says) and skipped.
 */
import { BinaryHeap } from './binary-heap.js';

export interface ReadyKey {
  /** 0: the host's next URL is high priority */
  rank: number;
  domainGrants: number;
  /** the domain's importance weight, at least 1 (importanceWeight) */
  weight: number;
  depth: number;
  at: number;
}

interface Entry {
  host: string;
  at: number;
  key: ReadyKey;
  /** arrival order: among equal keys, the host that came due first goes first */
  seq: number;
}

/** the breadth key weighed by importance: lower goes first */
export const breadthScore = (k: Pick<ReadyKey, 'domainGrants' | 'weight'>): number => (k.domainGrants + 1) / k.weight;

const before = (a: ReadyKey, b: ReadyKey): boolean => {
  if (a.rank !== b.rank) return a.rank < b.rank;
  const sa = breadthScore(a);
  const sb = breadthScore(b);
  if (sa !== sb) return sa < sb;
  return a.depth !== b.depth ? a.depth < b.depth : a.at < b.at;
};
/** the key's order, then arrival */
const entryBefore = (a: Entry, b: Entry): boolean => (before(a.key, b.key) || before(b.key, a.key) ? before(a.key, b.key) : a.seq < b.seq);

export class ReadyHosts {
  private readonly heap = new BinaryHeap<Entry>(entryBefore);
  private fifo: Array<{ host: string; at: number; since: number }> = [];
  private fifoHead = 0;
  private arrivals = 0;
  /** current entries in the heap when stale ones were last dropped */
  private currentAtLastDrop = 0;

  constructor(
    private readonly keyOf: (host: string, at: number) => ReadyKey,
    private readonly isCurrent: (host: string, at: number) => boolean,
    private readonly maxWaitMs: number,
  ) {}

  get size(): number {
    return this.heap.size;
  }

  /** `host` came due (its entry's time `at`) and waits from `now` on */
  add(host: string, at: number, now: number): void {
    this.heap.push({ host, at, key: this.keyOf(host, at), seq: this.arrivals++ });
    this.fifo.push({ host, at, since: now });
    this.dropStale();
  }

  /**
   * Stale entries wait to be skipped where they are; once they outnumber the current ones,
   * they go at once, so the memory held follows the hosts waiting, not how often hosts came due.
   */
  private dropStale(): void {
    if (this.heap.size > 2 * this.currentAtLastDrop + 1024) {
      this.heap.retain((e) => this.isCurrent(e.host, e.at));
      this.currentAtLastDrop = this.heap.size;
    }
    if (this.fifo.length - this.fifoHead > 2 * this.heap.size + 1024) {
      this.fifo = this.fifo.slice(this.fifoHead).filter((e) => this.isCurrent(e.host, e.at));
      this.fifoHead = 0;
    }
  }

  /** The host to serve next (removed), or undefined when none is due. */
  take(now: number): { host: string; at: number } | undefined {
    const overdue = this.takeOverdue(now);
    if (overdue) return overdue;
    for (;;) {
      const top = this.heap.pop();
      if (!top) return undefined;
      if (!this.isCurrent(top.host, top.at)) continue;
      const key = this.keyOf(top.host, top.at);
      if (before(top.key, key) && this.heap.size > 0 && before(this.heap.peek()!.key, key)) {
        // its domain was granted more since it was ranked: back in at its own place
        this.heap.push({ ...top, key });
        continue;
      }
      return { host: top.host, at: top.at };
    }
  }

  private takeOverdue(now: number): { host: string; at: number } | undefined {
    while (this.fifoHead < this.fifo.length) {
      const head = this.fifo[this.fifoHead]!;
      if (!this.isCurrent(head.host, head.at)) {
        this.fifoHead += 1;
        continue;
      }
      if (now - head.since < this.maxWaitMs) break;
      this.fifoHead += 1;
      return { host: head.host, at: head.at };
    }
    if (this.fifoHead > 1024 && this.fifoHead * 2 > this.fifo.length) {
      this.fifo = this.fifo.slice(this.fifoHead);
      this.fifoHead = 0;
    }
    return undefined;
  }
}
