// The broad test web: many registrable domains with a few pages each, the shape of the open
// web that breaks crawlers (one robots.txt and DNS lookup per host, per-host state everywhere),
// as opposed to the bench's few hosts with many pages.
//
// - `domains` registrable domains d00000.test, d00001.test, ... (a host each, `.test` being
//   the TLD, so each is its own registrable domain), each with a robots.txt (Disallow:
//   /private/, which nothing links to) and `pagesPerDomain` pages: `/` and /p1.html ...
//   Every page links to its domain's other pages and to `crossLinks` pages of other domains
//   picked by a Zipf law over a fixed shuffle of the domains, so a few domains are linked from
//   thousands of pages and most from a handful (`inLinks()` counts them exactly).
// - Every domain is reachable from the seed, d00000.test: domain i's home page also links the
//   home pages of domains 16i+1 ... 16i+16 (a tree of fan-out 16), so domain depth is at most
//   4 for 20,000 domains (page depth at most 5, the crawler's default --max-depth).
// - The domains live on `addresses` loopback addresses 127.77.x.y (the same port on each), so
//   a crawl can keep the per-IP cap on with default politeness; the web's DNS server
//   (dns-server.ts) maps each name to its address. Links carry the port
//   (http://d00042.test:PORT/), so no --resolve rule is needed: `--dns-server` and
//   `--allow-network 127.0.0.0/8` (the SSRF guard refuses loopback otherwise).
// - Dead external hosts among the links: nx000.test ... have no DNS record (NXDOMAIN), and
//   rf000.test ... resolve to an address nothing listens on (connection refused). One domain
//   in every `domains / deadHosts` links one from its last page.
//
// Pages are rendered on request from (seed, domain, page): the web holds the Zipf table and
// the DNS map, ~200 bytes a domain, not its pages.

import { deriveSeed, mulberry32, randInt, type Rng } from './prng.js';
import { englishWords, linkList, plainPage } from './plain-pages.js';
import type { DnsEntry, TestDns } from './dns-server.js';

export interface BroadHostsOptions {
  /** registrable domains (default 20,000) */
  domains?: number;
  /** pages per domain, home included (default 5) */
  pagesPerDomain?: number;
  /** links from each page to other domains' pages, chosen by the Zipf law (default 3) */
  crossLinks?: number;
  /** loopback addresses the domains are spread over, 127.77.0.1 ... (default 128, at most 4,096) */
  addresses?: number;
  /** dead external hosts linked from the web: half NXDOMAIN, half refused (default domains / 1,000, at least 2) */
  deadHosts?: number;
  /** Zipf exponent of the cross links' targets (default 1) */
  zipf?: number;
  /** generator seed (default 1) */
  seed?: number;
}

export type ResolvedBroadOptions = Required<BroadHostsOptions>;

export const BROAD_TLD = 'test';
/** fan-out of the tree of home-page links that makes every domain reachable from the seed */
export const BROAD_TREE_FANOUT = 16;
/** the address no domain lives on: the refused dead hosts resolve to it */
export const BROAD_DEAD_ADDRESS = '127.77.255.254';
const DNS_TTL_SECONDS = 3600;
const HTML = 'text/html; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';
export const BROAD_ROBOTS = 'User-agent: *\nDisallow: /private/\n';

export interface BroadResponse {
  status: number;
  type: string;
  body: string;
}

export function resolveBroadOptions(o: BroadHostsOptions | boolean = {}): ResolvedBroadOptions {
  const opts = o === true || o === false ? {} : o;
  const domains = opts.domains ?? 20_000;
  const r: ResolvedBroadOptions = {
    domains,
    pagesPerDomain: opts.pagesPerDomain ?? 5,
    crossLinks: opts.crossLinks ?? 3,
    addresses: opts.addresses ?? 128,
    deadHosts: opts.deadHosts ?? Math.max(2, Math.floor(domains / 1000)),
    zipf: opts.zipf ?? 1,
    seed: opts.seed ?? 1,
  };
  if (!Number.isInteger(r.domains) || r.domains < 1 || r.domains > 10_000_000) throw new Error(`broad web: domains must be an integer in [1, 10000000], got ${r.domains}`);
  if (!Number.isInteger(r.pagesPerDomain) || r.pagesPerDomain < 1 || r.pagesPerDomain > 1000) throw new Error(`broad web: pagesPerDomain must be an integer in [1, 1000], got ${r.pagesPerDomain}`);
  if (!Number.isInteger(r.crossLinks) || r.crossLinks < 0 || r.crossLinks > 100) throw new Error(`broad web: crossLinks must be an integer in [0, 100], got ${r.crossLinks}`);
  if (!Number.isInteger(r.addresses) || r.addresses < 1 || r.addresses > 4096) throw new Error(`broad web: addresses must be an integer in [1, 4096], got ${r.addresses}`);
  if (!Number.isInteger(r.deadHosts) || r.deadHosts < 0 || r.deadHosts > r.domains) throw new Error(`broad web: deadHosts must be an integer in [0, domains], got ${r.deadHosts}`);
  return r;
}

/** digits in a domain's number: 5, or more for a web of over 100,000 domains */
const digitsFor = (domains: number) => Math.max(5, String(domains - 1).length);

/** Page paths of a domain: '/', '/p1.html', ... */
export function broadPagePaths(pagesPerDomain: number): string[] {
  return Array.from({ length: pagesPerDomain }, (_, k) => (k === 0 ? '/' : `/p${k}.html`));
}

export class BroadHosts {
  readonly options: ResolvedBroadOptions;
  /** the port the web listens on (set once it does); links name it */
  port = 0;
  /** the DNS server naming the domains (started by the web with it) */
  dns: TestDns | null = null;
  private readonly digits: number;
  private readonly paths: string[];
  /** cumulative Zipf weights by rank: cdf[r] = P(rank <= r) */
  private readonly cdf: Float64Array;
  /** rank -> domain number: a fixed shuffle, so the most linked domains are spread over the web */
  private readonly byRank: Uint32Array;

  constructor(opts: BroadHostsOptions | boolean = {}) {
    this.options = resolveBroadOptions(opts);
    const { domains, zipf, seed } = this.options;
    this.digits = digitsFor(domains);
    this.paths = broadPagePaths(this.options.pagesPerDomain);
    this.cdf = new Float64Array(domains);
    let sum = 0;
    for (let r = 0; r < domains; r++) this.cdf[r] = sum += 1 / Math.pow(r + 1, zipf);
    for (let r = 0; r < domains; r++) this.cdf[r]! /= sum;
    this.byRank = new Uint32Array(domains);
    for (let i = 0; i < domains; i++) this.byRank[i] = i;
    const rng = mulberry32(deriveSeed('broad-rank', seed));
    for (let i = domains - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      const t = this.byRank[i]!;
      this.byRank[i] = this.byRank[j]!;
      this.byRank[j] = t;
    }
  }

  /** 'd00042.test' */
  domainName(i: number): string {
    return `d${String(i).padStart(this.digits, '0')}.${BROAD_TLD}`;
  }

  /** the domain's number, or -1 when `host` is not one of the web's domains */
  domainIndex(host: string): number {
    const m = /^d(\d+)\.test$/.exec(host);
    if (!m || m[1]!.length !== this.digits) return -1;
    const i = Number(m[1]);
    return i < this.options.domains ? i : -1;
  }

  has(host: string): boolean {
    return this.domainIndex(host) >= 0;
  }

  /** the loopback address domain i lives on */
  addressOf(i: number): string {
    return broadAddress(this.hash(i) % this.options.addresses);
  }

  /** every address the web listens on for these domains */
  addresses(): string[] {
    return Array.from({ length: this.options.addresses }, (_, k) => broadAddress(k));
  }

  url(i: number, path = '/'): string {
    return `http://${this.domainName(i)}:${this.port}${path}`;
  }

  /** what a crawl of this web needs besides its seed: the web's DNS server, and loopback let through the SSRF guard */
  crawlArgs(): string[] {
    if (!this.dns) throw new Error('broad web: its DNS server is not started');
    return ['--dns-server', `${this.dns.address}:${this.dns.port}`, '--allow-network', '127.0.0.0/8'];
  }

  /** the seed: the home page of d00000.test, from which every domain is reachable */
  seedUrl(): string {
    return this.url(0);
  }

  /** every page a complete crawl stores (robots.txt aside) */
  pageUrls(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.options.domains; i++) for (const p of this.paths) out.push(this.url(i, p));
    return out;
  }

  /** dead host names: nx000.test ... (no DNS record), then rf000.test ... (refused) */
  deadHostNames(): { nxdomain: string[]; refused: string[] } {
    const n = this.options.deadHosts;
    const nx = Math.ceil(n / 2);
    const name = (prefix: string, k: number) => `${prefix}${String(k).padStart(3, '0')}.${BROAD_TLD}`;
    return { nxdomain: Array.from({ length: nx }, (_, k) => name('nx', k)), refused: Array.from({ length: n - nx }, (_, k) => name('rf', k)) };
  }

  /** the DNS server's records: every domain to its address, the refused dead hosts to one nothing listens on */
  dnsRecords(): Map<string, DnsEntry> {
    const m = new Map<string, DnsEntry>();
    for (let i = 0; i < this.options.domains; i++) m.set(this.domainName(i), { a: [this.addressOf(i)], ttl: DNS_TTL_SECONDS });
    for (const name of this.deadHostNames().refused) m.set(name, { a: [BROAD_DEAD_ADDRESS], ttl: DNS_TTL_SECONDS });
    return m;
  }

  /** The links of page `path` of domain i, in page order (own pages, tree children, cross links, dead host). */
  links(i: number, path: string): string[] {
    const k = this.paths.indexOf(path);
    if (k < 0) return [];
    const out: string[] = [];
    for (const p of this.paths) if (p !== path) out.push(this.url(i, p));
    if (k === 0) {
      const first = BROAD_TREE_FANOUT * i + 1;
      for (let c = first; c < first + BROAD_TREE_FANOUT && c < this.options.domains; c++) out.push(this.url(c));
    }
    const rng = mulberry32(deriveSeed('broad-links', this.options.seed, i, k));
    for (let n = 0; n < this.options.crossLinks; n++) {
      const target = this.zipfDomain(rng);
      if (target === i) continue;
      // half the cross links go to the home page, the rest to one of the domain's pages
      const p = rng() < 0.5 ? '/' : this.paths[randInt(rng, 0, this.paths.length - 1)]!;
      out.push(this.url(target, p));
    }
    const dead = this.deadLinkOf(i, k);
    if (dead) out.push(dead);
    return [...new Set(out)];
  }

  /** In-links each page of the web gets from other pages (distinct linking pages), by URL. */
  inLinks(): Map<string, number> {
    const counts = new Map<string, number>();
    for (let i = 0; i < this.options.domains; i++) {
      for (const p of this.paths) for (const u of this.links(i, p)) if (this.has(new URL(u).hostname)) counts.set(u, (counts.get(u) ?? 0) + 1);
    }
    return counts;
  }

  respond(host: string, method: string, target: string): BroadResponse {
    const i = this.domainIndex(host);
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: TEXT, body: 'method not allowed\n' };
    const path = target.split('?')[0]!;
    if (path === '/robots.txt') return { status: 200, type: TEXT, body: BROAD_ROBOTS };
    if (!this.paths.includes(path) || target.includes('?')) return { status: 404, type: HTML, body: plainPage('Not found', '<p>Not found.</p>') };
    return { status: 200, type: HTML, body: this.page(i, path) };
  }

  private page(i: number, path: string): string {
    const rng: Rng = mulberry32(deriveSeed('broad-page', this.options.seed, i, path));
    const name = this.domainName(i);
    const links = this.links(i, path).map((u): [string, string] => {
      const url = new URL(u);
      return [u, url.hostname === name ? `${url.pathname === '/' ? 'Home' : url.pathname.slice(1, -5)}` : `${url.hostname}${url.pathname === '/' ? '' : url.pathname}`];
    });
    const title = `${name} ${path === '/' ? 'home' : path.slice(1, -5)}`;
    return plainPage(title, `<p>${englishWords(rng, 150)}</p>\n<p>${englishWords(rng, 100)}</p>\n${linkList(links)}`);
  }

  /** a dead host's URL from the last page of one domain in every domains / deadHosts, else null */
  private deadLinkOf(i: number, k: number): string | null {
    const { deadHosts, domains, pagesPerDomain } = this.options;
    if (deadHosts === 0 || k !== pagesPerDomain - 1) return null;
    const every = Math.floor(domains / deadHosts);
    if (i % every !== 0 || i / every >= deadHosts) return null;
    const j = i / every;
    const { nxdomain, refused } = this.deadHostNames();
    const all = [...nxdomain, ...refused];
    return `http://${all[j]}:${this.port}/`;
  }

  private zipfDomain(rng: Rng): number {
    const x = rng();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.byRank[lo]!;
  }

  private hash(i: number): number {
    return deriveSeed('broad-address', this.options.seed, i);
  }
}

/** 127.77.0.1 ... 127.77.0.255, 127.77.1.0 ... for address k (4,096 at most, below the dead address) */
export function broadAddress(k: number): string {
  const n = k + 1;
  return `127.77.${n >> 8}.${n & 255}`;
}
