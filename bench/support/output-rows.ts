/** Output rows for tests of the Parquet writer, views and compaction. */
import type { CaptureRow, FetchLogRow, LinkRow, PageRow } from '../../schemas/output-tables.js';
import { hostParts } from '../../stages/archive/host-parts.js';

export const T0 = Date.UTC(2024, 0, 15, 12, 0, 0, 123);

export function page(i: number, over: Partial<PageRow> = {}): PageRow {
  return {
    fetch_id: `f${i}`,
    url: `https://example.com/p${String(i).padStart(5, '0')}`,
    url_host_name: 'example.com',
    url_host_registered_domain: 'example.com',
    depth: i % 4,
    fetch_time: T0 + i,
    fetch_status: 200,
    content_mime_type: 'text/html',
    content_charset: 'utf-8',
    content_length: 1234 + i,
    content_digest: `sha1:${i}`,
    content_truncated: false,
    title: `Title ${i}`,
    text: `text of page ${i}`,
    description: null,
    content_languages: 'en',
    canonical_url: null,
    simhash: '0123456789abcdef',
    near_duplicate_of: null,
    noindex: false,
    nofollow: false,
    outlinks: 3,
    duration_ms: 42,
    redirected_from: null,
    redirect_chain: null,
    crawl_id: 'c1',
    text_full: `menu text of page ${i} footer`,
    headings: null,
    opengraph: null,
    json_ld: null,
    hreflang: null,
    text_source: 'main',
    author: i % 2 === 0 ? `Author ${i}` : null,
    published_at: i % 2 === 0 ? T0 - 86_400_000 : null,
    site_name: 'Example',
    rendered: false,
    robots_directives: null,
    importance: i % 3,
    text_markdown: `## Page ${i}\n\ntext of page ${i}`,
    ...over,
  };
}

export function link(i: number, j: number, over: Partial<LinkRow> = {}): LinkRow {
  return {
    fetch_id: `f${i}`,
    src_url: page(i).url,
    dst_url: `https://example.com/d${j}`,
    anchor_text: `anchor ${j}`,
    rel: '',
    crawl_id: 'c1',
    source: 'a',
    ...over,
  };
}

export function logRow(i: number, over: Partial<FetchLogRow> = {}): FetchLogRow {
  return {
    event_id: `e${i}`,
    fetch_id: `f${i}`,
    url: page(i).url,
    url_host_name: 'example.com',
    outcome: 'fetched',
    reason: '',
    fetch_status: 200,
    fetch_time: T0 + i,
    duration_ms: 42,
    depth: 0,
    fetch_redirect: null,
    crawl_id: 'c1',
    next_due_at: null,
    change_rate: null,
    ...over,
  };
}

/** A captures row for https://example.com/p<i>, a response of crawl c1 with page f<i>. */
export function capture(i: number, over: Partial<CaptureRow> = {}): CaptureRow {
  return {
    url_surtkey: `com,example)/p${i}`,
    url: `https://example.com/p${String(i).padStart(5, '0')}`,
    url_host_name: 'example.com',
    ...hostParts('example.com'),
    url_protocol: 'https',
    url_port: null,
    url_path: `/p${i}`,
    url_query: null,
    fetch_time: T0 + i,
    fetch_status: 200,
    fetch_redirect: null,
    content_digest: `sha1:${i}`,
    content_mime_type: 'text/html',
    content_mime_detected: 'text/html',
    content_charset: 'utf-8',
    // the archive writes captures before extract knows the language
    content_languages: null,
    content_truncated: null,
    warc_filename: 'warc/a.warc.gz',
    warc_record_offset: i * 1000,
    warc_record_length: 900,
    subset: 'warc',
    capture_id: `f${i}:1`,
    fetch_id: `f${i}`,
    warc_record_id: `<urn:uuid:${i}>`,
    warc_type: 'response',
    fetch_duration_ms: 10,
    remote_ip: '127.0.0.1',
    fetch_protocol: 'http/1.1',
    failure_reason: null,
    crawl_id: 'c1',
    ...over,
  };
}
