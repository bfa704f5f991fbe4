// Hosts that fail, opt-in through startTestWeb({ failing }): what a crawl's bounded cost on a
// failing host is measured against (docs/politeness-and-robots.md, "A failing host").
//
//   failing.test        working pages beside four endpoints that never answer usefully, each
//                       linked from "/" between the working pages:
//                         /hang     the request is read, nothing is ever sent (no headers)
//                         /drip     200 and headers, then one byte every dripIntervalMs, forever
//                         /reset    200, Content-Length, part of the body, then a TCP RST
//                         /timeout  200, headers and half the page, the rest after slowMs (longer
//                                   than any sane timeout: the client's timeout ends it)
//                       /page/1 .. /page/N are small pages linking back to "/".
//   dead.failing.test   a host that died after its robots.txt: robots.txt answers 200 (allow
//                       all), every other request has its connection reset before a byte is sent.
//
// Nothing here is random. The endless responses hold a socket only while the client keeps it:
// timers stop when the connection closes, and the server's close() destroys what is left.

import type { IncomingMessage, ServerResponse } from 'node:http';

export interface FailingHostsOptions {
  /** /drip: ms between bytes. Default 2000 ("a byte every few seconds"). */
  dripIntervalMs?: number;
  /** /timeout: ms before the rest of the page would be sent. Default 120000. */
  slowMs?: number;
  /** working pages /page/1 .. /page/N of failing.test. Default 6. */
  pages?: number;
}

export type ResolvedFailingOptions = Readonly<Required<FailingHostsOptions>>;

export const FAILING_DEFAULTS: ResolvedFailingOptions = Object.freeze({ dripIntervalMs: 2000, slowMs: 120_000, pages: 6 });

export const FAILING_DOMAIN = 'failing.test';
export const FAILING_HOST = 'failing.test';
export const DEAD_HOST = 'dead.failing.test';
export const FAILING_SEED_URL = `http://${FAILING_HOST}/`;
export const DEAD_SEED_URL = `http://${DEAD_HOST}/`;

/** The endpoints of failing.test that never answer usefully, and how each fails. */
export const FAILING_PATHS: ReadonlyArray<{ path: string; fails: string }> = Object.freeze([
  { path: '/hang', fails: 'the request is read and never answered: no status, no headers' },
  { path: '/drip', fails: '200, then one byte every dripIntervalMs forever' },
  { path: '/reset', fails: '200 and part of the body, then the connection is reset (TCP RST)' },
  { path: '/timeout', fails: '200 and half the page, the rest only after slowMs' },
]);

/** /reset: the Content-Length it declares, the bytes it sends, and the ms before the RST. */
export const FAILING_RESET_DECLARED = 50_000;
export const FAILING_RESET_SENT = 1000;
export const FAILING_RESET_AFTER_MS = 50;

const HTML = 'text/html; charset=utf-8';

export function resolveFailingOptions(opts: FailingHostsOptions | boolean | undefined): ResolvedFailingOptions | null {
  if (!opts) return null;
  const o = { ...FAILING_DEFAULTS, ...(opts === true ? {} : opts) };
  for (const [k, v] of Object.entries(o)) {
    if (!Number.isInteger(v) || v < (k === 'pages' ? 1 : 0)) throw new RangeError(`testweb: failing option ${k} must be a non-negative integer (pages at least 1), got ${v}`);
  }
  return Object.freeze(o);
}

/** The working pages of failing.test. */
export const failingPagePaths = (o: ResolvedFailingOptions = FAILING_DEFAULTS): string[] => Array.from({ length: o.pages }, (_, i) => `/page/${i + 1}`);

function page(title: string, body: string): string {
  return `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${title}</title>\n</head>\n<body>\n<h1>${title}</h1>\n${body}\n</body>\n</html>\n`;
}

/** "/": the working pages, a failing endpoint after each of the first ones. */
function indexPage(o: ResolvedFailingOptions): string {
  const failing = FAILING_PATHS.map((f) => f.path);
  const links = failingPagePaths(o).flatMap((p) => [p, ...failing.splice(0, 1)]);
  links.push(...failing);
  return page('A host that fails', `<ul>\n${links.map((l) => `<li><a href="${l}">${l}</a></li>`).join('\n')}\n</ul>`);
}

export interface FailingSimpleResponse {
  status: number;
  type: string;
  body: string;
}

/** One server's failing hosts: responses, and the timers of the endless ones. */
export class FailingHosts {
  readonly options: ResolvedFailingOptions;
  readonly hostNames: readonly string[] = Object.freeze([FAILING_HOST, DEAD_HOST]);

  constructor(opts: FailingHostsOptions | boolean) {
    this.options = resolveFailingOptions(opts) ?? FAILING_DEFAULTS;
  }

  has(host: string): boolean {
    return host === FAILING_HOST || host === DEAD_HOST;
  }

  resolveRules(port: number): string[] {
    return [`*.${FAILING_DOMAIN}=127.0.0.1:${port}`, `${FAILING_DOMAIN}=127.0.0.1:${port}`];
  }

  /**
   * A simple response for the server to send, or null when this took the response over
   * (never answers, streams, or resets the connection).
   */
  respond(req: IncomingMessage, res: ServerResponse, host: string, target: string): FailingSimpleResponse | null {
    const path = target.split('?')[0]!.split('#')[0]!;
    if (path === '/robots.txt') return { status: 200, type: 'text/plain; charset=utf-8', body: 'User-agent: *\nAllow: /\n' };
    if (host === DEAD_HOST) {
      // dead since its robots.txt: the connection is reset before a byte is sent
      req.socket.resetAndDestroy();
      return null;
    }
    if (path === '/') return { status: 200, type: HTML, body: indexPage(this.options) };
    const n = /^\/page\/([1-9]\d*)$/.exec(path);
    if (n && Number(n[1]) <= this.options.pages) return { status: 200, type: HTML, body: page(`Working page ${n[1]}`, `<p>This page of a failing host answers.</p>\n<p><a href="/">Back</a></p>`) };
    switch (path) {
      case '/hang':
        return null; // read, never answered: the client's timeout (or its close) ends it
      case '/drip':
        return this.drip(res);
      case '/reset':
        return this.reset(res);
      case '/timeout':
        return this.timeout(res);
      default:
        return { status: 404, type: HTML, body: page('Not found', '<p>Nothing here.</p>') };
    }
  }

  private drip(res: ServerResponse): null {
    const text = page('Drip', `<p>${'drip '.repeat(200)}</p>`);
    let i = 0;
    res.writeHead(200, { 'content-type': HTML, 'cache-control': 'no-store' });
    res.write(text[i++]!);
    const timer = setInterval(() => {
      if (res.destroyed) clearInterval(timer);
      else res.write(text[i++ % text.length]!);
    }, this.options.dripIntervalMs);
    res.once('close', () => clearInterval(timer));
    return null;
  }

  private reset(res: ServerResponse): null {
    const body = page('Reset', `<p>${'the connection will be reset '.repeat(100)}</p>`).slice(0, FAILING_RESET_SENT);
    res.writeHead(200, { 'content-type': HTML, 'content-length': String(FAILING_RESET_DECLARED) });
    res.write(body);
    const socket = res.socket;
    const timer = setTimeout(() => {
      if (socket && !socket.destroyed) socket.resetAndDestroy();
    }, FAILING_RESET_AFTER_MS);
    res.once('close', () => clearTimeout(timer));
    return null;
  }

  private timeout(res: ServerResponse): null {
    const text = page('Too slow', `<p>${'this page takes longer than any timeout '.repeat(50)}</p>`);
    const half = Math.floor(text.length / 2);
    res.writeHead(200, { 'content-type': HTML, 'content-length': String(Buffer.byteLength(text)) });
    res.write(text.slice(0, half));
    const timer = setTimeout(() => {
      if (!res.destroyed) res.end(text.slice(half));
    }, this.options.slowMs);
    res.once('close', () => clearTimeout(timer));
    return null;
  }
}
