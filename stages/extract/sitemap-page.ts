import { encodeDiscoveredLinks, type DiscoveredLink, type FetchedPage } from '../../schemas/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import type { Emit } from '../../pipeline/stage.js';
import { MESSAGE_SLACK_BYTES, utf8Length } from '../shared/messages/message-budget.js';
import { outcomeEmitFor, urlOutcome } from '../shared/messages/outcome-emit.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { sitemapHintMs } from '../shared/revisits/revisit-policy.js';
import type { ExtractSettings, PageExtraction } from './extraction.js';
import { parseSitemap, type SitemapParse } from './sitemap/index.js';

/** Sitemap indexes followed below the first sitemap: an index, its sitemaps, and one more level. */
export const MAX_SITEMAP_LEVELS = 2;
/** Dropped URLs recorded one row each; past this the sitemap's own row counts the rest. */
export const MAX_DROPPED_ROWS = 1000;

/**
 * A fetched sitemap (a URL fetched as one: from robots.txt's `Sitemap:` lines, or an index's
 * entry): the URLs it lists go to normalize as a job's links (`via: sitemap`, depth 0, with
 * a freshness hint from `changefreq`/`lastmod`), the sitemaps an index lists are fetched as
 * sitemaps in turn (bounded), URLs the sitemap may not list are recorded as filtered with the
 * reason, and the sitemap itself is a `fetched` row that says what it held. No page is stored.
 */
export function extractSitemap(p: FetchedPage, s: ExtractSettings, body = p.body): PageExtraction {
  const parsed = parseSitemap({ body, contentType: p.content_type, url: p.url, now: p.fetch_time });
  const level = p.sitemap_level ?? 0;
  const job = p.job !== undefined ? { job: p.job } : {};
  const messages: Emit[] = [];
  let listed: DiscoveredLink[] = [];
  let refused = 0;
  if (parsed.kind === 'index') {
    if (level < MAX_SITEMAP_LEVELS) listed = parsed.entries.map((e) => ({ url: e.url, fetch_as: 'sitemap' as const }));
    else refused = parsed.entries.length;
  } else {
    listed = parsed.entries.map((e) => {
      const hint = sitemapHintMs(e, p.fetch_time);
      return hint ? { url: e.url, hint_interval_ms: hint } : { url: e.url };
    });
  }
  // a sitemap lists up to 50,000 URLs: as many messages as it takes, each well within one message's room
  const room = Math.floor(Math.max(0, s.maxPayloadBytes - MESSAGE_SLACK_BYTES) / 4);
  for (const [i, chunk] of chunks(listed, room).entries()) {
    messages.push({
      subject: subjectFor('links', p.host, s.partitions),
      msgId: `sitemap-links:${p.fetch_id}:${i}`,
      data: encodeDiscoveredLinks({
        v: 1,
        source_url: p.url,
        depth: 0,
        via: 'sitemap',
        links: chunk,
        ...job,
        ...(parsed.kind === 'index' ? { sitemap_level: level + 1 } : {}),
      }),
    });
  }
  const row = (outcome: 'fetched' | 'filtered', url: string, reason: string, key: string) =>
    outcomeEmitFor(
      s.partitions,
      `sitemap:${stableId(p.fetch_id, key)}`,
      urlOutcome(
        { ...job, url, host: p.host, depth: 0, fetch_id: outcome === 'fetched' ? p.fetch_id : null },
        {
          event_id: stableId('sitemap', p.fetch_id, key),
          outcome,
          reason,
          fetch_status: outcome === 'fetched' ? p.fetch_status : null,
          fetch_time: p.fetch_time,
          duration_ms: outcome === 'fetched' ? p.duration_ms : null,
        },
      ),
    );
  for (const d of parsed.dropped.slice(0, MAX_DROPPED_ROWS)) {
    if (d.url) messages.push(row('filtered', d.url, `sitemap: ${d.reason} (listed by ${p.url})`, `drop ${d.url}`));
  }
  messages.push(row('fetched', p.url, describe(parsed, listed.length, refused, p.truncated), 'self'));
  return {
    messages,
    counts: [{ what: 'sitemaps', outcome: parsed.kind, by: 1 }],
    validators: null,
  };
}

function describe(parsed: SitemapParse, listed: number, refused: number, cutByFetch: boolean): string {
  const parts = [`sitemap (${parsed.kind}): ${listed} ${parsed.kind === 'index' ? 'sitemaps' : 'URLs'} followed`];
  if (parsed.dropped.length > 0) parts.push(`${parsed.dropped.length} dropped (${[...new Set(parsed.dropped.map((d) => d.reason))].join(', ')})`);
  if (refused > 0) parts.push(`${refused} sitemaps not followed: more than ${MAX_SITEMAP_LEVELS} index levels`);
  if (parsed.truncated) parts.push(`cut: ${parsed.truncated}`);
  if (cutByFetch) parts.push('the body was cut at the fetch size limit');
  if (parsed.error) parts.push(`error: ${parsed.error}`);
  return parts.join('; ');
}

/** Links in runs of at most `maxBytes` (approximately, as encoded). */
function chunks(links: readonly DiscoveredLink[], maxBytes: number): DiscoveredLink[][] {
  const out: DiscoveredLink[][] = [];
  let current: DiscoveredLink[] = [];
  let bytes = 0;
  for (const l of links) {
    const size = utf8Length(l.url) + 32;
    if (current.length > 0 && bytes + size > maxBytes) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(l);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}
