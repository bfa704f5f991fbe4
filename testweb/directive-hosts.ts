// The host of robots directives, opt-in through startTestWeb({ directives: true }):
// www.directives.test, whose pages say noindex and nofollow in the ways real sites do: the
// X-Robots-Tag header (plain, `none`, addressed to the test crawler's token, addressed to
// another bot only, two headers, another bot's line then everyone's, unavailable_after), <meta name="TestCrawler">, a meta for
// another bot, header and meta together, and a PDF whose header says nofollow.
//
// Each page has a text marker of its own and links to one leaf page, /after/<slug>.html,
// linked from nowhere else: so whether a crawl kept a page's text shows in its stored text,
// and whether it followed the page's links shows in whether the leaf was requested.
// DIRECTIVE_PAGES says what a crawler obeying Google's robots meta tag and X-Robots-Tag
// rules as `testcrawler` makes of each page. Its robots.txt is a 404 (no rules).

import { escapeHtml } from './render-page.js';
import { SPECIAL_AGENT_TOKEN } from './robots-rules.js';

export const DIRECTIVES_DOMAIN = 'directives.test';
export const DIRECTIVES_HOST = `www.${DIRECTIVES_DOMAIN}`;
export const DIRECTIVES_SEED_URL = `http://${DIRECTIVES_HOST}/`;

export interface DirectivePage {
  path: string;
  /** X-Robots-Tag headers sent, one header each */
  xRobotsTag: readonly string[];
  /** meta tags in the head (HTML pages) */
  meta: string;
  /** a PDF (its links harvested, never stored) rather than an HTML page */
  pdf: boolean;
  /** what they mean for testcrawler */
  noindex: boolean;
  nofollow: boolean;
}

const page = (path: string, over: Partial<Omit<DirectivePage, 'path'>>): DirectivePage => ({ path, xRobotsTag: [], meta: '', pdf: false, noindex: false, nofollow: false, ...over });
/** the test crawler's token (SPECIAL_AGENT_TOKEN) in the mixed case the site hosts' robots.txt writes it: names match whatever their case */
const TOKEN = 'TestCrawler';
if (TOKEN.toLowerCase() !== SPECIAL_AGENT_TOKEN) throw new Error('directive-hosts: TOKEN is not the test crawler\'s token');

export const DIRECTIVE_PAGES: readonly DirectivePage[] = Object.freeze([
  page('/xrt-noindex.html', { xRobotsTag: ['noindex'], noindex: true }),
  page('/xrt-nofollow.html', { xRobotsTag: ['nofollow'], nofollow: true }),
  page('/xrt-none.html', { xRobotsTag: ['none'], noindex: true, nofollow: true }),
  page('/xrt-ours.html', { xRobotsTag: [`${TOKEN}: noindex, nofollow`], noindex: true, nofollow: true }),
  page('/xrt-other-bot.html', { xRobotsTag: ['otherbot: noindex, nofollow'] }),
  // joined by the client as "googlebot: noindex, TestCrawler: nofollow"
  page('/xrt-two-headers.html', { xRobotsTag: ['googlebot: noindex', `${TOKEN}: nofollow`], nofollow: true }),
  // another bot's line, then one for everyone: the noindex is ours (each line read on its own)
  page('/xrt-other-then-all.html', { xRobotsTag: ['otherbot: nofollow', 'noindex'], noindex: true }),
  page('/xrt-unavailable.html', { xRobotsTag: ['unavailable_after: 25 Jun 2010 15:00:00 PST'], noindex: true }),
  page('/meta-ours.html', { meta: `<meta name="${TOKEN}" content="noindex, nofollow">`, noindex: true, nofollow: true }),
  page('/meta-other-bot.html', { meta: '<meta name="otherbot" content="noindex, nofollow">' }),
  // the header's noindex is more restrictive than the meta's index
  page('/combined.html', { xRobotsTag: ['noindex'], meta: '<meta name="robots" content="index, follow">', noindex: true }),
  page('/report.pdf', { xRobotsTag: ['nofollow'], pdf: true, nofollow: true }),
  page('/plain.pdf', { pdf: true }),
]);

const slugOf = (path: string) => path.slice(1).replace(/\.(html|pdf)$/, '').replace(/\./g, '-');
/** The leaf page only `path` links to. */
export const leafOf = (path: string) => `/after/${slugOf(path)}.html`;
/** Words in the text of `path` and nowhere else. */
export const textMarkerOf = (path: string) => `directive-marker-${slugOf(path)}`;

export interface DirectiveResponse {
  status: number;
  type: string;
  body: string | Buffer;
  /** x-robots-tag as several headers: set with res.setHeader, which sends an array as one line each */
  headers: Record<string, string | string[]>;
}

const HTML = 'text/html; charset=utf-8';

function html(title: string, head: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><title>${escapeHtml(title)}</title>${head}</head><body><main><h1>${escapeHtml(title)}</h1>\n${body}\n</main></body></html>\n`;
}

/** A paragraph long enough to be main text, with the page's marker in it. */
function prose(marker: string): string {
  return `<p>This page carries robots directives. Its own words are ${marker}, so a stored text shows whether the crawler kept it, and the link below shows whether it followed its links.</p>`;
}

/** A PDF whose one link annotation points at `url` (what the crawler's link harvest reads). */
function pdfLinking(url: string): Buffer {
  return Buffer.from(`%PDF-1.4\n1 0 obj << /Type /Annot /Subtype /Link /A << /S /URI /URI (${url}) >> >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n`, 'latin1');
}

export class DirectiveHosts {
  readonly hostNames: readonly string[] = [DIRECTIVES_HOST];

  has(host: string): boolean {
    return host === DIRECTIVES_HOST;
  }

  resolveRules(port: number): string[] {
    return [`*.${DIRECTIVES_DOMAIN}=127.0.0.1:${port}`];
  }

  respond(method: string, target: string): DirectiveResponse {
    const path = target.split('?')[0]!;
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: 'text/plain; charset=utf-8', body: 'method not allowed\n', headers: { allow: 'GET, HEAD' } };
    if (path === '/') {
      const links = DIRECTIVE_PAGES.map((p) => `<li><a href="${p.path}">${escapeHtml(p.path)}</a></li>`).join('');
      return { status: 200, type: HTML, body: html('Robots directives', '', `${prose(textMarkerOf('/home'))}<ul>${links}</ul>`), headers: {} };
    }
    const p = DIRECTIVE_PAGES.find((d) => d.path === path);
    if (p) {
      const headers: Record<string, string[]> = p.xRobotsTag.length > 0 ? { 'x-robots-tag': [...p.xRobotsTag] } : {};
      if (p.pdf) return { status: 200, type: 'application/pdf', body: pdfLinking(`http://${DIRECTIVES_HOST}${leafOf(p.path)}`), headers };
      const body = `${prose(textMarkerOf(p.path))}<p><a href="${leafOf(p.path)}">Where this page leads</a></p>`;
      return { status: 200, type: HTML, body: html(`Directives: ${p.path}`, p.meta, body), headers };
    }
    const leaf = DIRECTIVE_PAGES.find((d) => leafOf(d.path) === path);
    if (leaf) return { status: 200, type: HTML, body: html(`After ${leaf.path}`, '', prose(textMarkerOf(path))), headers: {} };
    return { status: 404, type: HTML, body: html('Not found', '', '<p>Not found.</p>'), headers: {} };
  }
}
