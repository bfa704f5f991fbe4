/**
 * Crawl output tables (Parquet files written through DuckDB, queried through
 * DuckDB views). One definition — `TABLES` — drives the writer
 * (pipeline/adapters/parquet/row-sink.ts) and the views
 * (pipeline/adapters/duckdb-views.ts).
 *
 * Column names follow Common Crawl's cc-index where the meaning matches
 * (url_host_name, url_host_registered_domain, fetch_time, fetch_status,
 * content_mime_type, content_charset, content_digest, content_languages, …).
 *
 * Conventions for row objects:
 * - TIMESTAMP columns are epoch milliseconds (number) in the row, stored as a
 *   UTC TIMESTAMP (no time zone) with millisecond precision.
 * - BIGINT columns are `number` in the row (must be a safe integer).
 * - Nullable columns take `null` (an `undefined` value is also written as NULL).
 */

export type DuckDBColumnType = 'VARCHAR' | 'BOOLEAN' | 'SMALLINT' | 'INTEGER' | 'BIGINT' | 'DOUBLE' | 'TIMESTAMP';

export interface ColumnDef {
  readonly name: string;
  readonly type: DuckDBColumnType;
  readonly nullable: boolean;
}

const col = <N extends string, T extends DuckDBColumnType, Nu extends boolean = false>(
  name: N,
  type: T,
  nullable?: Nu,
): { readonly name: N; readonly type: T; readonly nullable: Nu } => ({
  name,
  type,
  nullable: (nullable ?? false) as Nu,
});

/** Column definitions, in file/view column order. */
export const TABLES = {
  pages: [
    col('fetch_id', 'VARCHAR'),
    col('url', 'VARCHAR'),
    col('url_host_name', 'VARCHAR'),
    col('url_host_registered_domain', 'VARCHAR'),
    col('depth', 'INTEGER'),
    col('fetch_time', 'TIMESTAMP'),
    col('fetch_status', 'SMALLINT'),
    col('content_mime_type', 'VARCHAR'),
    col('content_charset', 'VARCHAR', true),
    col('content_length', 'BIGINT'),
    col('content_digest', 'VARCHAR'),
    col('content_truncated', 'BOOLEAN'),
    col('title', 'VARCHAR'),
    col('text', 'VARCHAR'),
    col('description', 'VARCHAR', true),
    col('content_languages', 'VARCHAR', true),
    col('canonical_url', 'VARCHAR', true),
    col('simhash', 'VARCHAR'),
    col('near_duplicate_of', 'VARCHAR', true),
    col('noindex', 'BOOLEAN'),
    col('nofollow', 'BOOLEAN'),
    col('outlinks', 'INTEGER'),
    col('duration_ms', 'INTEGER'),
    /** the URL first linked, when this page was reached through redirects */
    col('redirected_from', 'VARCHAR', true),
    /** JSON array of the URLs that redirected here, oldest first */
    col('redirect_chain', 'VARCHAR', true),
    col('crawl_id', 'VARCHAR'),
    /** all visible text; `text` is the main text (boilerplate removed) */
    col('text_full', 'VARCHAR'),
    /** JSON array of {level, text}, h1–h6 in document order */
    col('headings', 'VARCHAR', true),
    /** JSON object of og:* / twitter:* / article:* meta values */
    col('opengraph', 'VARCHAR', true),
    /** JSON array of parsed JSON-LD things (@graph expanded) */
    col('json_ld', 'VARCHAR', true),
    /** JSON array of {lang, url} from <link rel="alternate" hreflang> */
    col('hreflang', 'VARCHAR', true),
    /** where `text` came from: `main` (main-text selection) or `fallback_full` (none found: the full text) */
    col('text_source', 'VARCHAR', true),
    /** the article's author(s) (JSON-LD, meta tags or byline) */
    col('author', 'VARCHAR', true),
    /** when the article was first published (JSON-LD datePublished, article:published_time, a <time> near the title) */
    col('published_at', 'TIMESTAMP', true),
    /** og:site_name, or the JSON-LD publisher's name */
    col('site_name', 'VARCHAR', true),
    /** true: the text and links are those of the DOM headless Chromium rendered (the render stage) */
    col('rendered', 'BOOLEAN'),
    /** the robots rules addressed to the crawler and where they came from (`x-robots-tag: noindex; meta robots: nofollow`), NULL when none */
    col('robots_directives', 'VARCHAR', true),
    /** links the crawl had seen to the page's registrable domain from other domains when its URL was admitted (the importance estimate) */
    col('importance', 'INTEGER'),
    /** `text` as markdown: headings, lists, links (absolute URLs), GFM tables, fenced code blocks, quotes; NULL for pages extracted before it existed */
    col('text_markdown', 'VARCHAR', true),
  ],
  links: [
    col('fetch_id', 'VARCHAR'),
    col('src_url', 'VARCHAR'),
    col('dst_url', 'VARCHAR'),
    col('anchor_text', 'VARCHAR'),
    col('rel', 'VARCHAR'),
    col('crawl_id', 'VARCHAR'),
    /** a, area, link-alternate, link-next, link-prev, iframe, meta-refresh */
    col('source', 'VARCHAR'),
  ],
  fetch_log: [
    col('event_id', 'VARCHAR'),
    col('fetch_id', 'VARCHAR', true),
    col('url', 'VARCHAR'),
    col('url_host_name', 'VARCHAR'),
    col('outcome', 'VARCHAR'),
    col('reason', 'VARCHAR'),
    col('fetch_status', 'SMALLINT', true),
    col('fetch_time', 'TIMESTAMP'),
    col('duration_ms', 'INTEGER', true),
    col('depth', 'INTEGER', true),
    /** a redirect's target */
    col('fetch_redirect', 'VARCHAR', true),
    col('crawl_id', 'VARCHAR'),
    /** a crawl job's URL scheduled for revisit: when it is due again; NULL when it is not scheduled */
    col('next_due_at', 'TIMESTAMP', true),
    /** the revisit schedule's change estimate, in changes per day (revisit-policy.ts changeRatePerDay); NULL without evidence */
    col('change_rate', 'DOUBLE', true),
  ],
  /**
   * One row per archived HTTP exchange (stages/archive): Common Crawl's cc-index columns,
   * then the crawler's own. warc_filename is relative to the output directory.
   */
  captures: [
    col('url_surtkey', 'VARCHAR'),
    col('url', 'VARCHAR'),
    col('url_host_name', 'VARCHAR'),
    /** the last label (`uk` for www.bbc.co.uk); this and the next columns: stages/archive/host-parts.ts */
    col('url_host_tld', 'VARCHAR', true),
    col('url_host_2nd_last_part', 'VARCHAR', true),
    col('url_host_3rd_last_part', 'VARCHAR', true),
    col('url_host_4th_last_part', 'VARCHAR', true),
    col('url_host_5th_last_part', 'VARCHAR', true),
    /** the public suffix, ICANN section of the Public Suffix List (`co.uk`) */
    col('url_host_registry_suffix', 'VARCHAR', true),
    col('url_host_registered_domain', 'VARCHAR', true),
    /** the public suffix counting the list's private section (`blogspot.com`) */
    col('url_host_private_suffix', 'VARCHAR', true),
    col('url_host_private_domain', 'VARCHAR', true),
    col('url_host_name_reversed', 'VARCHAR', true),
    col('url_protocol', 'VARCHAR'),
    col('url_port', 'INTEGER', true),
    col('url_path', 'VARCHAR'),
    col('url_query', 'VARCHAR', true),
    col('fetch_time', 'TIMESTAMP'),
    /** null: no response (network failure) */
    col('fetch_status', 'SMALLINT', true),
    col('fetch_redirect', 'VARCHAR', true),
    /** the WARC-Payload-Digest (sha1:BASE32, = pages.content_digest); null without a payload */
    col('content_digest', 'VARCHAR', true),
    col('content_mime_type', 'VARCHAR', true),
    col('content_mime_detected', 'VARCHAR', true),
    col('content_charset', 'VARCHAR', true),
    /** ISO 639-3 code(s), comma-separated as in cc-index; archived without (extract finds the language): the view takes it from the page */
    col('content_languages', 'VARCHAR', true),
    /** 'length' when the body was cut at the size cap, as in cc-index; 'unspecified' when it was not downloaded (its type is not stored) */
    col('content_truncated', 'VARCHAR', true),
    col('warc_filename', 'VARCHAR'),
    col('warc_record_offset', 'BIGINT'),
    col('warc_record_length', 'BIGINT'),
    /** warc (2xx), crawldiagnostics (everything else), robotstxt */
    col('subset', 'VARCHAR'),
    /** one per exchange (fetch_id:attempt, or robots:<id>): the views keep one row per capture_id */
    col('capture_id', 'VARCHAR'),
    col('fetch_id', 'VARCHAR', true),
    col('warc_record_id', 'VARCHAR'),
    /** response | revisit | metadata (a network failure) */
    col('warc_type', 'VARCHAR'),
    col('fetch_duration_ms', 'INTEGER'),
    col('remote_ip', 'VARCHAR', true),
    /** the HTTP version ('h2', 'http/1.1') and, over TLS, its version ('h2 tls/1.3'), as WARC-Protocol has them; null when not known (a failure) */
    col('fetch_protocol', 'VARCHAR', true),
    col('failure_reason', 'VARCHAR', true),
    col('crawl_id', 'VARCHAR'),
  ],
} as const satisfies Record<string, readonly ColumnDef[]>;

export type TableName = keyof typeof TABLES;
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/**
 * Order of rows inside each written Parquet file (by url first, then
 * tie-breakers so that the file content is deterministic).
 */
export const FILE_SORT_KEYS: Readonly<Record<TableName, readonly string[]>> = {
  pages: ['url', 'fetch_time', 'fetch_id'],
  links: ['src_url', 'dst_url', 'anchor_text', 'rel', 'fetch_id'],
  fetch_log: ['url', 'fetch_time', 'event_id'],
  captures: ['url_surtkey', 'fetch_time', 'capture_id'],
};

/** One fetched HTML/text page (successful fetch with extracted content). */
export interface PageRow {
  fetch_id: string;
  url: string;
  url_host_name: string;
  url_host_registered_domain: string;
  depth: number;
  /** epoch ms, UTC */
  fetch_time: number;
  fetch_status: number;
  content_mime_type: string;
  content_charset: string | null;
  content_length: number;
  content_digest: string;
  content_truncated: boolean;
  title: string;
  text: string;
  description: string | null;
  content_languages: string | null;
  canonical_url: string | null;
  /** 64-bit simhash as 16 lowercase hex chars */
  simhash: string;
  near_duplicate_of: string | null;
  noindex: boolean;
  nofollow: boolean;
  outlinks: number;
  duration_ms: number;
  redirected_from: string | null;
  redirect_chain: string | null;
  crawl_id: string;
  text_full: string;
  headings: string | null;
  opengraph: string | null;
  json_ld: string | null;
  hreflang: string | null;
  text_source: string | null;
  author: string | null;
  /** epoch ms, UTC */
  published_at: number | null;
  site_name: string | null;
  rendered: boolean;
  robots_directives: string | null;
  importance: number;
  text_markdown: string | null;
}

/** One outgoing link found in a page. */
export interface LinkRow {
  fetch_id: string;
  src_url: string;
  dst_url: string;
  anchor_text: string;
  rel: string;
  crawl_id: string;
  source: string;
}

/** One outcome for one URL (fetched, skipped, failed, …). */
export interface FetchLogRow {
  /** deterministic id of this outcome; used for dedup in the views */
  event_id: string;
  fetch_id: string | null;
  url: string;
  url_host_name: string;
  outcome: string;
  reason: string;
  fetch_status: number | null;
  /** epoch ms, UTC */
  fetch_time: number;
  duration_ms: number | null;
  depth: number | null;
  fetch_redirect: string | null;
  crawl_id: string;
  /** epoch ms, UTC */
  next_due_at: number | null;
  change_rate: number | null;
}

/** The host columns of cc-index's flat schema (stages/archive/host-parts.ts says what each holds). */
export interface CaptureHostParts {
  url_host_tld: string | null;
  url_host_2nd_last_part: string | null;
  url_host_3rd_last_part: string | null;
  url_host_4th_last_part: string | null;
  url_host_5th_last_part: string | null;
  url_host_registry_suffix: string | null;
  url_host_registered_domain: string | null;
  url_host_private_suffix: string | null;
  url_host_private_domain: string | null;
  /** the labels last first (`uk.co.bbc.www`) */
  url_host_name_reversed: string | null;
}

/** One archived exchange: where its record is in which WARC file. */
export interface CaptureRow extends CaptureHostParts {
  url_surtkey: string;
  url: string;
  url_host_name: string;
  url_protocol: string;
  url_port: number | null;
  url_path: string;
  url_query: string | null;
  /** epoch ms, UTC */
  fetch_time: number;
  fetch_status: number | null;
  fetch_redirect: string | null;
  content_digest: string | null;
  content_mime_type: string | null;
  content_mime_detected: string | null;
  content_charset: string | null;
  content_languages: string | null;
  content_truncated: string | null;
  warc_filename: string;
  warc_record_offset: number;
  warc_record_length: number;
  subset: string;
  capture_id: string;
  fetch_id: string | null;
  warc_record_id: string;
  warc_type: string;
  fetch_duration_ms: number;
  remote_ip: string | null;
  fetch_protocol: string | null;
  failure_reason: string | null;
  crawl_id: string;
}

export interface OutputBatch {
  pages: PageRow[];
  links: LinkRow[];
  fetch_log: FetchLogRow[];
  captures: CaptureRow[];
}

// ---- compile-time check: the row interfaces match TABLES exactly ----------

type TsTypeOf<T extends DuckDBColumnType> = T extends 'VARCHAR' ? string : T extends 'BOOLEAN' ? boolean : number;
type RowOf<C extends readonly ColumnDef[]> = {
  [K in C[number] as K['name']]: K['nullable'] extends true ? TsTypeOf<K['type']> | null : TsTypeOf<K['type']>;
};
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
export type _RowTypesMatchTables = [
  Assert<Equals<RowOf<(typeof TABLES)['pages']>, PageRow>>,
  Assert<Equals<RowOf<(typeof TABLES)['links']>, LinkRow>>,
  Assert<Equals<RowOf<(typeof TABLES)['fetch_log']>, FetchLogRow>>,
  Assert<Equals<RowOf<(typeof TABLES)['captures']>, CaptureRow>>,
];
