// The scope hosts of the test web, opt-in through startTestWeb({ scopeHosts }): a few small
// sites on different registrable domains that link to each other, for `--scope`:
//
// - moved-seed.test/ answers 301 to www.scope-home.test/: a seed that moved to another
//   registrable domain (example.com -> www.example.co.uk), whose scope goes with it.
// - www.scope-home.test: / links to /docs/guide.html, /about.html, blog.scope-home.test/ (the
//   same registrable domain, another host) and www.scope-away.test/ (another registrable domain).
// - blog.scope-home.test: / and /post.html.
// - www.scope-away.test: / and /far.html, which links back home.
// Every host allows everything in robots.txt; every page is a few hundred bytes.

export const SCOPE_SEED_URL = 'http://moved-seed.test/';

const HTML = 'text/html; charset=utf-8';

/** Each page's title and links, by host and path. */
const PAGES: Record<string, Record<string, { title: string; links: string[] }>> = {
  'www.scope-home.test': {
    '/': { title: 'Scope home', links: ['/docs/guide.html', '/about.html', 'http://blog.scope-home.test/', 'http://www.scope-away.test/'] },
    '/docs/guide.html': { title: 'The guide', links: ['/'] },
    '/about.html': { title: 'About the home site', links: ['/'] },
  },
  'blog.scope-home.test': {
    '/': { title: 'Scope blog', links: ['/post.html'] },
    '/post.html': { title: 'A post', links: ['http://www.scope-home.test/'] },
  },
  'www.scope-away.test': {
    '/': { title: 'Far away', links: ['/far.html'] },
    '/far.html': { title: 'Further away', links: ['http://www.scope-home.test/'] },
  },
};

export interface ScopeResponse {
  status: number;
  type: string;
  body: string;
  headers?: Record<string, string>;
}

export class ScopeHosts {
  readonly hostNames: readonly string[] = Object.freeze(['moved-seed.test', ...Object.keys(PAGES)]);

  has(host: string): boolean {
    return this.hostNames.includes(host);
  }

  resolveRules(port: number): string[] {
    return this.hostNames.map((h) => `${h}=127.0.0.1:${port}`);
  }

  /** Every page a crawl of `hosts` stores, as URLs. */
  pageUrls(hosts: readonly string[] = Object.keys(PAGES)): string[] {
    return hosts.flatMap((h) => Object.keys(PAGES[h] ?? {}).map((p) => `http://${h}${p}`)).sort();
  }

  respond(host: string, method: string, target: string): ScopeResponse {
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: 'text/plain; charset=utf-8', body: 'method not allowed\n' };
    const path = new URL(target, `http://${host}`).pathname;
    if (path === '/robots.txt') return { status: 200, type: 'text/plain; charset=utf-8', body: 'User-agent: *\nAllow: /\n' };
    if (host === 'moved-seed.test') return { status: 301, type: HTML, body: '<!DOCTYPE html><title>Moved</title>\n', headers: { location: 'http://www.scope-home.test/' } };
    const page = PAGES[host]?.[path];
    if (!page) return { status: 404, type: HTML, body: '<!DOCTYPE html><html><head><title>Not found</title></head><body><p>Not found.</p></body></html>\n' };
    const links = page.links.map((l) => `<li><a href="${l}">${l}</a></li>`).join('');
    return { status: 200, type: HTML, body: `<!DOCTYPE html><html lang="en"><head><title>${page.title}</title></head><body><h1>${page.title}</h1><p>A small page of ${host}, for the crawl's scope.</p><ul>${links}</ul></body></html>\n` };
  }
}
