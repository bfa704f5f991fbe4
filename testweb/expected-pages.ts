// What a correct crawler fetches from the test web, computed from the model (never by
// crawling). End-to-end tests compare the crawl output against this, so it is exact, and
// its rules are spelled out here:
//
// - Seeds are at depth 0. A link found on a page at depth d leads to depth d+1. URLs are
//   compared in canonical form (see canonicalUrl: no fragment, no utm_*/gclid/fbclid,
//   query keys sorted, lower-case host, no default port); each URL is visited once, at the
//   smallest depth it can be reached at. Nothing deeper than maxDepth is requested.
// - Links are only discovered on pages that were fetched (status 200 HTML) and are not
//   meta-robots "nofollow"; they are resolved against <base href> when the page has one.
//   "noindex" pages are fetched and their links followed; they are in the result (flagged).
// - A redirect (301) is fetched like a page; its Location leads to depth d + redirectHopCost
//   (default 1: the redirect is one more hop, like a link). Set 0 for a crawler that
//   follows redirects inline at the same depth.
// - A URL robots.txt disallows for the agent token is never requested, so nothing behind it
//   is discovered either. A host without robots.txt (404) allows everything.
// - Hosts outside the model (external.example) or outside opts.inScope are never requested.
// - <link rel="canonical"> is not followed (in this web it always names the page itself).

import { robotsAllows } from './robots-rules.js';
import { canonicalUrl, resolveLink } from './url-forms.js';
import type { PageRole, SiteModel } from './model-types.js';

export interface ExpectedPagesOptions {
  /** Product token the crawler matches robots.txt groups with, e.g. "testcrawler". */
  userAgentToken: string;
  maxDepth: number;
  seeds: string[];
  /** Extra depth a redirect adds to its target: 1 (default) or 0. */
  redirectHopCost?: 0 | 1;
  /** Hosts the crawl may enter; default every host of the model. */
  inScope?: (host: string) => boolean;
}

export interface ExpectedPage {
  depth: number;
  host: string;
  role: PageRole;
  noindex: boolean;
  nofollow: boolean;
}

export interface ExpectedCrawl {
  /** 200 HTML pages fetched, by canonical URL. */
  pages: Map<string, ExpectedPage>;
  /** Redirecting URLs fetched (301), with their depth and canonical target. */
  redirects: Map<string, { depth: number; location: string }>;
  /** URLs requested that answer 404, with their depth. */
  notFound: Map<string, number>;
  /** URLs discovered within maxDepth that robots.txt forbids requesting, with their depth. */
  blockedByRobots: Map<string, number>;
  /** URLs discovered within maxDepth on hosts outside the model or scope: never request these. */
  outOfScope: Set<string>;
  /** Hosts with at least one URL in scope within maxDepth (their robots.txt must be fetched). */
  hosts: Set<string>;
}

export function expectedCrawl(model: SiteModel, opts: ExpectedPagesOptions): ExpectedCrawl {
  const cost = opts.redirectHopCost ?? 1;
  const inScope = opts.inScope ?? (() => true);
  const result: ExpectedCrawl = {
    pages: new Map(),
    redirects: new Map(),
    notFound: new Map(),
    blockedByRobots: new Map(),
    outOfScope: new Set(),
    hosts: new Set(),
  };
  if (opts.maxDepth < 0) return result;

  // Buckets by depth; a 0-cost redirect appends to the bucket being walked, so this is a
  // 0-1 BFS and every URL is settled at its minimum depth.
  const best = new Map<string, number>();
  const buckets: string[][] = Array.from({ length: opts.maxDepth + 1 }, () => []);
  const enqueue = (url: string | null, depth: number) => {
    if (url === null || depth > opts.maxDepth) return;
    const known = best.get(url);
    if (known !== undefined && known <= depth) return;
    best.set(url, depth);
    (buckets[depth] as string[]).push(url);
  };
  for (const seed of opts.seeds) {
    const url = canonicalUrl(seed);
    if (url === null) throw new Error(`expectedPages: seed is not an http(s) URL: ${seed}`);
    enqueue(url, 0);
  }

  for (let depth = 0; depth <= opts.maxDepth; depth++) {
    const bucket = buckets[depth] as string[];
    for (let i = 0; i < bucket.length; i++) {
      const url = bucket[i] as string;
      if (best.get(url) !== depth) continue; // settled at a smaller depth already
      const u = new URL(url);
      const host = model.byName.get(u.hostname);
      if (!host || !inScope(u.hostname) || u.protocol !== 'http:') {
        result.outOfScope.add(url);
        continue;
      }
      result.hosts.add(host.name);
      const key = `${u.pathname}${u.search}`;
      if (!robotsAllows(host.robots, opts.userAgentToken, key)) {
        result.blockedByRobots.set(url, depth);
        continue;
      }
      const res = host.resources.get(key);
      if (!res) {
        result.notFound.set(url, depth);
        continue;
      }
      if (res.kind === 'redirect') {
        const location = resolveLink(url, undefined, res.location) as string;
        result.redirects.set(url, { depth, location });
        enqueue(location, depth + cost);
        continue;
      }
      const nofollow = res.metaRobots === 'nofollow';
      result.pages.set(url, { depth, host: host.name, role: res.role, noindex: res.metaRobots === 'noindex', nofollow });
      if (nofollow) continue;
      for (const link of res.links) enqueue(resolveLink(url, res.baseHref, link.href), depth + 1);
    }
  }
  return result;
}

/** Canonical URLs of the 200 HTML pages a correct crawl fetches (see the rules above). */
export function expectedPages(model: SiteModel, opts: ExpectedPagesOptions): Set<string> {
  return new Set(expectedCrawl(model, opts).pages.keys());
}
