// What parsing one sitemap file yields, and the limits it is parsed under.

export type SitemapKind =
  /** `<urlset>`: pages */
  | 'urlset'
  /** `<sitemapindex>`: the entries are child sitemaps (fetching them, and how deep, is the caller's business) */
  | 'index'
  /** a text sitemap: one URL a line */
  | 'text'
  /** not a sitemap, or malformed: see `error`; entries read before the fault are kept */
  | 'invalid';

export interface SitemapEntry {
  /** the absolute URL, as the WHATWG URL parser writes it (entities decoded, whitespace trimmed) */
  url: string;
  /** epoch ms; null when absent, unparsable, or in the future (see `DEFAULT_SITEMAP_LIMITS.lastmodSkewMs`); never after `now` */
  lastmod: number | null;
  /** one of `CHANGEFREQS`, lower case; null when absent or not one of them */
  changefreq: string | null;
  /** 0.0–1.0; null when absent or out of range */
  priority: number | null;
}

export interface SitemapDrop {
  /** the `<loc>` (or line) as written, trimmed, cut to `maxUrlLength` characters; '' when there was none */
  url: string;
  /** one of `DROP_REASONS` */
  reason: string;
}

export interface SitemapParse {
  kind: SitemapKind;
  entries: SitemapEntry[];
  dropped: SitemapDrop[];
  /** why the file is 'invalid' (malformed XML, not a sitemap, corrupt gzip) */
  error?: string;
  /** set when a limit stopped the parse early: what was kept is the file's beginning */
  truncated?: string;
}

export interface SitemapLimits {
  /** URLs read from one file (kept and dropped together): the sitemaps.org limit */
  maxUrls: number;
  /** bytes of one file after decompression: the sitemaps.org limit; a gzip bomb stops inflating here */
  maxBytes: number;
  /** longer URLs are dropped: the sitemaps.org limit */
  maxUrlLength: number;
  /** how far past `now` a timestamped lastmod may lie and still count (clamped to `now`): clock skew */
  lastmodSkewMs: number;
}

export const DEFAULT_SITEMAP_LIMITS: Readonly<SitemapLimits> = Object.freeze({
  maxUrls: 50_000,
  maxBytes: 50 * 1024 * 1024,
  maxUrlLength: 2048,
  // Servers' clocks are NTP-synced to well under a minute; ten minutes forgives a bad one
  // without letting a "lastmod: tomorrow" through.
  lastmodSkewMs: 10 * 60_000,
});

export interface SitemapInput {
  /** the response body as fetched: plain, or gzip (told by its magic bytes, whatever the type says) */
  body: Uint8Array;
  /** the response's Content-Type; only quoted in errors, as servers mislabel sitemaps freely */
  contentType: string | null;
  /** the sitemap's own URL (after redirects): it decides which URLs the file may list */
  url: string;
  /** epoch ms, for judging lastmod values in the future */
  now: number;
  limits?: Partial<SitemapLimits>;
}

/** Why an URL of a sitemap was not kept: stable strings, fit for a metric label or a log row. */
export const DROP_REASONS = Object.freeze({
  noLoc: 'no <loc>',
  notHttp: 'not an absolute http(s) URL',
  tooLong: 'longer than the URL length limit',
  outsidePrefix: "outside the sitemap's path prefix",
  otherSite: "not on the sitemap's site (scheme, host and port)",
});

/** The sitemaps.org values of `<changefreq>`. */
export const CHANGEFREQS: readonly string[] = Object.freeze(['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never']);
