// Which URLs a sitemap may list (https://www.sitemaps.org/protocol.html#location): those on its
// own scheme, host and port, under the directory it sits in: http://h/a/b/sitemap.xml covers
// http://h/a/b/... and nothing else, so a user who can write files under /~user/ cannot speak
// for the rest of the site. A sitemap index may name child sitemaps anywhere on its own site
// (the protocol's rule for indexes); each child's own directory then bounds what it lists.

import { DROP_REASONS } from './types.js';

export interface SitemapScope {
  /** 'http:' or 'https:' */
  protocol: string;
  /** host[:port] as the URL parser writes it (default ports dropped) */
  host: string;
  /** the sitemap's directory: its path up to and including the last '/' */
  dir: string;
}

/** The scope of a sitemap at `sitemapUrl`, or null when that is not an absolute http(s) URL. */
export function sitemapScope(sitemapUrl: string): SitemapScope | null {
  const u = parseHttpUrl(sitemapUrl);
  if (!u) return null;
  return { protocol: u.protocol, host: u.host, dir: u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1) };
}

export type LocVerdict = { url: string } | { reason: string };

/**
 * Judges one `<loc>` (or text line), already trimmed. `index`: the loc names a child sitemap,
 * which needs only the same site; a page must also be under the sitemap's directory.
 */
export function judgeLoc(loc: string, scope: SitemapScope, index: boolean, maxUrlLength: number): LocVerdict {
  if (loc === '') return { reason: DROP_REASONS.noLoc };
  if (loc.length > maxUrlLength) return { reason: DROP_REASONS.tooLong };
  const u = parseHttpUrl(loc);
  if (!u) return { reason: DROP_REASONS.notHttp };
  // percent-encoding by the parser can lengthen it
  if (u.href.length > maxUrlLength) return { reason: DROP_REASONS.tooLong };
  if (u.protocol !== scope.protocol || u.host !== scope.host) return { reason: DROP_REASONS.otherSite };
  return index || u.pathname.startsWith(scope.dir) ? { url: u.href } : { reason: DROP_REASONS.outsidePrefix };
}

function parseHttpUrl(text: string): URL | null {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return null;
  }
  return u.protocol === 'http:' || u.protocol === 'https:' ? u : null;
}
