// Hosts whose pages change on a known schedule, opt-in through startTestWeb({ fresh }): for
// testing revisits (conditional GET, adaptive intervals) and measuring freshness, with the
// clock scaled down to seconds.
//
//   f0.fresh.test, f1.fresh.test, ...   `pagesPerHost` pages each: "/" (linking every page),
//                                       /news/1.html ..., /docs/1.html ...
//
// Each page is given a change period in turn from `periodsSeconds` plus "never" (in a seeded
// order), and a seeded first change 1..period seconds after `startAt`; it then changes every
// period exactly, and its content (so its digest and strong ETag) changes at those instants
// and only then. Pages send Last-Modified (the last change, to the second, as HTTP dates go)
// and ETag, and answer If-None-Match / If-Modified-Since with 304 while unchanged.
//
// Every host publishes, through robots.txt (allow-all) `Sitemap:` lines, a sitemap index
// /sitemap-index.xml pointing at /sitemap-1.xml ("/" and the news pages) and /sitemap-2.xml.gz
// (the docs pages, gzip served as application/gzip), each page with lastmod = its last change.
// f0 also publishes a text sitemap /sitemap.txt (every page) and a bad one,
// /news/sitemap-bad.xml, which is bad in three ways: a future lastmod (news/2), a URL outside
// its path prefix /news/ (docs/1), and malformed XML at its end. Every URL any sitemap lists
// is a page that exists.
//
// Everything is a function of (seed, startAt, the clock): the model methods below (period,
// version at t, change times in [from, to]) let a test compute how stale a stored copy was.

import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { deriveSeed, mulberry32, randInt, shuffled } from './prng.js';
import { escapeHtml } from './render-page.js';
import { resourceKey } from './url-forms.js';
import { phrase, WORDS } from './words.js';

export interface FreshHostsOptions {
  /** Number of hosts f0.fresh.test ... Default 3. */
  hosts?: number;
  /** Pages a host, "/" included (at least 4). Default 10. */
  pagesPerHost?: number;
  /** Change periods in seconds (each at least 1), handed out in turn with "never". Default [3, 8, 20]. */
  periodsSeconds?: readonly number[];
  /** Seeds the periods' order, the first changes and the text. Default: the test web's seed. */
  seed?: number;
  /** Epoch ms the schedule starts at. Default: the server's start (the clock's time then). */
  startAt?: number;
  /** The clock responses are made by (epoch ms). Default: the server's. Tests inject their own. */
  clock?: () => number;
}

export interface ResolvedFreshOptions {
  hosts: number;
  pagesPerHost: number;
  periodsSeconds: readonly number[];
  seed: number;
  startAt: number;
}

export const FRESH_DEFAULTS = Object.freeze({ hosts: 3, pagesPerHost: 10, periodsSeconds: Object.freeze([3, 8, 20]) });
export const FRESH_DOMAIN = 'fresh.test';
export const freshHostName = (index: number): string => `f${index}.${FRESH_DOMAIN}`;
/** The host that also serves the text sitemap and the bad sitemap. */
export const FRESH_SITEMAP_HOST = freshHostName(0);
export const SITEMAP_INDEX_PATH = '/sitemap-index.xml';
export const SITEMAP_CHILD_PATHS: readonly string[] = Object.freeze(['/sitemap-1.xml', '/sitemap-2.xml.gz']);
export const TEXT_SITEMAP_PATH = '/sitemap.txt';
export const BAD_SITEMAP_PATH = '/news/sitemap-bad.xml';
/** How far ahead of the clock the bad sitemap's future lastmod lies: far past any clock-skew allowance. */
export const BAD_SITEMAP_FUTURE_MS = 30 * 86_400_000;
/** Never-changing pages were last modified this long before startAt (plus a seeded day count). */
const NEVER_BASE_AGE_MS = 86_400_000;

export function resolveFreshOptions(opts: FreshHostsOptions | boolean, defaults: { seed: number; startAt: number }): ResolvedFreshOptions {
  const o = opts === true || opts === false ? {} : opts;
  const fail = (what: string, v: unknown): never => {
    throw new Error(`testweb: fresh.${what}, got ${JSON.stringify(v)}`);
  };
  const hosts = o.hosts ?? FRESH_DEFAULTS.hosts;
  const pagesPerHost = o.pagesPerHost ?? FRESH_DEFAULTS.pagesPerHost;
  const periodsSeconds = o.periodsSeconds ?? FRESH_DEFAULTS.periodsSeconds;
  if (!Number.isInteger(hosts) || hosts < 1) fail('hosts must be an integer >= 1', hosts);
  // "/", news/1, news/2 and docs/1 are what the bad sitemap needs
  if (!Number.isInteger(pagesPerHost) || pagesPerHost < 4) fail('pagesPerHost must be an integer >= 4', pagesPerHost);
  // at least 1 s, so two versions never share a Last-Modified second
  if (periodsSeconds.length === 0 || periodsSeconds.some((p) => !Number.isFinite(p) || p < 1)) fail('periodsSeconds must be numbers >= 1', periodsSeconds);
  const seed = o.seed ?? defaults.seed;
  const startAt = o.startAt ?? defaults.startAt;
  if (!Number.isFinite(startAt)) fail('startAt must be epoch ms', startAt);
  return { hosts, pagesPerHost, periodsSeconds: Object.freeze([...periodsSeconds]), seed, startAt };
}

/** One page's schedule: changes at firstChange + k * periodMs (k >= 0), or never. */
interface PageSchedule {
  host: string;
  path: string;
  /** null: never changes */
  periodMs: number | null;
  /** the first change after startAt (changing pages only) */
  firstChange: number;
  /** Last-Modified of a page that never changes */
  neverModified: number;
}

/** The paths of a host: "/", then news and docs pages in turn (news/1, docs/1, news/2, ...). */
function pagePaths(count: number): string[] {
  const paths = ['/'];
  for (let i = 0; paths.length < count; i++) paths.push(i % 2 === 0 ? `/news/${i / 2 + 1}.html` : `/docs/${(i + 1) / 2}.html`);
  return paths;
}

export interface FreshResponse {
  status: number;
  type: string;
  body: string | Buffer;
  headers: Record<string, string>;
}

const HTML = 'text/html; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';
const XML = 'application/xml; charset=utf-8';
const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

/** One server's fresh hosts: the change schedule (the model) and the responses made by it. */
export class FreshHosts {
  readonly options: ResolvedFreshOptions;
  readonly hostNames: readonly string[];
  private readonly pages = new Map<string, PageSchedule>();
  private readonly clock: () => number;

  /** defaults: the test web's seed and the server's clock; startAt defaults to the clock's time now. */
  constructor(opts: FreshHostsOptions | boolean, defaults: { seed: number; serverClock: () => number } = { seed: 1, serverClock: Date.now }) {
    this.clock = (typeof opts === 'object' ? opts.clock : undefined) ?? defaults.serverClock;
    this.options = resolveFreshOptions(opts, { seed: defaults.seed, startAt: this.clock() });
    const { seed, startAt, periodsSeconds } = this.options;
    this.hostNames = Object.freeze(Array.from({ length: this.options.hosts }, (_, i) => freshHostName(i)));
    const slots: Array<number | null> = [...periodsSeconds, null];
    for (const host of this.hostNames) {
      const paths = pagePaths(this.options.pagesPerHost);
      // the periods go round the pages in a seeded order; the pages are listed in path order
      const order = shuffled(mulberry32(deriveSeed(seed, 'fresh-order', host)), paths);
      for (const path of paths) {
        const rng = mulberry32(deriveSeed(seed, 'fresh-page', host, path));
        const period = slots[order.indexOf(path) % slots.length]!;
        const periodMs = period === null ? null : period * 1000;
        const firstChange = periodMs === null ? Infinity : startAt + randInt(rng, 1, Math.max(1, Math.floor(period!))) * 1000;
        const neverModified = startAt - NEVER_BASE_AGE_MS * randInt(rng, 1, 30);
        this.pages.set(`http://${host}${path}`, { host, path, periodMs, firstChange, neverModified });
      }
    }
  }

  has(host: string): boolean {
    return this.hostNames.includes(host);
  }

  resolveRules(port: number): string[] {
    return [`*.${FRESH_DOMAIN}=127.0.0.1:${port}`];
  }

  /** Each host's home page. */
  seedUrls(): string[] {
    return this.hostNames.map((h) => `http://${h}/`);
  }

  /** Every page URL (http://host/path), or a host's. */
  pageUrls(host?: string): string[] {
    return [...this.pages.values()].filter((p) => host === undefined || p.host === host).map((p) => `http://${p.host}${p.path}`);
  }

  /** The sitemap URLs a host publishes (all of them are in its robots.txt). */
  sitemapUrls(host: string): { index: string; children: string[]; text: string | null; bad: string | null } {
    const u = (path: string) => `http://${host}${path}`;
    const special = host === FRESH_SITEMAP_HOST;
    return { index: u(SITEMAP_INDEX_PATH), children: SITEMAP_CHILD_PATHS.map(u), text: special ? u(TEXT_SITEMAP_PATH) : null, bad: special ? u(BAD_SITEMAP_PATH) : null };
  }

  // ------------------------------------------------------------ the model

  /** A page's change period in ms, or null when it never changes. Throws for a URL that is not a page. */
  changePeriodMs(url: string): number | null {
    return this.page(url).periodMs;
  }

  /** The page's version at time t: 0 until its first change, then one more at each change. */
  versionAt(url: string, t: number): number {
    const p = this.page(url);
    if (p.periodMs === null || t < p.firstChange) return 0;
    return Math.floor((t - p.firstChange) / p.periodMs) + 1;
  }

  /** The instants (epoch ms) the page changes at within [from, to], in order. */
  changeTimes(url: string, from: number, to: number): number[] {
    const p = this.page(url);
    if (p.periodMs === null || to < p.firstChange) return [];
    const out: number[] = [];
    const k0 = Math.max(0, Math.ceil((from - p.firstChange) / p.periodMs));
    for (let t = p.firstChange + k0 * p.periodMs; t <= to; t += p.periodMs) out.push(t);
    return out;
  }

  /** When the version served at t became current (epoch ms): its Last-Modified, before rounding to the second. */
  lastChangeAt(url: string, t: number): number {
    const p = this.page(url);
    if (p.periodMs === null) return p.neverModified;
    // version 0 dates from the slot before the first change, before startAt
    return p.firstChange + (this.versionAt(url, t) - 1) * p.periodMs;
  }

  /** The page's HTML at time t. */
  bodyAt(url: string, t: number): string {
    return this.render(this.page(url), this.versionAt(url, t));
  }

  /** The page's strong ETag at time t. */
  etagAt(url: string, t: number): string {
    return etagOf(this.bodyAt(url, t));
  }

  private page(url: string): PageSchedule {
    const p = this.pages.get(url);
    if (!p) throw new Error(`testweb: not a page of the fresh hosts: ${url}`);
    return p;
  }

  // ------------------------------------------------------------ serving

  /** The response to a request for a host this object has (see has()), by the clock. */
  respond(host: string, method: string, target: string, headers: { ifNoneMatch?: string; ifModifiedSince?: string } = {}): FreshResponse {
    const now = this.clock();
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: TEXT, body: 'method not allowed\n', headers: { allow: 'GET, HEAD' } };
    let path: string;
    try {
      path = resourceKey(target);
    } catch {
      return notFound();
    }
    const url = `http://${host}${path}`;
    if (this.pages.has(url)) return this.pageResponse(url, now, headers);
    const special = host === FRESH_SITEMAP_HOST;
    const sitemaps = this.sitemapUrls(host);
    if (path === '/robots.txt') {
      const lines = [sitemaps.index, ...(special ? [sitemaps.bad!, sitemaps.text!] : [])].map((s) => `Sitemap: ${s}`);
      return { status: 200, type: TEXT, body: `User-agent: *\nAllow: /\n\n${lines.join('\n')}\n`, headers: {} };
    }
    if (path === SITEMAP_INDEX_PATH) return { status: 200, type: XML, body: this.sitemapIndex(host, now), headers: {} };
    if (path === SITEMAP_CHILD_PATHS[0]) return { status: 200, type: XML, body: this.urlset(this.childPages(host, 0), now), headers: {} };
    if (path === SITEMAP_CHILD_PATHS[1]) return { status: 200, type: 'application/gzip', body: gzipSync(this.urlset(this.childPages(host, 1), now)), headers: {} };
    if (special && path === TEXT_SITEMAP_PATH) return { status: 200, type: TEXT, body: `${this.pageUrls(host).join('\n')}\n`, headers: {} };
    if (special && path === BAD_SITEMAP_PATH) return { status: 200, type: XML, body: this.badSitemap(host, now), headers: {} };
    return notFound();
  }

  private pageResponse(url: string, now: number, req: { ifNoneMatch?: string; ifModifiedSince?: string }): FreshResponse {
    const body = this.bodyAt(url, now);
    const etag = etagOf(body);
    // HTTP dates have whole seconds; periods of >= 1 s keep versions apart
    const lastModified = Math.floor(this.lastChangeAt(url, now) / 1000) * 1000;
    const headers = { etag, 'last-modified': new Date(lastModified).toUTCString(), 'cache-control': 'max-age=0' };
    // RFC 9110 §13.1: If-None-Match (weak comparison) decides when present, else If-Modified-Since
    const unchanged =
      req.ifNoneMatch !== undefined
        ? req.ifNoneMatch.trim() === '*' || req.ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
        : req.ifModifiedSince !== undefined && Date.parse(req.ifModifiedSince) >= lastModified;
    if (unchanged) return { status: 304, type: HTML, body: '', headers };
    return { status: 200, type: HTML, body, headers };
  }

  /** The pages a child sitemap lists: 0, "/" and the news pages; 1, the docs pages. */
  private childPages(host: string, child: 0 | 1): string[] {
    return this.pageUrls(host).filter((u) => new URL(u).pathname.startsWith('/docs/') === (child === 1));
  }

  private urlset(urls: string[], now: number): string {
    const entries = urls.map((u) => `  <url><loc>${escapeHtml(u)}</loc><lastmod>${iso(this.lastChangeAt(u, now))}</lastmod></url>`);
    return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="${SITEMAP_NS}">\n${entries.join('\n')}\n</urlset>\n`;
  }

  private sitemapIndex(host: string, now: number): string {
    const entries = SITEMAP_CHILD_PATHS.map((path, i) => {
      const lastmod = Math.max(...this.childPages(host, i as 0 | 1).map((u) => this.lastChangeAt(u, now)));
      return `  <sitemap><loc>http://${host}${path}</loc><lastmod>${iso(lastmod)}</lastmod></sitemap>`;
    });
    return `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="${SITEMAP_NS}">\n${entries.join('\n')}\n</sitemapindex>\n`;
  }

  /** Bad three ways: a future lastmod, a URL outside /news/, and a mismatched closing tag at the end. */
  private badSitemap(host: string, now: number): string {
    const u = (path: string) => `http://${host}${path}`;
    return [
      '<?xml version="1.0" encoding="UTF-8"?>',
      `<urlset xmlns="${SITEMAP_NS}">`,
      `  <url><loc>${u('/news/1.html')}</loc><lastmod>${iso(this.lastChangeAt(u('/news/1.html'), now))}</lastmod></url>`,
      `  <url><loc>${u('/news/2.html')}</loc><lastmod>${iso(now + BAD_SITEMAP_FUTURE_MS)}</lastmod></url>`,
      `  <url><loc>${u('/docs/1.html')}</loc></url>`,
      `  <url><loc>${u('/news/1.html')}</lo></url>`,
      '</urlset>',
      '',
    ].join('\n');
  }

  private render(p: PageSchedule, version: number): string {
    const rng = mulberry32(deriveSeed(this.options.seed, 'fresh-text', p.host, p.path));
    const title = phrase(rng, 'en', 3, 6);
    const standing = Array.from({ length: 3 }, () => `<p>${escapeHtml(sentence(rng, 60))}</p>`);
    // the part that changes with each version, so the digest changes exactly at the change times
    const update = sentence(mulberry32(deriveSeed(this.options.seed, 'fresh-version', p.host, p.path, version)), 30);
    const others = this.pageUrls(p.host).filter((u) => u !== `http://${p.host}${p.path}`);
    const links = (p.path === '/' ? others : [`http://${p.host}/`, ...others.slice(0, 2)]).map((u) => `<li><a href="${escapeHtml(new URL(u).pathname)}">${escapeHtml(new URL(u).pathname)}</a></li>`);
    return [
      '<!DOCTYPE html>',
      '<html lang="en">',
      `<head><meta charset="utf-8"><title>${escapeHtml(title)} | ${p.host}</title></head>`,
      '<body>',
      '<main><article>',
      `<h1>${escapeHtml(title)}</h1>`,
      ...standing,
      `<p class="update">Version ${version}: ${escapeHtml(update)}</p>`,
      '</article>',
      `<nav><ul>${links.join('')}</ul></nav>`,
      '</main>',
      '</body>',
      '</html>',
      '',
    ].join('\n');
  }
}

function sentence(rng: () => number, words: number): string {
  const list = WORDS.en;
  const text = Array.from({ length: words }, () => list[randInt(rng, 0, list.length - 1)]).join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

const iso = (t: number) => new Date(t).toISOString();

function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`;
}

function notFound(): FreshResponse {
  return { status: 404, type: HTML, body: '<!DOCTYPE html><html lang="en"><head><title>Not found</title></head><body><h1>Not found</h1></body></html>\n', headers: {} };
}
