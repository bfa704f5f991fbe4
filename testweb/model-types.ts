// The data model of the test web: what every host serves at every path. The server renders
// pages from it and expectedPages() walks it, so the two can never disagree.

import type { RobotsSpec } from './robots-rules.js';
import type { PageLanguage } from './words.js';

/** Where a link sits in the page; the renderer places it accordingly. */
export type LinkArea = 'nav' | 'inline' | 'related' | 'footer';

export interface PageLink {
  /** Exactly what appears in href="..." (relative, absolute-path, absolute or odd forms). */
  href: string;
  /** Anchor text. */
  text: string;
  area: LinkArea;
}

export type PageRole =
  | 'home'
  | 'hub' //             /articles/, /docs/, /blog/: linked from every page's nav
  | 'about'
  | 'content'
  | 'archive' //         /archive?page=N&sort=new: a page addressed by its query string
  | 'private' //         under /private/: linked from public pages, disallowed on some hosts
  | 'nocrawl' //         under /nocrawl/: disallowed for the testcrawler agent on some hosts
  | 'hidden' //          linked only from a meta-robots nofollow page
  | 'exact-duplicate' // byte-identical to another page of the host (duplicateOf)
  | 'near-duplicate' //  same article as another page with a few words changed (nearDuplicateOf)
  | 'bench';

export interface HtmlResource {
  kind: 'html';
  status: 200;
  /** Lookup key: path plus query with tracking parameters removed and keys sorted. */
  path: string;
  role: PageRole;
  lang: PageLanguage;
  title: string;
  description: string;
  /** Absolute URL of <link rel="canonical">; always the page's own URL when present. */
  canonical?: string;
  /** Value of <base href>, when the page has one; links must be resolved against it. */
  baseHref?: string;
  /** Content of <meta name="robots">, when the page has one. */
  metaRobots?: 'noindex' | 'nofollow';
  /** Every <a href> of the page (the renderer decides their order). No other element carries a followable URL. */
  links: PageLink[];
  /** Seed of the article text; pages with the same textSeed (and wordChanges 0) share their text. */
  textSeed: number;
  /** Number of article words changed from the textSeed text (near-duplicates). */
  wordChanges: number;
  /** Adds a JSON-LD Article block to the head. */
  structuredData: boolean;
  /**
   * Fewest link hops from this host's "/" following same-host links (not through nofollow
   * pages, a redirect counts as one hop, robots.txt ignored). null: not reachable that way
   * (the 'hidden' pages, which only a nofollow page links to).
   */
  depthFromHostRoot: number | null;
  duplicateOf?: string;
  nearDuplicateOf?: string;
}

export interface RedirectResource {
  kind: 'redirect';
  status: 301;
  path: string;
  /** Location header value (absolute path or absolute URL), always a 200 page of the same host. */
  location: string;
  depthFromHostRoot: number | null;
}

export type Resource = HtmlResource | RedirectResource;

export interface HostModel {
  name: string;
  index: number;
  /** 'site' hosts carry the web's bad habits; 'bench' hosts are plain and fast, for throughput. */
  group: 'site' | 'bench';
  lang: PageLanguage;
  robots: RobotsSpec;
  /** Crawl-delay (s) of the robots.txt '*' group, if any. */
  crawlDelay?: number;
  /** Everything served with 200 or 301, by lookup key (see HtmlResource.path). Anything else is 404. */
  resources: Map<string, Resource>;
  /** Paths that pages of this host link to but that answer 404. */
  brokenLinkPaths: string[];
}

export interface SiteModel {
  seed: number;
  /** Site hosts first (h00..), then bench hosts (b000..). */
  hosts: HostModel[];
  byName: Map<string, HostModel>;
  siteHostNames: string[];
  benchHostNames: string[];
}

export interface BuildSiteModelOptions {
  hosts: number;
  seed: number;
  benchHosts?: number;
  /** Default 50. */
  benchPagesPerHost?: number;
  /** HTML pages per site host, default 30 (raised to the minimum the layout needs, 20). */
  pagesPerHost?: number;
}
