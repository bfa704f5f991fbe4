// URL canonicalisation as the test web's expectations assume it: the model's keys, the
// server's lookup and expectedPages() all go through these functions, so a link written
// in any form (relative, ../, #fragment, ?utm_source=, reordered query, :80, upper-case
// host) maps to one resource.

/** Tracking parameters that canonicalisation drops (and that the server ignores). */
export function isTrackingParam(name: string): boolean {
  const n = name.toLowerCase();
  return n.startsWith('utm_') || n === 'gclid' || n === 'fbclid';
}

/** Query string (with '?', or '') without tracking parameters, sorted by key then value. */
export function canonicalQuery(search: string): string {
  if (search === '' || search === '?') return '';
  const params = [...new URLSearchParams(search)].filter(([k]) => !isTrackingParam(k));
  if (params.length === 0) return '';
  params.sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return `?${new URLSearchParams(params).toString()}`;
}

/**
 * Canonical form of an http(s) URL: lower-case host, no default port, no fragment, no
 * tracking parameters, remaining query parameters sorted. null for other schemes
 * (mailto:, javascript:, tel:) and unparsable input.
 */
export function canonicalUrl(input: string | URL): string | null {
  let u: URL;
  try {
    u = typeof input === 'string' ? new URL(input) : input;
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  return `${u.protocol}//${u.host}${u.pathname}${canonicalQuery(u.search)}`;
}

/** The resource key for a request target ("/path?query"), as the server looks it up. */
export function resourceKey(pathAndQuery: string): string {
  const u = new URL(pathAndQuery, 'http://key.invalid');
  return `${u.pathname}${canonicalQuery(u.search)}`;
}

/**
 * Resolves an href the way a browser does: against <base href> when the page has one
 * (itself resolved against the page URL), else against the page URL. Returns the
 * canonical URL, or null when the href is not an http(s) link.
 */
export function resolveLink(pageUrl: string, baseHref: string | undefined, href: string): string | null {
  try {
    const base = baseHref === undefined ? pageUrl : new URL(baseHref, pageUrl);
    return canonicalUrl(new URL(href, base));
  } catch {
    return null;
  }
}

/** Relative reference from a directory ("/a/b/") to a path ("/a/c/d.html" -> "../c/d.html"). */
export function relativePath(fromDir: string, toPath: string): string {
  const fromSegs = fromDir.split('/').slice(1, -1);
  const toSegs = toPath.split('/').slice(1);
  let common = 0;
  while (common < fromSegs.length && common < toSegs.length - 1 && fromSegs[common] === toSegs[common]) common++;
  const rel = '../'.repeat(fromSegs.length - common) + toSegs.slice(common).join('/');
  return rel === '' ? './' : rel;
}

/** Directory part of a path: "/a/b.html" -> "/a/", "/a/" -> "/a/". */
export function dirOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/') + 1);
}
