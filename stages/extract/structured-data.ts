/**
 * Structured data in a page's markup: JSON-LD blocks, OpenGraph/Twitter card meta tags and
 * the meta refresh target. Pure helpers, never throw: bad JSON-LD is skipped and counted.
 */

/** Caps that keep one page's structured data bounded whatever the markup holds. */
export const MAX_JSON_LD_BLOCKS = 50;
export const MAX_JSON_LD_CHARS = 256 * 1024;
/**
 * Deeper JSON-LD is rejected: JSON.parse copes with any depth, but encoding the message
 * (msgpack, JSON.stringify) recurses and would overflow the stack. Real blocks nest < 10.
 */
export const MAX_JSON_LD_DEPTH = 32;
export const MAX_OPENGRAPH_KEYS = 100;
export const MAX_OPENGRAPH_VALUE = 2_000;

export interface JsonLdState {
  blocks: unknown[];
  /** blocks that did not parse as JSON (or were past the caps) */
  invalid: number;
}

/**
 * Adds one `<script type="application/ld+json">` body. A top-level array is spread, and an
 * `@graph` is expanded into its nodes (each keeping the block's `@context`), so every
 * element of the result is one schema.org thing and `json_ld->'$[*]."@type"'` lists them.
 */
export function addJsonLd(raw: string, into: JsonLdState): void {
  if (raw.length > MAX_JSON_LD_CHARS || into.blocks.length >= MAX_JSON_LD_BLOCKS) {
    into.invalid++;
    return;
  }
  let parsed: unknown;
  try {
    // CDATA wrappers and HTML comments around JSON-LD are common in CMS output
    parsed = JSON.parse(raw.trim().replace(/^(?:<!--|\/\/\s*<!\[CDATA\[)|(?:-->|\/\/\s*\]\]>)$/g, ''));
  } catch {
    into.invalid++;
    return;
  }
  if (deeperThan(parsed, MAX_JSON_LD_DEPTH)) {
    into.invalid++;
    return;
  }
  for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      into.invalid++;
      continue;
    }
    const obj = item as Record<string, unknown>;
    const graph = obj['@graph'];
    if (Array.isArray(graph)) {
      const context = obj['@context'];
      for (const node of graph) {
        if (node === null || typeof node !== 'object' || Array.isArray(node)) continue;
        const withContext = context === undefined || '@context' in node ? node : { '@context': context, ...node };
        if (into.blocks.length < MAX_JSON_LD_BLOCKS) into.blocks.push(withContext);
      }
    } else if (into.blocks.length < MAX_JSON_LD_BLOCKS) {
      into.blocks.push(obj);
    }
  }
}

/** Whether parsed JSON nests deeper than `limit` (an explicit stack: the input may be arbitrarily deep). */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** The key of an OpenGraph / Twitter card meta tag (`og:title`, `twitter:card`, `article:author`), else null. */
export function openGraphKey(property: string | null, name: string | null): string | null {
  for (const raw of [property, name]) {
    if (raw === null) continue;
    const key = raw.trim().toLowerCase();
    if (/^(?:og|twitter|article|product|book|profile|music|video|fb):[a-z0-9_:.-]{1,100}$/.test(key)) return key;
  }
  return null;
}

/**
 * The target of `<meta http-equiv="refresh" content="5; url=/next">` (the HTML spec's
 * "shared declarative refresh steps", simplified): null when there is no URL part.
 */
export function refreshTarget(content: string): string | null {
  const m = /^\s*\d*(?:\.[\d.]*)?\s*[;,]?\s*(?:url\s*=\s*)?(.*)$/is.exec(content);
  if (m === null) return null;
  let url = m[1]!.trim();
  if (url.length === 0) return null;
  const quote = url[0];
  if (quote === '"' || quote === "'") {
    const end = url.indexOf(quote, 1);
    url = end < 0 ? url.slice(1) : url.slice(1, end);
  }
  return url.trim() || null;
}
