// The large-page host of the test web, opt-in through startTestWeb({ bigPages }): big.test
// serves HTML pages of a few megabytes made of real text (paragraphs of English words under
// headings), the size of a long manual page or a whole-book "single page" edition:
//
// - /5mb.html: exactly BIG_PAGE_BYTES (5 MiB, the crawler's default --max-page-bytes). Its
//   last paragraph holds BIG_PAGE_END_MARKER and its last link goes to /after-5mb.html, so a
//   crawl that stored and parsed it whole finds both (a cut page finds neither).
// - /over-cap.html: OVER_CAP_BYTES (6 MiB), over the default cap: it is stored cut, and its
//   end (OVER_CAP_END_MARKER, a link to /after-over-cap.html) is never seen.
// - /, /after-5mb.html, /after-over-cap.html: small pages. robots.txt allows everything.
//
// Deterministic: every body depends only on its path. The large bodies are made once, on
// their first request, and kept.

import { deriveSeed, mulberry32, randInt } from './prng.js';
import { englishWords as words } from './plain-pages.js';

export const BIG_PAGE_HOST = 'big.test';
/** The page exactly at the crawler's default size cap. */
export const BIG_PAGE_PATH = '/5mb.html';
export const BIG_PAGE_BYTES = 5 * 1024 * 1024;
export const BIG_PAGE_END_MARKER = 'bigpage-end-marker-5mb';
/** The page over the default cap. */
export const OVER_CAP_PATH = '/over-cap.html';
export const OVER_CAP_BYTES = 6 * 1024 * 1024;
export const OVER_CAP_END_MARKER = 'bigpage-end-marker-over-cap';
/** Every page of the host, home first: what a crawl from its home page fetches (the over-cap page's last link is cut off). */
export const BIG_PAGE_PATHS: readonly string[] = Object.freeze(['/', BIG_PAGE_PATH, OVER_CAP_PATH, '/after-5mb.html']);

export interface BigPageResponse {
  status: number;
  type: string;
  body: string | Buffer;
}

const HTML = 'text/html; charset=utf-8';


const small = (title: string, body: string): BigPageResponse => ({
  status: 200,
  type: HTML,
  body: `<!DOCTYPE html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1>\n${body}\n</body></html>\n`,
});

/**
 * An HTML page of exactly `bytes` bytes (ASCII): sections of headings and paragraphs of
 * words, then the closing paragraph (the end marker, the last link), padded to the size with
 * spaces before `</body>`.
 */
export function bigPageBody(title: string, bytes: number, endMarker: string, lastLink: string): Buffer {
  const rng = mulberry32(deriveSeed('big-page', title));
  const head = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1>\n`;
  const tail = `<p>The end of this page: ${endMarker}.</p><p><a href="${lastLink}">What comes after</a></p></main>\n`;
  const close = '</body></html>\n';
  const parts: string[] = [head];
  let size = head.length + tail.length + close.length;
  for (let section = 1; ; section++) {
    const heading = `<h2>Part ${section}: ${words(rng, 4)}</h2>\n`;
    const paragraphs = Array.from({ length: 6 }, () => `<p>${words(rng, randInt(rng, 60, 140))}.</p>\n`).join('');
    if (size + heading.length + paragraphs.length > bytes) break;
    parts.push(heading, paragraphs);
    size += heading.length + paragraphs.length;
  }
  parts.push(tail, ' '.repeat(bytes - size), close);
  const body = Buffer.from(parts.join(''), 'latin1');
  if (body.length !== bytes) throw new Error(`big page ${title}: ${body.length} bytes, not ${bytes}`);
  return body;
}

export class BigPageHosts {
  readonly hostNames: readonly string[] = Object.freeze([BIG_PAGE_HOST]);
  private readonly made = new Map<string, Buffer>();

  has(host: string): boolean {
    return host === BIG_PAGE_HOST;
  }

  resolveRules(port: number): string[] {
    return [`${BIG_PAGE_HOST}=127.0.0.1:${port}`];
  }

  /** The body the host serves at a large page's path (made once). */
  body(path: typeof BIG_PAGE_PATH | typeof OVER_CAP_PATH): Buffer {
    let b = this.made.get(path);
    if (!b) {
      b = path === BIG_PAGE_PATH ? bigPageBody('Five megabytes of text', BIG_PAGE_BYTES, BIG_PAGE_END_MARKER, '/after-5mb.html') : bigPageBody('Over the size cap', OVER_CAP_BYTES, OVER_CAP_END_MARKER, '/after-over-cap.html');
      this.made.set(path, b);
    }
    return b;
  }

  respond(method: string, target: string): BigPageResponse {
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: 'text/plain; charset=utf-8', body: 'method not allowed\n' };
    const path = new URL(target, `http://${BIG_PAGE_HOST}`).pathname;
    switch (path) {
      case '/robots.txt':
        return { status: 200, type: 'text/plain; charset=utf-8', body: 'User-agent: *\nAllow: /\n' };
      case '/':
        return small('Large pages', `<p>${words(mulberry32(deriveSeed('big-home')), 60)}</p><ul><li><a href="${BIG_PAGE_PATH}">Five megabytes</a></li><li><a href="${OVER_CAP_PATH}">Over the cap</a></li></ul>`);
      case BIG_PAGE_PATH:
      case OVER_CAP_PATH:
        return { status: 200, type: HTML, body: this.body(path) };
      case '/after-5mb.html':
      case '/after-over-cap.html':
        return small(`After ${path.slice(7, -5)}`, `<p>${words(mulberry32(deriveSeed('big-after', path)), 60)}</p><p><a href="/">Home</a></p>`);
      default:
        return { status: 404, type: HTML, body: '<!DOCTYPE html><html><head><title>Not found</title></head><body><p>Not found.</p></body></html>\n' };
    }
  }
}
