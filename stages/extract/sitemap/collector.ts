// Collects the entries of one sitemap file, whatever its format: judges each URL, counts it
// against the file's URL limit, and stops the parse (by throwing StopParsing) past the limit.

import { parseChangefreq, parseLastmod, parsePriority } from './entry-fields.js';
import type { SitemapDrop, SitemapEntry, SitemapLimits } from './types.js';
import { judgeLoc, type SitemapScope } from './url-scope.js';

/** An entry's raw text, as the file has it. */
export interface RawEntry {
  loc: string;
  lastmod?: string;
  changefreq?: string;
  priority?: string;
}

/** Thrown out of a parser's callbacks to end the parse early; caught by parseSitemap. */
export class StopParsing extends Error {
  constructor(readonly why: 'limit' | 'error') {
    super(`sitemap parse stopped (${why})`);
    this.name = 'StopParsing';
  }
}

export class EntryCollector {
  readonly entries: SitemapEntry[] = [];
  readonly dropped: SitemapDrop[] = [];
  truncated: string | undefined;
  /** index: the entries are child sitemaps (they need only the same site, and have no changefreq or priority) */
  index = false;

  constructor(
    private readonly scope: SitemapScope,
    private readonly limits: SitemapLimits,
    private readonly now: number,
  ) {}

  /** Adds one entry, kept or dropped; throws StopParsing('limit') when the file has more URLs than the limit. */
  add(raw: RawEntry): void {
    if (this.entries.length + this.dropped.length >= this.limits.maxUrls) {
      this.truncated = `more than ${this.limits.maxUrls} URLs: kept the first ${this.limits.maxUrls}`;
      throw new StopParsing('limit');
    }
    const loc = raw.loc.trim();
    const verdict = judgeLoc(loc, this.scope, this.index, this.limits.maxUrlLength);
    if ('reason' in verdict) {
      this.dropped.push({ url: loc.slice(0, this.limits.maxUrlLength), reason: verdict.reason });
      return;
    }
    this.entries.push({
      url: verdict.url,
      lastmod: raw.lastmod === undefined ? null : parseLastmod(raw.lastmod, this.now, this.limits.lastmodSkewMs),
      changefreq: raw.changefreq === undefined || this.index ? null : parseChangefreq(raw.changefreq),
      priority: raw.priority === undefined || this.index ? null : parsePriority(raw.priority),
    });
  }
}
