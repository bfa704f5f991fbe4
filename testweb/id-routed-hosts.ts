// ID-routed sites of the test web: many pages under one URL pattern, each with text of its
// own, the way a shop or a forum serves its records. A crawl must fetch them all (within the
// host's budget) although their URLs differ only in a number, which is also how a crawl trap's
// URLs look; what tells them apart is that every page is new.
//
// - shop.ids.test: `products` product pages `/product/<id>` (5,000 by default), listed 100
//   to a page on category pages `/category/<n>` that the home page links; each product links
//   four related products, its category and home.
// - forum.ids.test: `topics` topic pages `viewtopic.php?t=<id>` (1,000 by default) in a few
//   forums `viewforum.php?f=<n>`, listed 50 to a page (`&start=<k>`, every page of a forum
//   linked from each of its pages); each topic links three similar topics and its forum.
//
// The ids are spread out (not 1, 2, 3, ...) so that nothing but the links leads to them; any
// other id is a 404. Pages are small (well under 1 KB) so that thousands are quick to crawl,
// and have 40 to 60 words of text, enough to be fingerprinted for near-duplicates.

import { deriveSeed, mulberry32, randInt, type Rng } from './prng.js';
import { englishWords as words, linkList as links, plainPage as page } from './plain-pages.js';

export const ID_ROUTED_DOMAIN = 'ids.test';
export const SHOP_HOST = `shop.${ID_ROUTED_DOMAIN}`;
export const FORUM_HOST = `forum.${ID_ROUTED_DOMAIN}`;
export const ID_ROUTED_HOSTS: readonly string[] = Object.freeze([SHOP_HOST, FORUM_HOST]);

export interface IdRoutedHostsOptions {
  /** product pages of shop.ids.test (default 5,000) */
  products?: number;
  /** topic pages of forum.ids.test (default 1,000) */
  topics?: number;
}
export const ID_ROUTED_DEFAULTS: Required<IdRoutedHostsOptions> = Object.freeze({ products: 5_000, topics: 1_000 });

const PRODUCTS_PER_CATEGORY = 100;
const TOPICS_PER_FORUM_PAGE = 50;
const FORUMS = 4;
const RELATED_PRODUCTS = 4;
const SIMILAR_TOPICS = 3;

/** The k-th product's id (k from 0): spread out, so ids cannot be guessed from each other. */
export const productId = (k: number) => 100_003 + 7 * k;
/** The k-th topic's id (k from 0). */
export const topicId = (k: number) => 2_001 + 3 * k;

export interface IdRoutedResponse {
  status: number;
  type: string;
  body: string;
}

const HTML = 'text/html; charset=utf-8';
const ROBOTS: IdRoutedResponse = { status: 200, type: 'text/plain; charset=utf-8', body: 'User-agent: *\nAllow: /\n' };


/** `n` distinct indexes in [0, size) other than `self`, chosen by `rng`. */
function others(rng: Rng, size: number, self: number, n: number): number[] {
  const chosen = new Set<number>();
  while (chosen.size < Math.min(n, size - 1)) {
    const k = randInt(rng, 0, size - 1);
    if (k !== self) chosen.add(k);
  }
  return [...chosen];
}

export class IdRoutedHosts {
  readonly hostNames = ID_ROUTED_HOSTS;
  readonly options: Required<IdRoutedHostsOptions>;
  private readonly productIndex = new Map<number, number>();
  private readonly topicIndex = new Map<number, number>();

  constructor(opts: IdRoutedHostsOptions | boolean = {}) {
    this.options = { ...ID_ROUTED_DEFAULTS, ...(typeof opts === 'object' ? opts : {}) };
    for (let k = 0; k < this.options.products; k++) this.productIndex.set(productId(k), k);
    for (let k = 0; k < this.options.topics; k++) this.topicIndex.set(topicId(k), k);
  }

  has(host: string): boolean {
    return ID_ROUTED_HOSTS.includes(host);
  }

  resolveRules(port: number): string[] {
    return [`*.${ID_ROUTED_DOMAIN}=127.0.0.1:${port}`];
  }

  seedUrls(): string[] {
    return ID_ROUTED_HOSTS.map((h) => `http://${h}/`);
  }

  /** Every page a complete crawl stores (`http://host/path` URLs): homes, listings and records. */
  expectedUrls(): string[] {
    const shop = [`http://${SHOP_HOST}/`, ...this.categoryPaths().map((p) => `http://${SHOP_HOST}${p}`), ...this.productUrls()];
    const forum = [`http://${FORUM_HOST}/`, ...this.forumPagePaths().map((p) => `http://${FORUM_HOST}${p}`), ...this.topicUrls()];
    return [...shop, ...forum];
  }

  productUrls(): string[] {
    return Array.from({ length: this.options.products }, (_, k) => `http://${SHOP_HOST}/product/${productId(k)}`);
  }

  topicUrls(): string[] {
    return Array.from({ length: this.options.topics }, (_, k) => `http://${FORUM_HOST}/viewtopic.php?t=${topicId(k)}`);
  }

  respond(host: string, method: string, target: string): IdRoutedResponse {
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: 'text/plain; charset=utf-8', body: 'method not allowed\n' };
    const url = new URL(target, `http://${host}`);
    if (url.pathname === '/robots.txt') return ROBOTS;
    const r = host === SHOP_HOST ? this.shop(url) : host === FORUM_HOST ? this.forum(url) : null;
    return r ?? { status: 404, type: HTML, body: page('Not found', '<p>Not found.</p>') };
  }

  private categories(): number {
    return Math.ceil(this.options.products / PRODUCTS_PER_CATEGORY);
  }

  private categoryPaths(): string[] {
    return Array.from({ length: this.categories() }, (_, c) => `/category/${c + 1}`);
  }

  private shop(url: URL): IdRoutedResponse | null {
    if (url.search !== '') return null;
    if (url.pathname === '/') {
      return ok(page('Shop', `<p>Everything we sell, by category.</p>${links(this.categoryPaths().map((p, c) => [p, `Category ${c + 1}`]))}`));
    }
    const category = /^\/category\/(\d+)$/.exec(url.pathname);
    if (category) {
      const c = Number(category[1]) - 1;
      if (c < 0 || c >= this.categories() || String(c + 1) !== category[1]) return null;
      const first = c * PRODUCTS_PER_CATEGORY;
      const last = Math.min(this.options.products, first + PRODUCTS_PER_CATEGORY);
      const items = Array.from({ length: last - first }, (_, i): [string, string] => [`/product/${productId(first + i)}`, `Product ${productId(first + i)}`]);
      return ok(page(`Category ${c + 1}`, `${links(items)}${links([['/', 'Home']])}`));
    }
    const product = /^\/product\/(\d+)$/.exec(url.pathname);
    const k = product ? this.productIndex.get(Number(product[1])) : undefined;
    if (k === undefined || String(productId(k)) !== product![1]) return null;
    const rng = mulberry32(deriveSeed('product', k));
    const related = others(rng, this.options.products, k, RELATED_PRODUCTS).map((j): [string, string] => [`/product/${productId(j)}`, `Related product ${productId(j)}`]);
    const text = `<p>${words(rng, randInt(rng, 40, 60))}</p><p>Price: ${randInt(rng, 1, 999)}.${String(randInt(rng, 0, 99)).padStart(2, '0')} EUR</p>`;
    const up: Array<[string, string]> = [[`/category/${Math.floor(k / PRODUCTS_PER_CATEGORY) + 1}`, 'Category'], ['/', 'Home']];
    return ok(page(`Product ${productId(k)}`, `${text}${links([...related, ...up])}`));
  }

  /** Topics of forum f (from 0): every FORUMS-th topic, starting at f. */
  private topicsOf(f: number): number[] {
    const out: number[] = [];
    for (let k = f; k < this.options.topics; k += FORUMS) out.push(k);
    return out;
  }

  private forumPageCount(f: number): number {
    return Math.max(1, Math.ceil(this.topicsOf(f).length / TOPICS_PER_FORUM_PAGE));
  }

  /** A forum's page as its links write it: the first without `start`, the rest with it. */
  private forumPagePath(f: number, p: number): string {
    return p === 0 ? `/viewforum.php?f=${f + 1}` : `/viewforum.php?f=${f + 1}&start=${p * TOPICS_PER_FORUM_PAGE}`;
  }

  private forumPagePaths(): string[] {
    const out: string[] = [];
    for (let f = 0; f < FORUMS; f++) for (let p = 0; p < this.forumPageCount(f); p++) out.push(this.forumPagePath(f, p));
    return out;
  }

  private forum(url: URL): IdRoutedResponse | null {
    if (url.pathname === '/' && url.search === '') {
      return ok(page('Forum', `<p>Our forums.</p>${links(Array.from({ length: FORUMS }, (_, f) => [this.forumPagePath(f, 0), `Forum ${f + 1}`]))}`));
    }
    if (url.pathname === '/viewforum.php') {
      const f = Number(url.searchParams.get('f')) - 1;
      const start = Number(url.searchParams.get('start') ?? '0');
      const p = start / TOPICS_PER_FORUM_PAGE;
      if (!Number.isInteger(f) || f < 0 || f >= FORUMS || !Number.isInteger(p) || p < 0 || p >= this.forumPageCount(f)) return null;
      if (url.search !== this.forumPagePath(f, p).slice('/viewforum.php'.length)) return null;
      const topics = this.topicsOf(f).slice(p * TOPICS_PER_FORUM_PAGE, (p + 1) * TOPICS_PER_FORUM_PAGE);
      const items = topics.map((k): [string, string] => [`/viewtopic.php?t=${topicId(k)}`, `Topic ${topicId(k)}`]);
      const pages = Array.from({ length: this.forumPageCount(f) }, (_, q): [string, string] => [this.forumPagePath(f, q), `Page ${q + 1}`]);
      return ok(page(`Forum ${f + 1}, page ${p + 1}`, `${links(items)}${links(pages)}`));
    }
    if (url.pathname === '/viewtopic.php') {
      const t = url.searchParams.get('t') ?? '';
      const k = this.topicIndex.get(Number(t));
      if (k === undefined || url.search !== `?t=${topicId(k)}`) return null;
      const rng = mulberry32(deriveSeed('topic', k));
      const similar = others(rng, this.options.topics, k, SIMILAR_TOPICS).map((j): [string, string] => [`/viewtopic.php?t=${topicId(j)}`, `Similar topic ${topicId(j)}`]);
      const posts = `<p>${words(rng, randInt(rng, 20, 30))}</p><p>Reply: ${words(rng, randInt(rng, 20, 30))}</p>`;
      return ok(page(`Topic ${topicId(k)}`, `${posts}${links([...similar, [this.forumPagePath(k % FORUMS, 0), 'Back to the forum']])}`));
    }
    return null;
  }
}

const ok = (body: string): IdRoutedResponse => ({ status: 200, type: HTML, body });
