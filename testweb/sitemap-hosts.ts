// A site whose pages are linked only from its sitemaps, opt-in through
// startTestWeb({ sitemapHosts: true }): what a crawl reaches by reading sitemaps and would
// miss by following links alone, and the URLs a sitemap lists that a crawler must not take
// from it.
//
//   www.sitemaponly.test     "/" links to /about.html only. robots.txt (Disallow: /pages/draft)
//                            names the index /sitemap_index.xml, which lists the gzip sitemap
//                            /sitemap-1.xml.gz (served as application/gzip), the plain sitemap
//                            /pages/sitemap.xml, and a sitemap on another host (not followed:
//                            an index names its own site's sitemaps only). /pages/1.html ..
//                            /pages/30.html are linked from nowhere: 1-15 are in the gzip sitemap,
//                            16-30 in the plain one. The gzip sitemap also lists a page of
//                            other.sitemaponly.test (the crawl's scope, another host) and one of
//                            www.sitemap-elsewhere.test (another site altogether); the plain one
//                            lists /pages/draft.html (robots.txt keeps it out) and /outside.html
//                            (outside its directory /pages/). None of those four may be fetched.
//   plain.sitemaponly.test   robots.txt names no sitemap; /sitemap.xml, the conventional place,
//                            lists /notes/1.html .. /notes/3.html, linked from nowhere.
//   other.sitemaponly.test,  hosts nobody links to or seeds: a request to them is a crawler
//   www.sitemap-elsewhere.test  taking a sitemap's word for another site.
//
// Every page has text of its own (no two are near-duplicates) and a link home.

import { gzipSync } from 'node:zlib';
import { deriveSeed, mulberry32, randInt } from './prng.js';
import { escapeHtml } from './render-page.js';
import { resourceKey } from './url-forms.js';
import { phrase, WORDS } from './words.js';

export const SITEMAP_ONLY_DOMAIN = 'sitemaponly.test';
export const SITEMAP_ONLY_HOST = `www.${SITEMAP_ONLY_DOMAIN}`;
/** robots.txt names no sitemap: /sitemap.xml is where a crawler looks */
export const SITEMAP_FALLBACK_HOST = `plain.${SITEMAP_ONLY_DOMAIN}`;
/** in the crawl's scope (the seeds' registrable domain), but another host than the sitemap's */
export const SITEMAP_NEIGHBOUR_HOST = `other.${SITEMAP_ONLY_DOMAIN}`;
/** another registrable domain */
export const SITEMAP_FOREIGN_DOMAIN = 'sitemap-elsewhere.test';
export const SITEMAP_FOREIGN_HOST = `www.${SITEMAP_FOREIGN_DOMAIN}`;
/** pages linked only from the sitemaps of SITEMAP_ONLY_HOST */
export const SITEMAP_ONLY_PAGES = 30;
export const SITEMAP_INDEX = '/sitemap_index.xml';
export const SITEMAP_GZIP = '/sitemap-1.xml.gz';
export const SITEMAP_PLAIN = '/pages/sitemap.xml';
/** pages linked only from the fallback host's /sitemap.xml */
export const SITEMAP_FALLBACK_PAGES = 3;

export interface SitemapHostResponse {
  status: number;
  type: string;
  body: string | Buffer;
}

/** A URL a sitemap lists that a crawl must not fetch, and why. */
export interface RefusedListing {
  url: string;
  why: 'other host' | 'another site' | 'outside the sitemap directory' | 'robots.txt';
}

const HTML = 'text/html; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';
const XML = 'application/xml; charset=utf-8';
const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

const u = (host: string, path: string) => `http://${host}${path}`;
const range = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i + 1));

export class SitemapHosts {
  readonly hostNames: readonly string[] = Object.freeze([SITEMAP_ONLY_HOST, SITEMAP_FALLBACK_HOST, SITEMAP_NEIGHBOUR_HOST, SITEMAP_FOREIGN_HOST]);
  /** host -> path -> page title, for every HTML page served */
  private readonly pages = new Map<string, Map<string, string>>();

  constructor(private readonly seed = 1) {
    const add = (host: string, paths: string[]) => this.pages.set(host, new Map(paths.map((p) => [p, this.title(host, p)])));
    add(SITEMAP_ONLY_HOST, ['/', '/about.html', ...range(SITEMAP_ONLY_PAGES, (i) => `/pages/${i}.html`), '/pages/draft.html', '/outside.html']);
    add(SITEMAP_FALLBACK_HOST, ['/', ...range(SITEMAP_FALLBACK_PAGES, (i) => `/notes/${i}.html`)]);
    add(SITEMAP_NEIGHBOUR_HOST, ['/', '/listed-by-www.html']);
    add(SITEMAP_FOREIGN_HOST, ['/', '/listed-by-www.html']);
  }

  has(host: string): boolean {
    return this.hostNames.includes(host);
  }

  resolveRules(port: number): string[] {
    return [`*.${SITEMAP_ONLY_DOMAIN}=127.0.0.1:${port}`, `*.${SITEMAP_FOREIGN_DOMAIN}=127.0.0.1:${port}`];
  }

  /** The two sites' home pages: what a crawl of them is seeded with. */
  seedUrls(): string[] {
    return [u(SITEMAP_ONLY_HOST, '/'), u(SITEMAP_FALLBACK_HOST, '/')];
  }

  /** The pages a crawl seeded with seedUrls() stores when it reads sitemaps (links alone reach the first two of each site's). */
  expectedPages(): string[] {
    return [
      u(SITEMAP_ONLY_HOST, '/'),
      u(SITEMAP_ONLY_HOST, '/about.html'),
      ...range(SITEMAP_ONLY_PAGES, (i) => u(SITEMAP_ONLY_HOST, `/pages/${i}.html`)),
      u(SITEMAP_FALLBACK_HOST, '/'),
      ...range(SITEMAP_FALLBACK_PAGES, (i) => u(SITEMAP_FALLBACK_HOST, `/notes/${i}.html`)),
    ].sort();
  }

  /** The pages only a sitemap leads to. */
  sitemapOnlyPages(): string[] {
    return [...range(SITEMAP_ONLY_PAGES, (i) => u(SITEMAP_ONLY_HOST, `/pages/${i}.html`)), ...range(SITEMAP_FALLBACK_PAGES, (i) => u(SITEMAP_FALLBACK_HOST, `/notes/${i}.html`))].sort();
  }

  /** The sitemaps a crawl reads, in the order it finds them. */
  sitemapUrls(): string[] {
    return [u(SITEMAP_ONLY_HOST, SITEMAP_INDEX), u(SITEMAP_ONLY_HOST, SITEMAP_GZIP), u(SITEMAP_ONLY_HOST, SITEMAP_PLAIN), u(SITEMAP_FALLBACK_HOST, '/sitemap.xml')];
  }

  /** What the sitemaps list that must not be fetched (the index's sitemap on another host included). */
  refusedListings(): RefusedListing[] {
    return [
      { url: u(SITEMAP_NEIGHBOUR_HOST, '/sitemap.xml'), why: 'other host' },
      { url: u(SITEMAP_NEIGHBOUR_HOST, '/listed-by-www.html'), why: 'other host' },
      { url: u(SITEMAP_FOREIGN_HOST, '/listed-by-www.html'), why: 'another site' },
      { url: u(SITEMAP_ONLY_HOST, '/outside.html'), why: 'outside the sitemap directory' },
      { url: u(SITEMAP_ONLY_HOST, '/pages/draft.html'), why: 'robots.txt' },
    ];
  }

  respond(host: string, method: string, target: string): SitemapHostResponse {
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: TEXT, body: 'method not allowed\n' };
    let path: string;
    try {
      path = resourceKey(target);
    } catch {
      return notFound();
    }
    const title = this.pages.get(host)?.get(path);
    if (title !== undefined) return { status: 200, type: HTML, body: this.page(host, path, title) };
    if (path === '/robots.txt') return { status: 200, type: TEXT, body: robotsTxt(host) };
    if (host === SITEMAP_ONLY_HOST) {
      const own = (p: string) => u(SITEMAP_ONLY_HOST, p);
      if (path === SITEMAP_INDEX) return { status: 200, type: XML, body: sitemapIndex([own(SITEMAP_GZIP), own(SITEMAP_PLAIN), u(SITEMAP_NEIGHBOUR_HOST, '/sitemap.xml')]) };
      if (path === SITEMAP_GZIP) {
        const listed = [...range(15, (i) => own(`/pages/${i}.html`)), u(SITEMAP_NEIGHBOUR_HOST, '/listed-by-www.html'), u(SITEMAP_FOREIGN_HOST, '/listed-by-www.html')];
        return { status: 200, type: 'application/gzip', body: gzipSync(urlset(listed)) };
      }
      if (path === SITEMAP_PLAIN) {
        const listed = [...range(SITEMAP_ONLY_PAGES - 15, (i) => own(`/pages/${15 + i}.html`)), own('/pages/draft.html'), own('/outside.html')];
        return { status: 200, type: XML, body: urlset(listed) };
      }
    }
    if (host === SITEMAP_FALLBACK_HOST && path === '/sitemap.xml') {
      return { status: 200, type: XML, body: urlset(range(SITEMAP_FALLBACK_PAGES, (i) => u(SITEMAP_FALLBACK_HOST, `/notes/${i}.html`))) };
    }
    // the neighbour's own sitemap: only a crawler following the index across hosts asks for it
    if (host === SITEMAP_NEIGHBOUR_HOST && path === '/sitemap.xml') return { status: 200, type: XML, body: urlset([u(SITEMAP_NEIGHBOUR_HOST, '/listed-by-www.html')]) };
    return notFound();
  }

  private title(host: string, path: string): string {
    return phrase(mulberry32(deriveSeed(this.seed, 'sitemap-title', host, path)), 'en', 3, 6);
  }

  private page(host: string, path: string, title: string): string {
    const rng = mulberry32(deriveSeed(this.seed, 'sitemap-text', host, path));
    const paragraphs = Array.from({ length: 3 }, () => `<p>${escapeHtml(sentence(rng, 50))}</p>`);
    const links = path === '/' ? (host === SITEMAP_ONLY_HOST ? [['/about.html', 'About this site']] : []) : [['/', 'Home']];
    return [
      '<!DOCTYPE html>',
      '<html lang="en">',
      `<head><meta charset="utf-8"><title>${escapeHtml(title)} | ${host}</title></head>`,
      '<body>',
      `<main><article><h1>${escapeHtml(title)}</h1>`,
      ...paragraphs,
      '</article></main>',
      `<nav><ul>${links.map(([href, text]) => `<li><a href="${href}">${text}</a></li>`).join('')}</ul></nav>`,
      '</body>',
      '</html>',
      '',
    ].join('\n');
  }
}

function robotsTxt(host: string): string {
  if (host === SITEMAP_ONLY_HOST) return `User-agent: *\nDisallow: /pages/draft\n\nSitemap: ${u(SITEMAP_ONLY_HOST, SITEMAP_INDEX)}\n`;
  return 'User-agent: *\nAllow: /\n';
}

function urlset(urls: readonly string[]): string {
  const entries = urls.map((url) => `  <url><loc>${escapeHtml(url)}</loc><changefreq>weekly</changefreq></url>`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="${SITEMAP_NS}">\n${entries.join('\n')}\n</urlset>\n`;
}

function sitemapIndex(urls: readonly string[]): string {
  const entries = urls.map((url) => `  <sitemap><loc>${escapeHtml(url)}</loc></sitemap>`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="${SITEMAP_NS}">\n${entries.join('\n')}\n</sitemapindex>\n`;
}

function sentence(rng: () => number, words: number): string {
  const list = WORDS.en;
  const text = Array.from({ length: words }, () => list[randInt(rng, 0, list.length - 1)]).join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function notFound(): SitemapHostResponse {
  return { status: 404, type: HTML, body: '<!DOCTYPE html><html lang="en"><head><title>Not found</title></head><body><h1>Not found</h1></body></html>\n' };
}
