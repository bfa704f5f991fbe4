import { getDomain, getHostname } from 'tldts';

/**
 * The crawl's importance estimate (seed 000: "importance is from inbound link count"; seed 001:
 * backlinks weigh high), kept incrementally from the links the crawl sees, with no link graph
 * and no global pass: per target registrable domain, how many links from pages of OTHER
 * registrable domains this process has seen. Links within a domain (navigation, a site's own
 * menus) say nothing about how much the rest of the web cites it, so they are not counted.
 *
 * The seen-filter feeds it every candidate link, repeats included (most links are repeats the
 * seen set drops, and a repeat is exactly a further in-link), so a domain's figure grows with
 * every page that cites it, and each URL the seen-filter admits is stamped with its domain's
 * figure at that moment (`importance` on the admitted URL).
 *
 * It is per process (a seen-filter sees the links to the hosts of its partitions: with every
 * host of a domain in one partition, as with one host per domain, the figure is the crawl's
 * whole count; a domain whose hosts hash to several partitions is counted per partition) and
 * bounded: past {@link DOMAIN_INLINKS_MAX} domains, the one linked to longest ago is forgotten
 * and starts again at 0. A redelivered candidate message counts its links again: the figure
 * ranks, it is never a promise, so an estimate a little high is fine, and cheaper than
 * remembering which messages were counted.
 */
export const DOMAIN_INLINKS_MAX = 200_000;

export class DomainInlinks {
  /** insertion order is recency: a domain linked again moves to the end */
  private readonly counts = new Map<string, number>();
  /** the last source page's domain: the links of one page come together, so one parse a page */
  private lastSource: { url: string; domain: string } | null = null;

  constructor(private readonly max = DOMAIN_INLINKS_MAX) {}

  /**
   * A link from `sourceUrl` to a URL of `targetDomain` was seen (once per link, repeats
   * included): the domain's new count, or 0 when the link does not count (the same domain).
   */
  saw(sourceUrl: string, targetDomain: string): number {
    if (targetDomain === '' || this.domainOfSource(sourceUrl) === targetDomain) return 0;
    const n = (this.counts.get(targetDomain) ?? 0) + 1;
    this.counts.delete(targetDomain);
    this.counts.set(targetDomain, n);
    if (this.counts.size > this.max) this.counts.delete(this.counts.keys().next().value!);
    return n;
  }

  /** Links seen to `domain` from other domains (0 for one never linked, or forgotten). */
  count(domain: string): number {
    return this.counts.get(domain) ?? 0;
  }

  get size(): number {
    return this.counts.size;
  }

  private domainOfSource(url: string): string {
    if (this.lastSource?.url !== url) this.lastSource = { url, domain: registrableDomainOfUrl(url) };
    return this.lastSource.domain;
  }
}

/**
 * The gates hear a domain's count from the importance bucket (`crawl-importance`, which every
 * gate that ranks by importance watches): the seen-filter writes the domain's key each time
 * the count reaches a power of two (1, 2, 4, 8, ...), so a domain costs about log2 of its
 * in-links in writes over a whole crawl (11 for one linked 1,000 times) and the gates' figure
 * is never less than half the count. Without it a gate would know only the count stamped on
 * the domain's URLs when they were admitted, which for the most-linked domains is their first
 * few links: they are found early. A bucket of its own, not the hosts bucket: every write to
 * that one reaches every gate's watch of the host slots, the first thing to give at scale
 * (docs/capacity.md).
 */
export const importanceKey = (domain: string) => domain;
export const isImportanceStep = (count: number) => count > 0 && (count & (count - 1)) === 0;
export interface ImportanceNote {
  domain: string;
  inlinks: number;
}

/**
 * The registrable domain of a URL's host as normalize computes a candidate's `domain`
 * (Public Suffix List with private domains; an IP address or a name with no public suffix is
 * its own domain).
 */
export function registrableDomainOfUrl(url: string): string {
  const host = (getHostname(url) ?? '').toLowerCase().replace(/\.$/, '');
  if (host === '') return '';
  try {
    return getDomain(host, { allowPrivateDomains: true, extractHostname: false, validateHostname: false }) ?? host;
  } catch {
    return host;
  }
}

/**
 * The figure the gate ranks by: grows with in-links, by halves (log2), so a domain cited
 * 1,000 times is worth about 11 times one never cited, not 1,000 times (a few hugely linked
 * domains would otherwise take every turn before any new domain got one).
 */
export function importanceWeight(inlinks: number): number {
  return 1 + Math.log2(1 + Math.max(0, inlinks));
}
