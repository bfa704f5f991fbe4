// The stage: schema.org Products of each fetched HTML page, from JSON-LD and microdata, into
// the `products` table (one row per product, the same product described twice counted once).
import { parse } from 'parse5';
import { defineStage, emit } from 'jetstream-crawler';

const PRODUCT = /^https?:\/\/schema\.org\/Product$/;

export default defineStage({
  name: 'products',
  input: 'fetched',
  table: { name: 'products', columns: { name: 'VARCHAR', price: 'DOUBLE', currency: 'VARCHAR', availability: 'VARCHAR' } },
  handle({ message }) {
    // the page's charset when the decoder knows it (the crawler stores bodies as sent)
    let decoder;
    try {
      decoder = new TextDecoder(message.charset ?? 'utf-8');
    } catch {
      decoder = new TextDecoder('utf-8');
    }
    const html = decoder.decode(message.body);
    const doc = parse(html);
    const found = [...fromJsonLd(doc), ...fromMicrodata(doc)];
    const seen = new Set();
    const rows = found.filter((p) => p.name && !seen.has(p.name + '|' + p.price) && seen.add(p.name + '|' + p.price));
    return emit({ rows });
  },
});

/** Every element of the tree, depth first. */
function* elements(node) {
  for (const child of node.childNodes ?? []) {
    if (child.tagName) yield child;
    yield* elements(child.tagName === 'template' ? child.content : child);
  }
}

const attr = (el, name) => el.attrs?.find((a) => a.name === name)?.value;
const text = (node) => (node.nodeName === '#text' ? node.value : (node.childNodes ?? []).map(text).join(''));

/** schema.org availability as its short name: https://schema.org/InStock -> InStock. */
const shortAvailability = (v) => (typeof v === 'string' && v ? v.replace(/^https?:\/\/schema\.org\//, '') : null);
const number = (v) => (v === undefined || v === null || v === '' || Number.isNaN(Number(v)) ? null : Number(v));

function product(name, offer) {
  return { name: name ?? null, price: number(offer?.price), currency: offer?.priceCurrency ?? null, availability: shortAvailability(offer?.availability) };
}

function* fromJsonLd(doc) {
  for (const el of elements(doc)) {
    if (el.tagName !== 'script' || attr(el, 'type') !== 'application/ld+json') continue;
    let data;
    try {
      data = JSON.parse(text(el));
    } catch {
      continue; // a page's broken JSON-LD is the page's problem, not a reason to fail
    }
    const things = Array.isArray(data) ? data : data['@graph'] ?? [data];
    for (const t of things) {
      const types = [].concat(t?.['@type'] ?? []);
      if (!types.includes('Product')) continue;
      yield product(t.name, [].concat(t.offers ?? [])[0]);
    }
  }
}

/** The itemprop values of one itemscope, not descending into nested scopes (their own items). */
function props(scope) {
  const out = {};
  const walk = (node) => {
    for (const el of node.childNodes ?? []) {
      if (!el.tagName) continue;
      const name = attr(el, 'itemprop');
      if (name) out[name] ??= el.attrs.some((a) => a.name === 'itemscope') ? props(el) : attr(el, 'content') ?? attr(el, 'href') ?? text(el).trim();
      if (!el.attrs.some((a) => a.name === 'itemscope')) walk(el);
    }
  };
  walk(scope);
  return out;
}

function* fromMicrodata(doc) {
  for (const el of elements(doc)) {
    if (!el.attrs.some((a) => a.name === 'itemscope') || !PRODUCT.test(attr(el, 'itemtype') ?? '')) continue;
    const p = props(el);
    yield product(p.name, typeof p.offers === 'object' ? p.offers : null);
  }
}
