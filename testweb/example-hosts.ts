// The hosts of the worked examples (examples/), opt-in through startTestWeb({ examples: true }):
//
// - shop.examples.test: a small shop whose product pages describe their product in schema.org
//   terms, some in JSON-LD, some in microdata (itemscope/itemprop), one in both, beside pages
//   that describe no product. EXAMPLE_PRODUCTS is what a product extractor should find.
// - topics.examples.test: pages on astronomy and on other topics, every page linking to every
//   other, some on-topic links saying so only in their anchor text, some only in their URL.
//   TOPIC_PAGES says which are about astronomy, for the focused crawl.
//
// Robots.txt of both is a 404 (no rules).

import { escapeHtml } from './render-page.js';

export const EXAMPLES_DOMAIN = 'examples.test';
export const EXAMPLE_SHOP_HOST = `shop.${EXAMPLES_DOMAIN}`;
export const EXAMPLE_TOPICS_HOST = `topics.${EXAMPLES_DOMAIN}`;

export interface ExampleProduct {
  path: string;
  name: string;
  price: number;
  currency: string;
  /** schema.org availability, short form */
  availability: 'InStock' | 'OutOfStock' | 'PreOrder';
  markup: 'json-ld' | 'microdata' | 'both';
}

export const EXAMPLE_PRODUCTS: readonly ExampleProduct[] = Object.freeze([
  { path: '/products/brass-telescope.html', name: 'Brass Telescope', price: 249.5, currency: 'EUR', availability: 'InStock', markup: 'json-ld' },
  { path: '/products/star-atlas.html', name: 'Star Atlas (2nd edition)', price: 39, currency: 'EUR', availability: 'OutOfStock', markup: 'json-ld' },
  { path: '/products/red-torch.html', name: 'Red Night Torch', price: 12.99, currency: 'USD', availability: 'InStock', markup: 'microdata' },
  { path: '/products/tripod.html', name: 'Carbon Tripod', price: 120, currency: 'GBP', availability: 'PreOrder', markup: 'microdata' },
  { path: '/products/eyepiece-set.html', name: 'Eyepiece Set & Case', price: 89.9, currency: 'EUR', availability: 'InStock', markup: 'both' },
]);
/** shop pages that describe no product */
export const SHOP_OTHER_PAGES: readonly string[] = ['/about.html', '/shipping.html'];

export interface TopicPage {
  path: string;
  title: string;
  /** the anchor text every link to it carries */
  anchor: string;
  astronomy: boolean;
}

export const TOPIC_PAGES: readonly TopicPage[] = Object.freeze([
  { path: '/astronomy/telescopes.html', title: 'Choosing a telescope', anchor: 'Choosing a telescope', astronomy: true },
  { path: '/astronomy/planets.html', title: 'The planets', anchor: 'Planets you can see', astronomy: true },
  { path: '/guides/night-sky.html', title: 'The night sky', anchor: 'Astronomy for beginners: the night sky', astronomy: true },
  { path: '/astronomy/comets.html', title: 'Comets', anchor: 'Comets', astronomy: true },
  { path: '/astronomy/galaxies.html', title: 'Galaxies', anchor: 'Galaxies', astronomy: true },
  { path: '/cooking/bread.html', title: 'Baking bread', anchor: 'Baking bread', astronomy: false },
  { path: '/cooking/soup.html', title: 'Winter soups', anchor: 'Winter soups', astronomy: false },
  { path: '/garden/roses.html', title: 'Pruning roses', anchor: 'Pruning roses', astronomy: false },
]);

export interface ExampleResponse {
  status: number;
  type: string;
  body: string;
}

const HTML = 'text/html; charset=utf-8';

function html(title: string, head: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>${head}</head><body><main><h1>${escapeHtml(title)}</h1>\n${body}\n</main></body></html>\n`;
}

const prose = (about: string) =>
  `<p>This page is about ${escapeHtml(about)}. It has a few sentences of text so that it reads like a page people wrote, and so that the extractor finds main text on it.</p>`;

const schemaUrl = (availability: string) => `https://schema.org/${availability}`;

function jsonLd(p: ExampleProduct): string {
  const thing = { '@context': 'https://schema.org', '@type': 'Product', name: p.name, offers: { '@type': 'Offer', price: String(p.price), priceCurrency: p.currency, availability: schemaUrl(p.availability) } };
  return `<script type="application/ld+json">${JSON.stringify(thing).replace(/</g, '\\u003c')}</script>`;
}

function microdata(p: ExampleProduct): string {
  return (
    `<div itemscope itemtype="https://schema.org/Product"><h2 itemprop="name">${escapeHtml(p.name)}</h2>` +
    `<div itemprop="offers" itemscope itemtype="https://schema.org/Offer">` +
    `<span itemprop="priceCurrency" content="${p.currency}">${p.currency}</span> <span itemprop="price" content="${p.price}">${p.price.toFixed(2)}</span>` +
    `<link itemprop="availability" href="${schemaUrl(p.availability)}">${p.availability}</div></div>`
  );
}

export class ExampleHosts {
  readonly hostNames: readonly string[] = [EXAMPLE_SHOP_HOST, EXAMPLE_TOPICS_HOST];

  has(host: string): boolean {
    return host === EXAMPLE_SHOP_HOST || host === EXAMPLE_TOPICS_HOST;
  }

  resolveRules(port: number): string[] {
    return [`*.${EXAMPLES_DOMAIN}=127.0.0.1:${port}`];
  }

  respond(host: string, method: string, target: string): ExampleResponse {
    const path = target.split('?')[0]!;
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: 'text/plain; charset=utf-8', body: 'method not allowed\n' };
    const page = host === EXAMPLE_SHOP_HOST ? this.shop(path) : this.topics(path);
    return page ? { status: 200, type: HTML, body: page } : { status: 404, type: HTML, body: html('Not found', '', '<p>Not found.</p>') };
  }

  private shop(path: string): string | null {
    const nav = `<nav><a href="/">Shop</a> <a href="/about.html">About us</a> <a href="/shipping.html">Shipping</a></nav>`;
    if (path === '/') {
      const list = EXAMPLE_PRODUCTS.map((p) => `<li><a href="${p.path}">${escapeHtml(p.name)}</a></li>`).join('');
      return html('Stargazer shop', '', `${nav}${prose('things for looking at the sky')}<ul>${list}</ul>`);
    }
    if (SHOP_OTHER_PAGES.includes(path)) return html(path === '/about.html' ? 'About us' : 'Shipping', '', `${nav}${prose(path.slice(1, -5))}`);
    const p = EXAMPLE_PRODUCTS.find((x) => x.path === path);
    if (!p) return null;
    const head = p.markup === 'microdata' ? '' : jsonLd(p);
    const body = p.markup === 'json-ld' ? `<p class="price">${p.currency} ${p.price.toFixed(2)}</p>` : microdata(p);
    return html(p.name, head, `${nav}${body}${prose(p.name)}`);
  }

  private topics(path: string): string | null {
    const links = (except: string) =>
      '<ul>' + TOPIC_PAGES.filter((t) => t.path !== except).map((t) => `<li><a href="${t.path}">${escapeHtml(t.anchor)}</a></li>`).join('') + '</ul>';
    if (path === '/') return html('Hobbies', '', `${prose('hobbies of many kinds')}${links('/')}`);
    const t = TOPIC_PAGES.find((x) => x.path === path);
    return t ? html(t.title, '', `${prose(t.title.toLowerCase())}${links(t.path)}`) : null;
  }
}
