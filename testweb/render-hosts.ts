// Hosts whose pages need a browser, opt-in through startTestWeb({ render }):
//
// - app.render.test: a single-page application. Every page is the same shell (an empty
//   <div id="root">, a script, a stylesheet); /static/app.js fetches the page's JSON from
//   /api/page/<path> and builds its heading, text and links. The links exist only after
//   rendering, so a crawl that does not render finds the home page's shell and nothing else.
//   The script also inserts an image, preloads a font (both should be blocked) and fetches
//   /private/track.json, which robots.txt disallows.
// - escape.render.test: a page that tries to make the browser reach a loopback listener of
//   the test's own (`probePort`) in every way a page can: fetch, XHR, <img>, <script>,
//   <link>, <iframe>, a beacon, a WebSocket, a redirect from its own host, and navigating
//   the window there. It writes what it tried into the page, so its rendered text shows the
//   render ran.
// - endless.render.test: a page that polls /api/poll every 100 ms forever: the network is
//   never quiet, so a render of it only ends at the render timeout.
//
// Deterministic: every page and JSON answer depends only on the path.

import { deriveSeed, mulberry32, randInt, type Rng } from './prng.js';
import { escapeHtml } from './render-page.js';
import { WORDS } from './words.js';

export const RENDER_DOMAIN = 'render.test';
export const APP_HOST = `app.${RENDER_DOMAIN}`;
export const ESCAPE_HOST = `escape.${RENDER_DOMAIN}`;
export const ENDLESS_HOST = `endless.${RENDER_DOMAIN}`;
export const RENDER_HOSTS: readonly string[] = Object.freeze([APP_HOST, ESCAPE_HOST, ENDLESS_HOST]);

/** The app's pages and where each links to (its links appear only once rendered). */
export const APP_PAGES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  '/': ['/p/1', '/p/2'],
  '/p/1': ['/p/3', '/'],
  '/p/2': ['/p/4', '/'],
  '/p/3': ['/'],
  '/p/4': ['/'],
});
/** In the rendered text of each app page (and nowhere in its HTML as served). */
export const appTextMarker = (path: string) => `rendered-marker-${path === '/' ? 'home' : path.replaceAll('/', '-').slice(1)}`;
/** Requests the app's pages make that a polite renderer must not: blocked types, and a path robots.txt disallows. */
export const APP_BLOCKED_PATHS: readonly string[] = Object.freeze(['/static/hero.png', '/static/font.woff2', '/private/track.json']);
/** In the escape page's rendered text once its script ran. */
export const ESCAPE_TEXT_MARKER = 'escape-attempts-made';
/** In the endless page's text as served (it renders, but never settles). */
export const ENDLESS_TEXT_MARKER = 'endless-polling-page';

export interface RenderHostsOptions {
  /** The loopback port the escape page tries to reach (a listener of the test's own). Default 9 (discard). */
  probePort?: number;
}

export interface RenderResponse {
  status: number;
  type: string;
  body: string | Buffer;
  headers?: Record<string, string>;
}

const HTML = 'text/html; charset=utf-8';
const JSON_TYPE = 'application/json';
const notFound = (): RenderResponse => ({ status: 404, type: 'text/plain; charset=utf-8', body: 'not found\n' });
const ROBOTS = 'User-agent: *\nDisallow: /private/\n';
/** 1x1 transparent PNG */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

function words(rng: Rng, n: number): string {
  const list = WORDS.en;
  return Array.from({ length: n }, () => list[randInt(rng, 0, list.length - 1)]).join(' ');
}

/** The shell every app page is served as: nothing to read, one place for the app to mount. */
function appShell(): string {
  return (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Loading…</title>' +
    '<link rel="stylesheet" href="/static/app.css"><link rel="preload" href="/static/font.woff2" as="font" type="font/woff2" crossorigin>' +
    '</head><body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>' +
    '<script src="/static/app.js"></script></body></html>\n'
  );
}

const APP_JS = `(function () {
  var path = location.pathname;
  fetch('/private/track.json').catch(function () {});
  fetch('/api/page' + (path === '/' ? '/' : path))
    .then(function (r) { return r.json(); })
    .then(function (page) {
      document.title = page.title;
      var root = document.getElementById('root');
      var html = '<main><h1>' + page.title + '</h1><img src="/static/hero.png" alt="">';
      page.paragraphs.forEach(function (p) { html += '<p>' + p + '</p>'; });
      html += '</main><nav>';
      page.links.forEach(function (l) { html += '<a href="' + l.href + '">' + l.text + '</a> '; });
      root.innerHTML = html + '</nav>';
    });
})();
`;

function appPageJson(path: string): string {
  const rng = mulberry32(deriveSeed('render-app', path));
  const title = `App page ${path === '/' ? 'home' : path.slice(1)}`;
  const paragraphs = [`${appTextMarker(path)} ${words(rng, 60)}.`, `${words(rng, 60)}.`];
  const links = (APP_PAGES[path] ?? []).map((href) => ({ href, text: href === '/' ? 'Home' : `Page ${href.slice(3)}` }));
  return JSON.stringify({ title, paragraphs, links });
}

function escapePage(port: number): string {
  const target = `http://127.0.0.1:${port}`;
  const script = `(function () {
  var target = ${JSON.stringify(target)};
  var tried = [];
  function note(what) { tried.push(what); document.getElementById('tried').textContent = '${ESCAPE_TEXT_MARKER}: ' + tried.join(', '); }
  fetch(target + '/from-fetch').then(function () { note('fetch answered'); }, function () { note('fetch failed'); });
  fetch('http://localhost:${port}/from-fetch-localhost').catch(function () {});
  fetch('http://[::1]:${port}/from-fetch-ipv6').catch(function () {});
  fetch('/to-loopback').then(function () { note('redirect answered'); }, function () { note('redirect failed'); });
  var x = new XMLHttpRequest(); x.open('GET', target + '/from-xhr'); x.onloadend = function () { note('xhr done'); }; x.send();
  try { navigator.sendBeacon(target + '/from-beacon', 'x'); } catch (e) {}
  try { var ws = new WebSocket('ws://127.0.0.1:${port}/from-websocket'); ws.onerror = function () { note('websocket failed'); }; } catch (e) { note('websocket refused'); }
  var img = new Image(); img.src = target + '/from-image';
  note('started');
  setTimeout(function () { location.href = target + '/from-navigation'; }, 300);
})();`;
  return (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Escape attempts</title>' +
    `<link rel="stylesheet" href="${target}/from-stylesheet.css"><link rel="preconnect" href="${target}">` +
    `<script src="${target}/from-script.js"></script></head><body><h1>A page that reaches for loopback</h1>` +
    `<p>This page tries to make the crawler's browser connect to ${escapeHtml(target)}, which the SSRF guard must refuse.</p>` +
    `<p id="tried"></p><iframe src="${target}/from-iframe"></iframe><script>${script}</script></body></html>\n`
  );
}

function endlessPage(): string {
  const rng = mulberry32(deriveSeed('render-endless'));
  const script = `(function () {
  var n = 0;
  setInterval(function () {
    fetch('/api/poll?n=' + (++n)).then(function (r) { return r.text(); }).then(function (t) { document.getElementById('count').textContent = 'polled ' + t; }).catch(function () {});
  }, 100);
})();`;
  return (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Endless polling</title></head><body>' +
    `<h1>Live ticker</h1><p>${ENDLESS_TEXT_MARKER} ${words(rng, 80)}.</p><p id="count">not polled yet</p>` +
    `<script>${script}</script></body></html>\n`
  );
}

export class RenderHosts {
  readonly hostNames = RENDER_HOSTS;
  readonly probePort: number;

  constructor(opts: RenderHostsOptions | boolean = true) {
    this.probePort = (typeof opts === 'object' ? opts.probePort : undefined) ?? 9;
  }

  has(host: string): boolean {
    return RENDER_HOSTS.includes(host);
  }

  resolveRules(port: number): string[] {
    return [`*.${RENDER_DOMAIN}=127.0.0.1:${port}`];
  }

  seedUrls(): string[] {
    return RENDER_HOSTS.map((h) => `http://${h}/`);
  }

  respond(host: string, method: string, target: string): RenderResponse {
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: 'text/plain; charset=utf-8', body: 'method not allowed\n', headers: { allow: 'GET, HEAD' } };
    const url = new URL(target, `http://${host}`);
    const path = url.pathname;
    if (path === '/robots.txt') return { status: 200, type: 'text/plain; charset=utf-8', body: ROBOTS };
    if (host === APP_HOST) return this.app(path);
    if (host === ESCAPE_HOST) {
      if (path === '/') return { status: 200, type: HTML, body: escapePage(this.probePort) };
      if (path === '/to-loopback') return { status: 302, type: HTML, body: '', headers: { location: `http://127.0.0.1:${this.probePort}/from-redirect` } };
      return notFound();
    }
    if (path === '/') return { status: 200, type: HTML, body: endlessPage() };
    if (path === '/api/poll') return { status: 200, type: 'text/plain; charset=utf-8', body: url.searchParams.get('n') ?? '0' };
    return notFound();
  }

  private app(path: string): RenderResponse {
    if (path in APP_PAGES) return { status: 200, type: HTML, body: appShell() };
    if (path === '/static/app.js') return { status: 200, type: 'text/javascript; charset=utf-8', body: APP_JS, headers: { 'cache-control': 'max-age=3600' } };
    if (path === '/static/app.css') return { status: 200, type: 'text/css; charset=utf-8', body: 'main { max-width: 40em; margin: auto } nav a { margin-right: 1em }\n', headers: { 'cache-control': 'max-age=3600' } };
    if (path === '/static/hero.png') return { status: 200, type: 'image/png', body: PNG };
    if (path === '/static/font.woff2') return { status: 200, type: 'font/woff2', body: Buffer.alloc(64) };
    if (path === '/private/track.json') return { status: 200, type: JSON_TYPE, body: '{"tracked":true}' };
    if (path.startsWith('/api/page')) {
      const page = path.slice('/api/page'.length) || '/';
      if (page in APP_PAGES) return { status: 200, type: JSON_TYPE, body: appPageJson(page) };
    }
    return notFound();
  }
}
