/**
 * Requests this process has granted per registrable domain: what the timetable ranks due
 * hosts by (the domain with fewer pages fetched goes first, seed 003's breadth key). It is
 * per process and bounded: past {@link DOMAIN_TALLY_MAX} domains the one granted to longest
 * ago is forgotten, and comes back at 0. Forgetting an idle domain only gives it an early
 * turn again when it has work; politeness never depends on it, so it is not worth a KV
 * write per grant (the global per-domain count, when `--max-pages-per-domain` asks for one,
 * is domain-budget.ts's).
 */
export const DOMAIN_TALLY_MAX = 100_000;

export class DomainTally {
  /** insertion order is recency: a granted domain is moved to the end */
  private readonly counts = new Map<string, number>();

  constructor(private readonly max = DOMAIN_TALLY_MAX) {}

  count(domain: string): number {
    return this.counts.get(domain) ?? 0;
  }

  granted(domain: string): void {
    const n = this.counts.get(domain) ?? 0;
    this.counts.delete(domain);
    this.counts.set(domain, n + 1);
    if (this.counts.size > this.max) this.counts.delete(this.counts.keys().next().value!);
  }

  get size(): number {
    return this.counts.size;
  }
}
