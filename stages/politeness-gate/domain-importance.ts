import type { KvStore } from '../../ports/kv.js';
import { oncePerObject } from '../shared/once-per-object.js';

/**
 * The importance estimate as this gate process has heard it: the seen-filters' counts of each
 * registrable domain's in-links, from the importance bucket (written at every power of two,
 * stages/shared/importance/domain-inlinks.ts), and the stamps on admitted URLs; the
 * domain's figure is the highest heard (the count only grows). The host scheduler ranks by it, also
 * for a host it has never served (whose next URL it has not read yet): hence the host's domain
 * too. Per process and bounded like the domain tally: past {@link DOMAIN_IMPORTANCE_MAX}
 * entries the one noted longest ago is forgotten (its hosts then rank as if never linked,
 * which only delays them).
 */
export const DOMAIN_IMPORTANCE_MAX = 100_000;

export class DomainImportance {
  private readonly byDomain = new Map<string, number>();
  private readonly domainOfHost = new Map<string, string>();

  constructor(private readonly max = DOMAIN_IMPORTANCE_MAX) {}

  /** A URL of `host` (registrable domain `domain`) was queued, stamped `importance`. */
  note(host: string, domain: string, importance: number | undefined): void {
    remember(this.domainOfHost, host, domain, this.max);
    const known = this.byDomain.get(domain) ?? 0;
    remember(this.byDomain, domain, Math.max(known, importance ?? 0), this.max);
  }

  /** The seen-filters' count of in-links of `domain` (its key in the importance bucket). */
  noteDomain(domain: string, inlinks: number): void {
    remember(this.byDomain, domain, Math.max(this.byDomain.get(domain) ?? 0, inlinks), this.max);
  }

  /** The in-link figure of `domain`, or of the domain of `host` when the domain is not known. */
  of(host: string, domain?: string): number {
    const d = domain ?? this.domainOfHost.get(host);
    return d === undefined ? 0 : (this.byDomain.get(d) ?? 0);
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}

/** One per process: the intake and the scheduler share the importance bucket's handle, not a context. */
export const domainImportanceOf = oncePerObject((_importance: KvStore) => new DomainImportance());
