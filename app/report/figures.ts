/**
 * The figures of a crawl report, read from the output's views (pipeline/adapters/duckdb-views.ts)
 * with plain SQL, so that each one is what `crawl sql` gives for the same question: seed 003's
 * post-run figures (pages/s, the error distribution, the top error hosts, the coverage of
 * registrable domains) and what the output holds (bytes, HTTP status classes).
 */
import type { OutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { sqlString } from '../../pipeline/adapters/sql-quote.js';

/** Outcomes that end a URL in an error, as the `hosts` view counts `errors`. */
export const ERROR_OUTCOMES = ['http_error', 'network_error', 'refused'] as const;
/** Outcomes of a request the crawler sent (robots_disallowed, filtered and refused send none). */
export const REQUEST_OUTCOMES = ['fetched', 'not_modified', 'redirect', 'http_error', 'network_error', 'unsupported_content', 'retry'] as const;
/** Requests that failed: a terminal error, or an attempt that was retried. */
export const FAILED_REQUEST_OUTCOMES = ['http_error', 'network_error', 'retry'] as const;

/** At most this many buckets on a time axis: enough to see a crawl's shape, few enough to read each. */
const MAX_BUCKETS = 60;
/** Bucket widths a reader can count in (ms): 1 s up to a day. */
const NICE_BUCKETS_MS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map((s) => s * 1000);
const TOP_ROWS = 10;
/** this report's copies of the columns it reads (temporary tables of the report's connection) */
const PAGES = '_report_pages';
const LOG = '_report_log';

export interface Count {
  label: string;
  count: number;
}

export interface ErrorReason extends Count {
  /** the outcome the reason ended in (http_error, network_error, refused) */
  outcome: string;
}

export interface ErrorHost {
  host: string;
  errors: number;
  pages: number;
}

export interface Timeline {
  /** epoch ms of the first bucket's start: the crawl's first event */
  startMs: number;
  bucketMs: number;
  /** pages stored per bucket */
  pages: number[];
  /** failed requests per bucket */
  failedRequests: number[];
  /** registrable domains with a stored page by the end of each bucket */
  domainsCovered: number[];
  /** bytes of stored pages by the end of each bucket */
  bytesStored: number[];
}

export interface ReportFigures {
  /** the crawl ids in the report (every one of the output unless one was asked for) */
  crawlIds: string[];
  /** epoch ms of the first and last event (fetch_log row or stored page); null for an empty output */
  firstEventMs: number | null;
  lastEventMs: number | null;
  durationMs: number;
  pages: number;
  /** hosts with a stored page, and hosts with any outcome at all */
  hostsWithPages: number;
  hostsSeen: number;
  domains: number;
  /** URLs that ended in an error (ERROR_OUTCOMES) */
  errors: number;
  requests: number;
  failedRequests: number;
  /** bytes of the stored pages' bodies (pages.content_length) */
  bytesStored: number;
  /** bytes of the archived records in the WARC files (captures.warc_record_length, compressed) */
  warcBytes: number;
  /** fetch_log rows by outcome, most first */
  outcomes: Count[];
  /** the errors by reason (its first words: `http 404`, `timeout`, `reset`), most first */
  errorReasons: ErrorReason[];
  /** hosts by errors, most first (TOP_ROWS) */
  errorHosts: ErrorHost[];
  /** responses by HTTP status class, and requests that got no response */
  statusClasses: Count[];
  timeline: Timeline | null;
}

export interface FigureOptions {
  /** only this crawl id's rows (default: the whole output) */
  crawlId?: string;
}

const list = (xs: readonly string[]) => xs.map(sqlString).join(', ');
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/**
 * What a reason says before its details: `http 404`, `timeout`, `reset`, `refused`,
 * `robots.txt unavailable` (reasons read "<kind>: <what was being done>: <details>").
 */
export const REASON_KIND_SQL = `CASE WHEN reason = '' THEN outcome
  WHEN regexp_matches(reason, '^http [0-9]+') THEN regexp_extract(reason, '^http [0-9]+')
  ELSE left(trim(split_part(split_part(reason, ':', 1), ';', 1)), 60) END`;

/** The smallest bucket width in NICE_BUCKETS_MS that puts a span in at most MAX_BUCKETS buckets. */
export function bucketWidthMs(spanMs: number): number {
  const wanted = Math.max(0, spanMs) / MAX_BUCKETS;
  return NICE_BUCKETS_MS.find((w) => w >= wanted) ?? Math.ceil(wanted / 86_400_000) * 86_400_000;
}

export async function readReportFigures(db: OutputDatabase, options: FigureOptions = {}): Promise<ReportFigures> {
  const where = options.crawlId === undefined ? 'TRUE' : `crawl_id = ${sqlString(options.crawlId)}`;
  const q = async (sql: string): Promise<unknown[][]> => (await db.run(sql)).rows;
  // the views deduplicate every row of every file: read the columns the figures need once
  await q(`CREATE OR REPLACE TEMP TABLE ${PAGES} AS SELECT crawl_id, url_host_name, url_host_registered_domain, fetch_time, content_length FROM pages WHERE ${where}`);
  await q(`CREATE OR REPLACE TEMP TABLE ${LOG} AS SELECT crawl_id, url_host_name, outcome, reason, fetch_status, fetch_time FROM fetch_log WHERE ${where}`);
  try {
    return await figuresFrom(q, where);
  } finally {
    await q(`DROP TABLE IF EXISTS ${PAGES}`);
    await q(`DROP TABLE IF EXISTS ${LOG}`);
  }
}

async function figuresFrom(q: (sql: string) => Promise<unknown[][]>, where: string): Promise<ReportFigures> {

  const crawlIds = (await q(`SELECT DISTINCT crawl_id FROM (SELECT crawl_id FROM ${LOG} UNION SELECT crawl_id FROM ${PAGES}) ORDER BY 1`)).map((r) => String(r[0]));
  const [span] = await q(
    `SELECT min(t), max(t) FROM (SELECT epoch_ms(fetch_time) AS t FROM ${LOG} UNION ALL SELECT epoch_ms(fetch_time) FROM ${PAGES})`,
  );
  const firstEventMs = span?.[0] === null || span?.[0] === undefined ? null : Number(span[0]);
  const lastEventMs = span?.[1] === null || span?.[1] === undefined ? null : Number(span[1]);

  const [pageTotals] = await q(
    `SELECT count(*), count(DISTINCT url_host_name), count(DISTINCT url_host_registered_domain), coalesce(sum(content_length), 0) FROM ${PAGES}`,
  );
  const [logTotals] = await q(
    `SELECT count(*) FILTER (WHERE outcome IN (${list(ERROR_OUTCOMES)})),
            count(*) FILTER (WHERE outcome IN (${list(REQUEST_OUTCOMES)})),
            count(*) FILTER (WHERE outcome IN (${list(FAILED_REQUEST_OUTCOMES)}))
     FROM ${LOG}`,
  );
  const [hostsSeen] = await q(
    `SELECT count(DISTINCT h) FROM (SELECT url_host_name AS h FROM ${LOG} WHERE url_host_name <> '' UNION SELECT url_host_name FROM ${PAGES})`,
  );
  const [warc] = await q(`SELECT coalesce(sum(warc_record_length), 0) FROM captures WHERE ${where}`);

  const outcomes = (await q(`SELECT outcome, count(*) FROM ${LOG} GROUP BY 1 ORDER BY 2 DESC, 1`)).map((r) => ({ label: String(r[0]), count: num(r[1]) }));
  const errorReasons = (
    await q(
      `SELECT ${REASON_KIND_SQL} AS kind, outcome, count(*) FROM ${LOG} WHERE outcome IN (${list(ERROR_OUTCOMES)}) GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2`,
    )
  ).map((r) => ({ label: String(r[0]), outcome: String(r[1]), count: num(r[2]) }));
  const errorHosts = (
    await q(
      `WITH e AS (SELECT url_host_name AS host, count(*) AS errors FROM ${LOG} WHERE outcome IN (${list(ERROR_OUTCOMES)}) GROUP BY 1),
            p AS (SELECT url_host_name AS host, count(*) AS pages FROM ${PAGES} GROUP BY 1)
       SELECT e.host, e.errors, coalesce(p.pages, 0) FROM e LEFT JOIN p USING (host) ORDER BY 2 DESC, 1 LIMIT ${TOP_ROWS}`,
    )
  ).map((r) => ({ host: String(r[0]), errors: num(r[1]), pages: num(r[2]) }));
  const statusClasses = (
    await q(
      `SELECT CASE WHEN fetch_status IS NULL THEN 'no response' ELSE (fetch_status // 100)::VARCHAR || 'xx' END AS class, count(*)
       FROM ${LOG} WHERE (fetch_status IS NOT NULL OR outcome IN (${list(FAILED_REQUEST_OUTCOMES)}))
       GROUP BY 1 ORDER BY (class = 'no response'), 1`,
    )
  ).map((r) => ({ label: String(r[0]), count: num(r[1]) }));

  const timeline = firstEventMs === null || lastEventMs === null ? null : await readTimeline(q, firstEventMs, lastEventMs);

  return {
    crawlIds,
    firstEventMs,
    lastEventMs,
    durationMs: firstEventMs === null || lastEventMs === null ? 0 : lastEventMs - firstEventMs,
    pages: num(pageTotals?.[0]),
    hostsWithPages: num(pageTotals?.[1]),
    domains: num(pageTotals?.[2]),
    bytesStored: num(pageTotals?.[3]),
    errors: num(logTotals?.[0]),
    requests: num(logTotals?.[1]),
    failedRequests: num(logTotals?.[2]),
    hostsSeen: num(hostsSeen?.[0]),
    warcBytes: num(warc?.[0]),
    outcomes,
    errorReasons,
    errorHosts,
    statusClasses,
    timeline,
  };
}

async function readTimeline(q: (sql: string) => Promise<unknown[][]>, startMs: number, endMs: number): Promise<Timeline> {
  const bucketMs = bucketWidthMs(endMs - startMs);
  const n = Math.floor((endMs - startMs) / bucketMs) + 1;
  const bucket = (col: string) => `((epoch_ms(${col}) - ${startMs}) // ${bucketMs})`;
  const fill = (rows: unknown[][]): number[] => {
    const out = new Array<number>(n).fill(0);
    for (const r of rows) out[Number(r[0])] = num(r[1]);
    return out;
  };
  const cumulative = (xs: number[]): number[] => {
    let sum = 0;
    return xs.map((x) => (sum += x));
  };
  const pages = fill(await q(`SELECT ${bucket('fetch_time')} AS b, count(*) FROM ${PAGES} GROUP BY 1`));
  const bytes = fill(await q(`SELECT ${bucket('fetch_time')} AS b, sum(content_length) FROM ${PAGES} GROUP BY 1`));
  const failed = fill(
    await q(`SELECT ${bucket('fetch_time')} AS b, count(*) FROM ${LOG} WHERE outcome IN (${list(FAILED_REQUEST_OUTCOMES)}) GROUP BY 1`),
  );
  // a domain counts from its first stored page
  const newDomains = fill(
    await q(
      `SELECT ${bucket('first')} AS b, count(*) FROM (SELECT url_host_registered_domain, min(fetch_time) AS first FROM ${PAGES} GROUP BY 1) GROUP BY 1`,
    ),
  );
  return { startMs, bucketMs, pages, failedRequests: failed, domainsCovered: cumulative(newDomains), bytesStored: cumulative(bytes) };
}
