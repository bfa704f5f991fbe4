// Sitemaps: parsing one fetched sitemap file into the URLs it lists. The public face of the folder.

export { parseSitemap } from './parse-sitemap.js';
export { parseLastmod, parseChangefreq, parsePriority, MAX_ZONE_AHEAD_MS } from './entry-fields.js';
export { sitemapScope, judgeLoc } from './url-scope.js';
export type { SitemapScope, LocVerdict } from './url-scope.js';
export { DEFAULT_SITEMAP_LIMITS, DROP_REASONS, CHANGEFREQS } from './types.js';
export type { SitemapKind, SitemapEntry, SitemapDrop, SitemapParse, SitemapLimits, SitemapInput } from './types.js';
