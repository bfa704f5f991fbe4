/**
 * URL helpers for HTML extraction: document base URL and link resolution.
 * Pure functions, never throw.
 */

/** URL schemes that can never be fetched by the crawler; links using them are dropped. */
const SKIPPED_PROTOCOLS = new Set(['javascript:', 'mailto:', 'tel:', 'data:', 'vbscript:']);

/** Parses `input` against `base` with the WHATWG parser, returning null instead of throwing. */
export function tryParseUrl(input: string, base?: string): URL | null {
  try {
    return base === undefined ? new URL(input) : new URL(input, base);
  } catch {
    return null;
  }
}

/**
 * The document base URL (HTML spec "frozen base URL"): the first `<base href>` resolved
 * against the page URL, unless it is invalid or uses a `data:`/`javascript:` scheme, in
 * which case the page URL itself. Returns null only when nothing usable exists
 * (invalid page URL and no absolute base href).
 */
export function documentBaseUrl(baseHref: string | null, pageUrl: string): string | null {
  const page = tryParseUrl(pageUrl);
  if (baseHref !== null) {
    const base = page ? tryParseUrl(baseHref, page.href) : tryParseUrl(baseHref);
    if (base && base.protocol !== 'data:' && base.protocol !== 'javascript:') return base.href;
  }
  return page ? page.href : null;
}

/**
 * Resolves a link `href` against the document base URL. Returns null for empty hrefs,
 * unparseable ones and non-fetchable schemes (javascript:, mailto:, tel:, data:, vbscript:).
 * The fragment is kept.
 */
export function resolveHref(href: string, base: string | null): string | null {
  // The URL parser strips leading/trailing C0 controls and spaces; mirror that for the emptiness check.
  if (href.length === 0 || href.trim().length === 0) return null;
  const url = base === null ? tryParseUrl(href) : tryParseUrl(href, base);
  if (url === null || SKIPPED_PROTOCOLS.has(url.protocol)) return null;
  return url.href;
}

/** Resolves a canonical-link href; only http(s) results are accepted. */
export function resolveCanonical(href: string, base: string | null): string | null {
  const abs = resolveHref(href, base);
  if (abs === null) return null;
  return abs.startsWith('http://') || abs.startsWith('https://') ? abs : null;
}
