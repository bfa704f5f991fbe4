import type { FinalPage, UrlOutcome } from '../../schemas/index.js';
import type { FetchLogRow, LinkRow, PageRow } from '../../schemas/output-tables.js';

export interface RowBatch {
  pages: PageRow[];
  links: LinkRow[];
  fetch_log: FetchLogRow[];
}

export const emptyBatch = (): RowBatch => ({ pages: [], links: [], fetch_log: [] });

/** The rows a batch counts towards its size: pages and fetch_log rows (a page's links ride along). */
export const rowCount = (b: RowBatch): number => b.pages.length + b.fetch_log.length;

/** The rows of many messages as one batch, in message order. */
export function mergeRows(batches: readonly RowBatch[]): RowBatch {
  const out = emptyBatch();
  for (const b of batches) {
    out.pages.push(...b.pages);
    out.links.push(...b.links);
    out.fetch_log.push(...b.fetch_log);
  }
  return out;
}

/** The rows one stored page becomes: a `pages` row, its `links`, and its `fetch_log` row. */
export function pageRows(p: FinalPage, crawlId: string): RowBatch {
  return {
    pages: [
      {
        fetch_id: p.fetch_id,
        url: p.url,
        url_host_name: p.host,
        url_host_registered_domain: p.domain,
        depth: p.depth,
        fetch_time: p.fetch_time,
        fetch_status: p.fetch_status,
        content_mime_type: p.content_type,
        content_charset: p.charset,
        content_length: p.content_length,
        content_digest: p.content_digest,
        content_truncated: p.truncated,
        title: p.title,
        text: p.text,
        description: p.description,
        content_languages: p.language,
        canonical_url: p.canonical_url,
        simhash: p.simhash,
        near_duplicate_of: p.near_duplicate_of,
        noindex: p.noindex,
        nofollow: p.nofollow,
        outlinks: p.links.length,
        duration_ms: p.duration_ms,
        redirected_from: p.redirect_chain?.[0] ?? null,
        redirect_chain: p.redirect_chain?.length ? JSON.stringify(p.redirect_chain) : null,
        crawl_id: crawlId,
        text_full: p.text_full ?? '',
        // JSON columns are NULL when the page has none, so `WHERE json_ld IS NOT NULL` finds the pages that do
        headings: jsonOrNull(p.headings),
        opengraph: p.opengraph && Object.keys(p.opengraph).length > 0 ? JSON.stringify(p.opengraph) : null,
        json_ld: jsonOrNull(p.json_ld),
        hreflang: jsonOrNull(p.hreflang),
        // NULL for pages extracted before these fields existed
        text_source: p.text_source ?? null,
        author: p.author ?? null,
        published_at: p.published_at ?? null,
        site_name: p.site_name ?? null,
        rendered: p.rendered === true,
        robots_directives: p.robots_directives ?? null,
        importance: p.importance ?? 0,
        text_markdown: p.text_markdown ?? null,
      },
    ],
    links: p.links.map((l) => ({ fetch_id: p.fetch_id, src_url: p.url, dst_url: l.url, anchor_text: l.anchor, rel: l.rel, crawl_id: crawlId, source: l.source ?? 'a' })),
    fetch_log: [
      {
        event_id: `fetched:${p.fetch_id}`,
        fetch_id: p.fetch_id,
        url: p.url,
        url_host_name: p.host,
        outcome: 'fetched',
        reason: storedReason(p),
        fetch_status: p.fetch_status,
        fetch_time: p.fetch_time,
        duration_ms: p.duration_ms,
        depth: p.depth,
        fetch_redirect: null,
        crawl_id: crawlId,
        next_due_at: p.next_due_at ?? null,
        change_rate: p.change_rate ?? null,
      },
    ],
  };
}

/** fetch_log's reason for a stored page: stored (cut at the size cap, when it was), then how it was rendered, then what its revisit found (each when there is one). */
function storedReason(p: FinalPage): string {
  const stored = p.truncated ? `stored (body truncated at the size cap: the first ${p.content_length} bytes kept, --max-page-bytes)` : 'stored';
  return [stored, p.render_note, p.revisit_note].filter(Boolean).join('; ');
}

const jsonOrNull = (items: readonly unknown[] | undefined) => (items && items.length > 0 ? JSON.stringify(items) : null);

export function outcomeRows(o: UrlOutcome, crawlId: string): RowBatch {
  return {
    pages: [],
    links: [],
    fetch_log: [
      {
        event_id: o.event_id,
        fetch_id: o.fetch_id,
        url: o.url,
        url_host_name: o.host,
        outcome: o.outcome,
        reason: o.reason,
        fetch_status: o.fetch_status,
        fetch_time: o.fetch_time,
        duration_ms: o.duration_ms,
        depth: o.depth,
        fetch_redirect: o.fetch_redirect ?? null,
        crawl_id: crawlId,
        next_due_at: o.next_due_at ?? null,
        change_rate: o.change_rate ?? null,
      },
    ],
  };
}
