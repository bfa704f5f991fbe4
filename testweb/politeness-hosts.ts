// Hosts that put a crawler's politeness under stress, opt-in through
// startTestWeb({ politeness }). Each misbehaves in one way a real site does:
//
//   robots503.polite.test    /robots.txt always 503: RFC 9309 says "unreachable", so a
//                            polite crawler fetches none of its pages.
//   robotsflaky.polite.test  /robots.txt 503 for the first N requests, then 200 with
//                            Disallow: /private/ (a crawler must wait for it, then obey it).
//   robotschange.polite.test /robots.txt allows all until T ms after start, then
//                            Disallow: /late/ (a crawler that re-fetches must obey the new one).
//   retryafter.polite.test   the first GET of every page is 429 + Retry-After.
//   slow.polite.test         every response (robots.txt too) is delayed.
//   s00..s49.sharedip.test   50 plain hosts that sit on one IP (127.0.0.2): per-IP caps.
//
// The pages are small but real HTML with distinct text (so near-duplicate detection keeps
// them apart), and link to each other so a crawl from "/" reaches every page within depth 2.
// Everything here is pure except the per-host counters of a PolitenessHosts instance.

import { deriveSeed, mulberry32, pick, randInt } from './prng.js';
import { escapeHtml } from './render-page.js';
import { resourceKey } from './url-forms.js';
import { WORDS, phrase } from './words.js';

export interface PolitenessHostsOptions {
  /** robotsflaky: how many /robots.txt requests answer 503 before it answers 200. Default 2. */
  flakyRobotsFailures?: number;
  /** robotschange: ms after server start when /robots.txt starts to disallow /late/. Default 4000. */
  robotsChangeAfterMs?: number;
  /** retryafter: the Retry-After value (seconds) sent with each page's first 429. Default 2. */
  retryAfterSeconds?: number;
  /** slow: delay (ms) before every response of slow.polite.test. Default 1500. */
  slowMs?: number;
  /** Number of sNN.sharedip.test hosts on the shared IP. Default 50. */
  sharedIpHosts?: number;
}

export type ResolvedPolitenessOptions = Readonly<Required<PolitenessHostsOptions>>;

export const POLITENESS_DEFAULTS: ResolvedPolitenessOptions = Object.freeze({
  flakyRobotsFailures: 2,
  robotsChangeAfterMs: 4000,
  retryAfterSeconds: 2,
  slowMs: 1500,
  sharedIpHosts: 50,
});

export const POLITE_DOMAIN = 'polite.test';
export const SHARED_IP_DOMAIN = 'sharedip.test';
/** The address the sharedip hosts resolve to; everything else of the test web is on 127.0.0.1. */
export const SHARED_IP_ADDRESS = '127.0.0.2';

export const ROBOTS_503_HOST = 'robots503.polite.test';
export const ROBOTS_FLAKY_HOST = 'robotsflaky.polite.test';
export const ROBOTS_CHANGE_HOST = 'robotschange.polite.test';
export const RETRY_AFTER_HOST = 'retryafter.polite.test';
export const SLOW_HOST = 'slow.polite.test';
export const POLITE_HOSTS: readonly string[] = Object.freeze([ROBOTS_503_HOST, ROBOTS_FLAKY_HOST, ROBOTS_CHANGE_HOST, RETRY_AFTER_HOST, SLOW_HOST]);

/** robots.txt that allows everything (every polite host but the three robots hosts). */
export const ALLOW_ALL_ROBOTS = 'User-agent: *\nAllow: /\n';
/** robotsflaky once it answers 200. */
export const FLAKY_ROBOTS = 'User-agent: *\nDisallow: /private/\n';
/** robotschange before robotsChangeAfterMs. */
export const CHANGE_ROBOTS_BEFORE = ALLOW_ALL_ROBOTS;
/** robotschange from robotsChangeAfterMs on. */
export const CHANGE_ROBOTS_AFTER = 'User-agent: *\nDisallow: /late/\n';

/** undefined/false -> null (not enabled); true -> defaults; an object -> defaults overridden. */
export function resolvePolitenessOptions(opts: PolitenessHostsOptions | boolean | undefined): ResolvedPolitenessOptions | null {
  if (opts === undefined || opts === false) return null;
  const o = opts === true ? {} : opts;
  const resolved = { ...POLITENESS_DEFAULTS };
  for (const key of Object.keys(resolved) as Array<keyof PolitenessHostsOptions>) {
    const v = o[key];
    if (v === undefined) continue;
    const integer = key === 'flakyRobotsFailures' || key === 'sharedIpHosts';
    if (!Number.isFinite(v) || v < 0 || (integer && !Number.isInteger(v))) {
      throw new Error(`testweb: politeness.${key} must be a non-negative ${integer ? 'integer' : 'number'}, got ${v}`);
    }
    resolved[key] = v;
  }
  return Object.freeze(resolved);
}

/** sNN.sharedip.test (two digits, three when there are more than 100). */
export function sharedIpHostName(index: number, count: number = POLITENESS_DEFAULTS.sharedIpHosts): string {
  return `s${String(index).padStart(count > 100 ? 3 : 2, '0')}.${SHARED_IP_DOMAIN}`;
}

export function sharedIpHostNames(opts: PolitenessHostsOptions | boolean = true): string[] {
  const count = (resolvePolitenessOptions(opts) ?? POLITENESS_DEFAULTS).sharedIpHosts;
  return Array.from({ length: count }, (_, i) => sharedIpHostName(i, count));
}

/** Every politeness host: the five *.polite.test hosts, then the sharedip hosts. */
export function politenessHostNames(opts: PolitenessHostsOptions | boolean = true): string[] {
  return [...POLITE_HOSTS, ...sharedIpHostNames(opts)];
}

/** The seed URL ("http://host/") of every politeness host. */
export function politenessSeedUrls(opts: PolitenessHostsOptions | boolean = true): string[] {
  return politenessHostNames(opts).map((h) => `http://${h}/`);
}

// ---------------------------------------------------------------- pages

interface PolitePage {
  path: string;
  /** Link targets (paths on the same host). */
  links: string[];
}

const BASIC = ['/', '/p1', '/p2', '/p3', '/p4', '/p5'];
const LATE = Array.from({ length: 8 }, (_, i) => `/late/${i + 1}`);
const PRIVATE = ['/private/1', '/private/2'];

/** "/" links to p1..p5; every pK links home and to the next one. */
function basicPages(): PolitePage[] {
  return BASIC.map((path, i) => ({ path, links: i === 0 ? BASIC.slice(1) : ['/', BASIC[i + 1] ?? '/p1'] }));
}

/**
 * The pages of a politeness host (paths with their links). Depths from "/":
 * basic pages 0-1; robotsflaky /private/1-2 at 1; robotschange /late/1-2 at 1 and
 * /late/3-8 at 2 (linked from p1..p5), and each /late/k links /late/k+1 as well.
 */
function pagesOf(host: string): PolitePage[] | null {
  if (host === ROBOTS_503_HOST || host === RETRY_AFTER_HOST || host === SLOW_HOST) return basicPages();
  if (host === ROBOTS_FLAKY_HOST) {
    const pages = basicPages();
    pages[0]!.links.push(...PRIVATE);
    pages[1]!.links.push(PRIVATE[1]!);
    return [...pages, ...PRIVATE.map((path) => ({ path, links: ['/', '/p1'] }))];
  }
  if (host === ROBOTS_CHANGE_HOST) {
    const pages = basicPages();
    pages[0]!.links.push('/late/1', '/late/2');
    const fromP = [['/late/3'], ['/late/4'], ['/late/5'], ['/late/6'], ['/late/7', '/late/8']];
    fromP.forEach((late, i) => pages[i + 1]!.links.push(...late));
    return [...pages, ...LATE.map((path, i) => ({ path, links: ['/', ...(i + 1 < LATE.length ? [LATE[i + 1]!] : [])] }))];
  }
  if (host.endsWith(`.${SHARED_IP_DOMAIN}`)) {
    return [
      { path: '/', links: ['/p1', '/p2'] },
      { path: '/p1', links: ['/', '/p2'] },
      { path: '/p2', links: ['/', '/p1'] },
    ];
  }
  return null;
}

/** The HTML page paths a politeness host serves (null for any other host or a sharedip host out of range). */
export function politenessHostPaths(host: string, opts: PolitenessHostsOptions | boolean = true): string[] | null {
  if (host.endsWith(`.${SHARED_IP_DOMAIN}`) && !sharedIpHostNames(opts).includes(host)) return null;
  return pagesOf(host)?.map((p) => p.path) ?? null;
}

/** Links alternate between absolute URLs (no port) and absolute paths, as real sites mix them. */
function renderPolitePage(host: string, page: PolitePage): string {
  const rng = mulberry32(deriveSeed('politeness', host, page.path));
  const title = phrase(rng, 'en', 3, 6);
  const paragraphs: string[] = [];
  for (let p = randInt(rng, 3, 4); p > 0; p--) {
    const words: string[] = [];
    for (let k = randInt(rng, 50, 80); k > 0; k--) words.push(pick(rng, WORDS.en));
    const text = words.join(' ');
    paragraphs.push(`<p>${escapeHtml(text.charAt(0).toUpperCase() + text.slice(1))}.</p>`);
  }
  const links = page.links.map((to, i) => {
    const href = i % 2 === 0 ? `http://${host}${to}` : to;
    return `<li><a href="${escapeHtml(href)}">${escapeHtml(phrase(rng, 'en', 2, 4))}</a></li>`;
  });
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${escapeHtml(title)} | ${host}</title>`,
    `<meta name="description" content="${escapeHtml(phrase(rng, 'en', 8, 12))}.">`,
    '</head>',
    '<body>',
    `<header><span class="logo">${host}</span></header>`,
    '<main>',
    '<article>',
    `<h1>${escapeHtml(title)}</h1>`,
    ...paragraphs,
    '</article>',
    `<nav><ul>${links.join('')}</ul></nav>`,
    '</main>',
    `<footer><p>&copy; 2024 ${host}.</p></footer>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

// ---------------------------------------------------------------- what a polite crawl ends with

export interface PolitenessExpectation {
  /** Pages a polite crawl from politenessSeedUrls() (depth >= 2) must fetch and store. */
  pages: Set<string>;
  /**
   * Pages it may or may not store: robotschange's /late/ pages. Fetched before the robots.txt
   * change (or before the crawler re-fetches robots.txt) they are allowed; after the crawler
   * has read the new robots.txt they are disallowed. Which side each falls on depends on
   * timing, so the audit of the request log, not this list, judges them.
   */
  optional: Set<string>;
  /** Pages it must never store: every page of robots503, robotsflaky's /private/ pages. */
  forbidden: Set<string>;
}

/**
 * The pages a polite crawler ends with. robotsflaky's pages count as expected on the
 * assumption that the crawler retries a 5xx robots.txt within the crawl (its error retry
 * interval must be shorter than the crawl).
 */
export function politenessExpectedPages(opts: PolitenessHostsOptions | boolean = true): PolitenessExpectation {
  const out: PolitenessExpectation = { pages: new Set(), optional: new Set(), forbidden: new Set() };
  for (const host of politenessHostNames(opts)) {
    for (const path of politenessHostPaths(host, opts) ?? []) {
      const url = `http://${host}${path}`;
      if (host === ROBOTS_503_HOST || (host === ROBOTS_FLAKY_HOST && path.startsWith('/private/'))) out.forbidden.add(url);
      else if (host === ROBOTS_CHANGE_HOST && path.startsWith('/late/')) out.optional.add(url);
      else out.pages.add(url);
    }
  }
  return out;
}

// ---------------------------------------------------------------- serving

/** What the server sends for a request to a politeness host. */
export interface PoliteResponse {
  status: number;
  type: string;
  body: string;
  headers?: Record<string, string>;
}

const TEXT = 'text/plain; charset=utf-8';
const HTML = 'text/html; charset=utf-8';
const NOT_FOUND: PoliteResponse = {
  status: 404,
  type: HTML,
  body: '<!DOCTYPE html><html lang="en"><head><title>Not found</title></head><body><h1>Not found</h1></body></html>\n',
};

/** One server's politeness hosts: the host list, their state (robots and 429 counters) and responses. */
export class PolitenessHosts {
  readonly options: ResolvedPolitenessOptions;
  readonly hostNames: readonly string[];
  private readonly pages = new Map<string, Map<string, PolitePage>>();
  private readonly html = new Map<string, string>();
  private flakyRobotsRequests = 0;
  /** retryafter: page keys that already had their 429. */
  private readonly throttled = new Set<string>();

  /** startedAt: epoch ms the robotschange timer counts from (the server's start). */
  constructor(opts: PolitenessHostsOptions | boolean, private readonly startedAt: number) {
    this.options = resolvePolitenessOptions(opts) ?? POLITENESS_DEFAULTS;
    this.hostNames = Object.freeze(politenessHostNames(this.options));
    for (const host of this.hostNames) this.pages.set(host, new Map(pagesOf(host)!.map((p) => [p.path, p])));
  }

  has(host: string): boolean {
    return this.pages.has(host);
  }

  /** `--resolve` rules for the two politeness domains. */
  resolveRules(port: number): string[] {
    return [`*.${POLITE_DOMAIN}=127.0.0.1:${port}`, `*.${SHARED_IP_DOMAIN}=${SHARED_IP_ADDRESS}:${port}`];
  }

  /** Extra wait before responding (slow host only). */
  delayMs(host: string): number {
    return host === SLOW_HOST ? this.options.slowMs : 0;
  }

  /** The robots.txt body robotschange serves at time `now` (epoch ms). */
  changingRobots(now: number): string {
    return now - this.startedAt < this.options.robotsChangeAfterMs ? CHANGE_ROBOTS_BEFORE : CHANGE_ROBOTS_AFTER;
  }

  /** The response for a request to a host this object has (see has()), at time `now`. */
  respond(host: string, method: string, target: string, now: number): PoliteResponse {
    const pages = this.pages.get(host);
    if (!pages) throw new Error(`testweb: ${host} is not a politeness host`);
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: TEXT, body: 'method not allowed\n', headers: { allow: 'GET, HEAD' } };
    let key: string;
    try {
      key = resourceKey(target);
    } catch {
      return NOT_FOUND;
    }
    if (key === '/robots.txt') return this.robots(host, now);
    const page = pages.get(key);
    if (!page) return NOT_FOUND;
    if (host === RETRY_AFTER_HOST && method === 'GET' && !this.throttled.has(key)) {
      this.throttled.add(key);
      const s = this.options.retryAfterSeconds;
      return { status: 429, type: TEXT, body: `too many requests: retry after ${s} s\n`, headers: { 'retry-after': String(s) } };
    }
    const id = `${host}${key}`;
    let body = this.html.get(id);
    if (body === undefined) {
      body = renderPolitePage(host, page);
      this.html.set(id, body);
    }
    return { status: 200, type: HTML, body };
  }

  private robots(host: string, now: number): PoliteResponse {
    const unavailable: PoliteResponse = { status: 503, type: TEXT, body: 'robots.txt temporarily unavailable\n' };
    if (host === ROBOTS_503_HOST) return unavailable;
    if (host === ROBOTS_FLAKY_HOST) {
      return this.flakyRobotsRequests++ < this.options.flakyRobotsFailures ? unavailable : { status: 200, type: TEXT, body: FLAKY_ROBOTS };
    }
    if (host === ROBOTS_CHANGE_HOST) return { status: 200, type: TEXT, body: this.changingRobots(now) };
    return { status: 200, type: TEXT, body: ALLOW_ALL_ROBOTS };
  }
}
