// Crawl-trap hosts of the test web: sites that answer every URL a crawler makes up from
// their links, so a crawl without defences never ends. Each one also has a couple of
// normal pages (its home and /about.html), which a crawl with defences must still fetch.
//
// - calendar.trap.test: an infinite calendar; every day links the next and previous day
//   and month, forever in both directions; each day has its own (varied) events text.
// - session.trap.test: four real pages, but every link carries a session id
//   (`;jsessionid=` or `?PHPSESSID=`), new in every response.
// - pages.trap.test: endless `?page=N` pagination; every page has the same content.
// - deep.trap.test: every directory page links `next/`, `page-<k>/` and `part-<k>/`
//   relatively, so the paths grow deeper and wider forever (`/deep/next/next/...`,
//   `/deep/page-1/part-2/page-3/...`).
// - soft404.trap.test: 200 for every path: the same "not found" template with a few words
//   of the path in it, linking to more nonexistent paths.

import { deriveSeed, mulberry32, randInt } from './prng.js';
import { englishWords as words, linkList as links, plainPage as page } from './plain-pages.js';
import { escapeHtml } from './render-page.js';

export const TRAP_DOMAIN = 'trap.test';
export const CALENDAR_TRAP_HOST = `calendar.${TRAP_DOMAIN}`;
export const SESSION_TRAP_HOST = `session.${TRAP_DOMAIN}`;
export const PAGES_TRAP_HOST = `pages.${TRAP_DOMAIN}`;
export const DEEP_TRAP_HOST = `deep.${TRAP_DOMAIN}`;
export const SOFT404_TRAP_HOST = `soft404.${TRAP_DOMAIN}`;
export const TRAP_HOSTS: readonly string[] = Object.freeze([CALENDAR_TRAP_HOST, SESSION_TRAP_HOST, PAGES_TRAP_HOST, DEEP_TRAP_HOST, SOFT404_TRAP_HOST]);

/** The real pages of session.trap.test (each reachable under endless session URLs). */
export const SESSION_TRAP_PAGES: readonly string[] = Object.freeze(['/', '/products.html', '/contact.html', '/about.html']);

/** Paths every trap host serves as ordinary pages (besides its trap). */
export const TRAP_NORMAL_PAGES: readonly string[] = Object.freeze(['/', '/about.html']);

export interface TrapResponse {
  status: number;
  type: string;
  body: string;
}

const HTML = 'text/html; charset=utf-8';
const NOT_FOUND: TrapResponse = { status: 404, type: HTML, body: page('Not found', '<p>Not found.</p>') };
const ROBOTS_NONE: TrapResponse = { status: 404, type: 'text/plain; charset=utf-8', body: 'no robots.txt\n' };


/** A normal page of a trap host: text of its own, so no two hosts' pages are near-duplicates. */
function aboutPage(host: string): TrapResponse {
  const rng = mulberry32(deriveSeed('trap-about', host));
  return { status: 200, type: HTML, body: page(`About ${host}`, `<p>${words(rng, 80)}</p>${links([['/', 'Home']])}`) };
}

/** The text of the soft-404 template and of the pagination page: long enough to be fingerprinted. */
const BOILERPLATE = words(mulberry32(deriveSeed('trap-boilerplate')), 400);

export class TrapHosts {
  readonly hostNames = TRAP_HOSTS;
  /** responses of session.trap.test so far: each one hands out new session ids */
  private sessions = 0;

  has(host: string): boolean {
    return TRAP_HOSTS.includes(host);
  }

  resolveRules(port: number): string[] {
    return [`*.${TRAP_DOMAIN}=127.0.0.1:${port}`];
  }

  /** Seeds for a crawl of the trap hosts: each host's home page. */
  seedUrls(): string[] {
    return TRAP_HOSTS.map((h) => `http://${h}/`);
  }

  respond(host: string, method: string, target: string): TrapResponse {
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: 'text/plain; charset=utf-8', body: 'method not allowed\n' };
    const url = new URL(target, `http://${host}`);
    if (url.pathname === '/robots.txt') return ROBOTS_NONE;
    if (url.pathname === '/about.html' && host !== SESSION_TRAP_HOST) return aboutPage(host);
    switch (host) {
      case CALENDAR_TRAP_HOST:
        return calendar(url);
      case SESSION_TRAP_HOST:
        return this.session(url);
      case PAGES_TRAP_HOST:
        return pagination(url);
      case DEEP_TRAP_HOST:
        return deep(url);
      case SOFT404_TRAP_HOST:
        return soft404(url);
      default:
        return NOT_FOUND;
    }
  }

  private session(url: URL): TrapResponse {
    const path = url.pathname.replace(/;jsessionid=[^/]*$/i, '');
    if (!SESSION_TRAP_PAGES.includes(path)) return NOT_FOUND;
    this.sessions += 1;
    const id = (n: number) => deriveSeed('session', this.sessions, n).toString(16).padStart(8, '0').repeat(4);
    // half the links carry the servlet path parameter, half PHP's query parameter
    const hrefs = SESSION_TRAP_PAGES.map((p, i): [string, string] => [i % 2 === 0 ? `${p};jsessionid=${id(i)}` : `${p}?PHPSESSID=${id(i)}`, `Go to ${p}`]);
    const rng = mulberry32(deriveSeed('session-page', path));
    return { status: 200, type: HTML, body: page(`Shop ${path}`, `<p>${words(rng, 60)}</p>${links(hrefs)}`) };
  }
}

const DAY_MS = 86_400_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);
const calendarPath = (t: number) => `/cal/${isoDay(t).replaceAll('-', '/')}`;

function calendar(url: URL): TrapResponse {
  if (url.pathname === '/') {
    return { status: 200, type: HTML, body: page('Events calendar', `<p>Our events, day by day.</p>${links([[calendarPath(Date.UTC(2026, 10, 22)), 'Today'], ['/about.html', 'About us']])}`) };
  }
  const m = /^\/cal\/(\d{4})\/(\d{2})\/(\d{2})$/.exec(url.pathname);
  if (!m) return NOT_FOUND;
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (Number.isNaN(t) || isoDay(t) !== `${m[1]}-${m[2]}-${m[3]}`) return NOT_FOUND;
  const d = new Date(t);
  const monthAway = (k: number) => Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + k, 1);
  const rng = mulberry32(deriveSeed('calendar', isoDay(t)));
  const body = `<p>Events on ${isoDay(t)}: ${words(rng, 60)}</p>${links([
    [calendarPath(t - DAY_MS), 'Previous day'],
    [calendarPath(t + DAY_MS), 'Next day'],
    [calendarPath(monthAway(-1)), 'Previous month'],
    [calendarPath(monthAway(1)), 'Next month'],
    ['/about.html', 'About us'],
  ])}`;
  return { status: 200, type: HTML, body: page(`Calendar ${isoDay(t)}`, body) };
}

function pagination(url: URL): TrapResponse {
  if (url.pathname === '/') {
    return { status: 200, type: HTML, body: page('Listing', `<p>Everything we have.</p>${links([['/list?page=1', 'The list'], ['/about.html', 'About us']])}`) };
  }
  const n = Number(url.searchParams.get('page') ?? '1');
  if (url.pathname !== '/list' || !Number.isInteger(n) || n < 1) return NOT_FOUND;
  // a pagination bar of the next pages; the listing itself is the same on every page
  const bar = [1, 2, 3].map((k): [string, string] => [`/list?page=${n + k}`, 'next']);
  return { status: 200, type: HTML, body: page('Listing', `<p>${BOILERPLATE}</p>${links(bar)}`) };
}

function deep(url: URL): TrapResponse {
  if (url.pathname === '/') {
    return { status: 200, type: HTML, body: page('Directory', `<p>Browse the tree.</p>${links([['/deep/', 'The tree'], ['/about.html', 'About us']])}`) };
  }
  if (!url.pathname.startsWith('/deep/') || !url.pathname.endsWith('/')) return NOT_FOUND;
  const level = url.pathname.split('/').length - 2;
  const rng = mulberry32(deriveSeed('deep', url.pathname));
  // relative links: each resolves one level deeper than the page it is on
  return { status: 200, type: HTML, body: page(`Directory ${url.pathname}`, `<p>${words(rng, 40)}</p>${links([['next/', 'Next'], [`page-${level}/`, 'Deeper'], [`part-${level}/`, 'Part']])}`) };
}

function soft404(url: URL): TrapResponse {
  const rng = mulberry32(deriveSeed('soft404', url.pathname));
  // links to pages that do not exist, which this site answers with 200 all the same
  const missing = [0, 1, 2].map((): [string, string] => [`/item/${randInt(rng, 10_000, 99_999)}`, 'Also see']);
  if (url.pathname === '/') {
    return { status: 200, type: HTML, body: page('Catalogue', `<p>Our catalogue.</p>${links([...missing, ['/about.html', 'About us']])}`) };
  }
  const name = url.pathname.split('/').pop() ?? '';
  const body = `<p>Sorry, ${escapeHtml(name)} is not here. ${BOILERPLATE}</p>${links(missing)}`;
  return { status: 200, type: HTML, body: page('Page not found', body) };
}
