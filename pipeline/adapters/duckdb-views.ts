/**
 * Query side of the crawl output: an in-memory DuckDB with views over the
 * Parquet files written by parquet/row-sink.ts (layout: output-layout.ts).
 *
 *   raw_<table>   every row of every file, plus `version` and `_file`
 *   <table>_all   every version (a replay writes a new one), each logical row once per version
 *   pages         the newest version of each fetch; one row per fetch_id, and at most one
 *                 per (crawl_id, url): the latest fetch_time
 *   links         the links of the newest version of each fetch, one row per (fetch_id, dst_url, anchor_text, rel)
 *   fetch_log     one row per event_id (whatever version wrote it)
 *   hosts         a per-host summary
 *   urls          one row per URL of each crawl: its state (urls-view.ts)
 *   captures      one row per capture_id (an archived exchange)
 *
 * The pipeline is at-least-once, so a redelivered message can write the same
 * logical row into a second file (and a compaction interrupted between writing its
 * merged file and deleting the merged ones leaves both); the deduplicating views hide that.
 *
 * A table with no files yet gets an empty, correctly typed view. Views are
 * rebuilt before a query whenever a table goes from "no files" to "has files"
 * (or back). */
import { sqlString, sqlIdent } from './sql-quote.js';
import path from 'node:path';
import {
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBInstance,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  StatementType,
} from '@duckdb/node-api';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { TABLE_NAMES, TABLES, type ColumnDef, type TableName } from '../../schemas/output-tables.js';
import { iso6393To1 } from 'iso-639-3';
import { HIVE_TYPES, isRemoteOutput, legacyGlob, partitionedGlob } from './output-layout.js';
import { listCustomTables, type CustomTableSchema } from './parquet/custom-table.js';
import { URLS_VIEW } from './urls-view.js';

export interface QueryResult {
  columns: string[];
  rows: unknown[][];
}

export interface OutputDatabase {
  run(sql: string): Promise<QueryResult>;
  /** What each statement of `sql` is (SELECT, COPY, CREATE, ...), as DuckDB parses and binds it; throws DuckDB's error when it does not. */
  statementTypes(sql: string): Promise<string[]>;
  /** Stops the statement running now: it fails with DuckDB's "Interrupted" error. */
  interrupt(): void;
  close(): Promise<void>;
}



/** Partition keys of the deduplicating views (besides the pages url rule). */
export const DEDUP_KEYS: Readonly<Record<TableName, readonly string[]>> = {
  pages: ['fetch_id'],
  links: ['fetch_id', 'dst_url', 'anchor_text', 'rel'],
  fetch_log: ['event_id'],
  captures: ['capture_id'],
};

/**
 * Tables the replay writes anew per page: after a replay, a fetch's rows of an older
 * version must not show beside the new ones (a fixed extract may drop a bogus link, and
 * the old link must go too), so these views keep, per (crawl_id, fetch_id), only the
 * rows of the newest version that has the page. Every other table (fetch_log, and any
 * table added later that a replay does not rewrite) shows each key once across versions.
 */
const PAGE_VERSIONED: ReadonlySet<string> = new Set(['pages', 'links']);

interface TableSources {
  partitioned: boolean;
  legacy: boolean;
}

export interface OutputDatabaseOptions {
  /** show the output as it was at this version: rows of later versions (replays) are hidden */
  version?: number;
  /** statements run once before the views are built (httpfs and S3 settings for an s3:// output) */
  setup?: readonly string[];
}

async function hasFiles(conn: DuckDBConnection, glob: string): Promise<boolean> {
  const r = await conn.runAndReadAll(`SELECT count(*) FROM (SELECT * FROM glob(${sqlString(glob)}) LIMIT 1)`);
  return Number(r.getRows()[0]![0]) > 0;
}

async function presentColumns(conn: DuckDBConnection, src: string): Promise<Set<string>> {
  const desc = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`);
  return new Set(desc.getRows().map((r) => String(r[0])));
}

/** Every column of TABLES; ones missing in every file (older schema) become typed NULLs. */
function columnList(cols: readonly ColumnDef[], present: Set<string> | null): string[] {
  return cols.map((c) =>
    present?.has(c.name) ? `CAST(${sqlIdent(c.name)} AS ${c.type}) AS ${sqlIdent(c.name)}` : `CAST(NULL AS ${c.type}) AS ${sqlIdent(c.name)}`,
  );
}

async function rawViewSelect(conn: DuckDBConnection, outDir: string, table: TableName, sources: TableSources, version?: number): Promise<string> {
  const cols: readonly ColumnDef[] = TABLES[table];
  const parts: string[] = [];
  if (sources.partitioned) {
    const src = `read_parquet(${sqlString(partitionedGlob(outDir, table))}, hive_partitioning = true, hive_types = ${HIVE_TYPES}, union_by_name = true, filename = '_file')`;
    const list = columnList(cols, await presentColumns(conn, src));
    parts.push(`SELECT ${list.join(', ')}, version, _file FROM ${src}`);
  }
  if (sources.legacy) {
    // the first release's flat layout: no partitions, so version 0
    const src = `read_parquet(${sqlString(legacyGlob(outDir, table))}, union_by_name = true, filename = '_file')`;
    const list = columnList(cols, await presentColumns(conn, src));
    parts.push(`SELECT ${list.join(', ')}, 0 AS version, _file FROM ${src}`);
  }
  if (parts.length === 0) {
    const list = columnList(cols, null);
    return `SELECT ${list.join(', ')}, CAST(NULL AS INTEGER) AS version, CAST(NULL AS VARCHAR) AS _file LIMIT 0`;
  }
  const all = parts.join(' UNION ALL ');
  return version === undefined ? all : `SELECT * FROM (${all}) WHERE version <= ${Math.trunc(version)}`;
}

/** `<table>_all`: every version, each logical row once per version. */
function allVersionsViewSelect(table: TableName): string {
  const cols = (TABLES[table] as readonly ColumnDef[]).map((c) => sqlIdent(c.name)).join(', ');
  const keys = [...DEDUP_KEYS[table], 'version'].map(sqlIdent).join(', ');
  // Identical duplicates: keep the copy from the earliest file (names sort by write time).
  return `SELECT ${cols}, version FROM ${sqlIdent('raw_' + table)} QUALIFY row_number() OVER (PARTITION BY ${keys} ORDER BY _file) = 1`;
}

/** `<table>`: the newest version of each row, each logical row once. */
function dedupViewSelect(table: TableName): string {
  const cols = (TABLES[table] as readonly ColumnDef[]).map((c) => sqlIdent(c.name)).join(', ');
  const keys = DEDUP_KEYS[table].map(sqlIdent).join(', ');
  const raw = sqlIdent('raw_' + table);
  const source = PAGE_VERSIONED.has(table)
    ? `SELECT r.* FROM ${raw} r LEFT JOIN _page_versions pv ON r.crawl_id = pv.crawl_id AND r.fetch_id = pv.fetch_id ` +
      `WHERE pv.version IS NULL OR r.version = pv.version`
    : `SELECT * FROM ${raw}`;
  const byKey = `SELECT * FROM (${source}) QUALIFY row_number() OVER (PARTITION BY ${keys} ORDER BY version DESC, _file) = 1`;
  if (table === 'pages') {
    return (
      `SELECT ${cols}, version FROM (${byKey}) ` +
      `QUALIFY row_number() OVER (PARTITION BY crawl_id, url ORDER BY fetch_time DESC NULLS LAST, fetch_id DESC) = 1`
    );
  }
  if (table === 'captures') return capturesViewSelect(byKey);
  return `SELECT ${cols}, version FROM (${byKey})`;
}

/**
 * `captures` with `content_languages` as cc-index has it: the archive writes the row before
 * extract knows the page's language, so a response's language comes from its page (the
 * newest version of the fetch), turned from the page's BCP 47 tag into ISO 639-3.
 */
function capturesViewSelect(byKey: string): string {
  const cols = TABLES.captures.map((c) =>
    c.name === 'content_languages'
      ? `coalesce(c.content_languages, CASE WHEN c.warc_type = 'response' THEN ` +
        `CASE WHEN length(pl.primary_tag) = 3 THEN pl.primary_tag ELSE lc.iso6393 END END) AS content_languages`
      : `c.${sqlIdent(c.name)}`,
  );
  const pageLanguages =
    `SELECT crawl_id, fetch_id, lower(split_part(arg_max(content_languages, version), '-', 1)) AS primary_tag ` +
    `FROM raw_pages WHERE content_languages IS NOT NULL GROUP BY crawl_id, fetch_id`;
  return (
    // cc-index's `crawl` names the crawl a capture belongs to: here the crawl id
    `SELECT ${cols.join(', ')}, c.crawl_id AS crawl, c.version FROM (${byKey}) c ` +
    `LEFT JOIN (${pageLanguages}) pl ON pl.crawl_id = c.crawl_id AND pl.fetch_id = c.fetch_id ` +
    `LEFT JOIN _language_codes lc ON lc.tag = pl.primary_tag`
  );
}

/** ISO 639-1 → ISO 639-3 pairs, for the captures view. */
function languageCodesTable(): string {
  const rows = Object.entries(iso6393To1).map(([three, one]) => `(${sqlString(one)}, ${sqlString(three)})`);
  return `CREATE TABLE _language_codes AS SELECT * FROM (VALUES ${rows.join(', ')}) t(tag, iso6393)`;
}

/** Newest version of each fetch in `pages`: what the page-versioned views show. */
const PAGE_VERSIONS_VIEW = `SELECT crawl_id, fetch_id, max(version) AS version FROM raw_pages GROUP BY crawl_id, fetch_id`;

/**
 * `hosts`: one row per host, from `pages` and `fetch_log`: what was stored, what failed,
 * what robots.txt kept out, and how fast the host answered.
 */
const HOSTS_VIEW = `
WITH p AS (
  SELECT url_host_name AS host, count(*) AS pages, sum(content_length) AS bytes,
         median(duration_ms) AS median_latency_ms, max(fetch_time) AS last_page_at
  FROM pages GROUP BY 1
), f AS (
  SELECT url_host_name AS host,
         count(*) FILTER (WHERE outcome IN ('http_error', 'network_error', 'refused')) AS errors,
         count(*) FILTER (WHERE outcome = 'retry') AS retries,
         count(*) FILTER (WHERE outcome = 'not_modified') AS not_modified,
         count(*) FILTER (WHERE outcome = 'robots_disallowed') AS robots_disallowed,
         bool_or(outcome = 'robots_disallowed' AND reason LIKE 'robots.txt unavailable%') AS robots_unavailable
  FROM fetch_log WHERE url_host_name <> '' GROUP BY 1
)
SELECT coalesce(p.host, f.host) AS url_host_name,
       coalesce(p.pages, 0) AS pages,
       coalesce(f.errors, 0) AS errors,
       coalesce(f.retries, 0) AS retries,
       coalesce(f.not_modified, 0) AS not_modified,
       coalesce(f.robots_disallowed, 0) AS robots_disallowed,
       coalesce(p.bytes, 0) AS bytes,
       p.median_latency_ms,
       p.last_page_at,
       CASE WHEN coalesce(f.robots_unavailable, false) THEN 'unavailable'
            WHEN coalesce(f.robots_disallowed, 0) > 0 THEN 'rules disallow some URLs'
            ELSE 'allowed' END AS robots_state
FROM p FULL OUTER JOIN f ON p.host = f.host`;

/**
 * A custom stage's table (parquet/custom-table.ts): `raw_<t>` every row of every file,
 * `<t>_all` each row once per version, `<t>` for each input message the rows of the newest
 * version that handled it (a replay of a fixed stage replaces its rows, message by message).
 */
function customRawSelect(outDir: string, t: CustomTableSchema, hasFiles: boolean, version?: number): string {
  const cols = Object.entries(t.columns).map(([n, type]) => `CAST(${sqlIdent(n)} AS ${type}) AS ${sqlIdent(n)}`);
  const system = 'source_url, crawl AS crawl_id, version, _seq, _row, _file';
  if (!hasFiles) {
    const typed = Object.entries(t.columns).map(([n, type]) => `CAST(NULL AS ${type}) AS ${sqlIdent(n)}`);
    return `SELECT ${[...typed, 'CAST(NULL AS VARCHAR) AS source_url', 'CAST(NULL AS VARCHAR) AS crawl_id', 'CAST(NULL AS INTEGER) AS version', 'CAST(NULL AS BIGINT) AS _seq', 'CAST(NULL AS INTEGER) AS _row', 'CAST(NULL AS VARCHAR) AS _file'].join(', ')} LIMIT 0`;
  }
  const src = `read_parquet(${sqlString(partitionedGlob(outDir, t.table))}, hive_partitioning = true, hive_types = ${HIVE_TYPES}, union_by_name = true, filename = '_file')`;
  const all = `SELECT ${[...cols, system].join(', ')} FROM ${src}`;
  return version === undefined ? all : `SELECT * FROM (${all}) WHERE version <= ${Math.trunc(version)}`;
}

function customViews(t: CustomTableSchema): Array<[string, string]> {
  const cols = [...Object.keys(t.columns).map(sqlIdent), 'source_url', 'crawl_id', 'version'].join(', ');
  const raw = sqlIdent('raw_' + t.table);
  const once = `QUALIFY row_number() OVER (PARTITION BY crawl_id, _seq, _row, version ORDER BY _file) = 1`;
  return [
    [t.table + '_all', `SELECT ${cols} FROM ${raw} ${once}`],
    [
      t.table,
      `SELECT ${cols} FROM (SELECT * FROM ${raw} QUALIFY version = max(version) OVER (PARTITION BY crawl_id, _seq)) ${once}`,
    ],
  ];
}

// ---- DuckDB values → plain JS ----------------------------------------------

function timestampToPlain(micros: bigint, fallback: string): string {
  const ms = micros / 1000n;
  if (ms >= -8_640_000_000_000_000n && ms <= 8_640_000_000_000_000n) {
    const d = new Date(Number(ms));
    if (!Number.isNaN(d.getTime())) return d.toISOString();
  }
  return fallback; // infinity / out of JS Date range
}

/** Converts a DuckDB value for printing: BigInt → number when safe (else string), timestamps → ISO strings. */
export function toPlain(v: DuckDBValue): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') return v;
  if (typeof v === 'bigint') {
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  }
  if (v instanceof DuckDBTimestampValue || v instanceof DuckDBTimestampTZValue) {
    return timestampToPlain(v.micros, v.toString());
  }
  if (v instanceof DuckDBTimestampMillisecondsValue) return timestampToPlain(v.millis * 1000n, v.toString());
  if (v instanceof DuckDBTimestampSecondsValue) return timestampToPlain(v.seconds * 1_000_000n, v.toString());
  if (v instanceof DuckDBTimestampNanosecondsValue) return timestampToPlain(v.nanos / 1000n, v.toString());
  if (v instanceof DuckDBDateValue) return v.toString();
  if (v instanceof DuckDBDecimalValue) return v.toDouble();
  if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return v.items.map(toPlain);
  if (v instanceof DuckDBStructValue) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v.entries)) out[k] = toPlain(x);
    return out;
  }
  if (v instanceof DuckDBMapValue) return v.entries.map((e) => ({ key: toPlain(e.key), value: toPlain(e.value) }));
  if (v instanceof DuckDBBlobValue) return v.toString();
  return String(v);
}

// ---- database ---------------------------------------------------------------

export async function openOutputDatabase(out: string, options: OutputDatabaseOptions = {}): Promise<OutputDatabase> {
  const outDir = isRemoteOutput(out) ? out : path.resolve(out);
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const state = new Map<string, string>();
  // a custom stage's table declared after this opened shows in the next one
  const customTables = isRemoteOutput(outDir) ? [] : await listCustomTables(outDir);
  let closed = false;
  let chain: Promise<unknown> = Promise.resolve();

  async function refreshViews(): Promise<void> {
    for (const table of TABLE_NAMES) {
      const sources = { partitioned: await hasFiles(conn, partitionedGlob(outDir, table)), legacy: await hasFiles(conn, legacyGlob(outDir, table)) };
      const key = `${sources.partitioned}/${sources.legacy}`;
      if (state.get(table) === key) continue;
      await conn.run(`CREATE OR REPLACE VIEW ${sqlIdent('raw_' + table)} AS ${await rawViewSelect(conn, outDir, table, sources, options.version)}`);
      state.set(table, key);
    }
    for (const t of customTables) {
      const has = await hasFiles(conn, partitionedGlob(outDir, t.table));
      const key = `custom/${has}`;
      if (state.get(t.table) === key) continue;
      await conn.run(`CREATE OR REPLACE VIEW ${sqlIdent('raw_' + t.table)} AS ${customRawSelect(outDir, t, has, options.version)}`);
      state.set(t.table, key);
    }
    // built on the raw views, which DuckDB binds at query time: created once
    if (!viewsCreated) {
      for (const t of customTables) for (const [name, select] of customViews(t)) await conn.run(`CREATE VIEW ${sqlIdent(name)} AS ${select}`);
      await conn.run(`CREATE VIEW _page_versions AS ${PAGE_VERSIONS_VIEW}`);
      await conn.run(languageCodesTable());
      for (const table of TABLE_NAMES) {
        await conn.run(`CREATE VIEW ${sqlIdent(table)} AS ${dedupViewSelect(table)}`);
        await conn.run(`CREATE VIEW ${sqlIdent(table + '_all')} AS ${allVersionsViewSelect(table)}`);
      }
      await conn.run(`CREATE VIEW hosts AS ${HOSTS_VIEW}`);
      await conn.run(`CREATE VIEW urls AS ${URLS_VIEW}`);
      viewsCreated = true;
    }
  }
  let viewsCreated = false;

  function serialized<T>(fn: () => Promise<T>): Promise<T> {
    const p = chain.then(fn);
    chain = p.catch(() => undefined);
    return p;
  }

  try {
    for (const statement of options.setup ?? []) await conn.run(statement);
    await refreshViews();
  } catch (err) {
    conn.closeSync();
    instance.closeSync();
    throw err;
  }

  return {
    run(sql: string): Promise<QueryResult> {
      if (closed) return Promise.reject(new Error('output database is closed'));
      return serialized(async () => {
        await refreshViews();
        const reader = await conn.runAndReadAll(sql);
        return {
          columns: reader.columnNames(),
          rows: reader.getRows().map((r) => r.map(toPlain)),
        };
      });
    },
    statementTypes(sql: string): Promise<string[]> {
      if (closed) return Promise.reject(new Error('output database is closed'));
      return serialized(async () => {
        await refreshViews();
        const statements = await conn.extractStatements(sql);
        const types: string[] = [];
        for (let i = 0; i < statements.count; i++) types.push(StatementType[(await statements.prepare(i)).statementType]);
        return types;
      });
    },
    interrupt(): void {
      if (!closed) conn.interrupt();
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await chain;
      conn.closeSync();
      instance.closeSync();
    },
  };
}
