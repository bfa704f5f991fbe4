import { existsSync } from 'node:fs';
import path from 'node:path';
import { openOutputDatabase, type OutputDatabase, type QueryResult } from '../../pipeline/adapters/duckdb-views.js';
import { sqlString } from '../../pipeline/adapters/sql-quote.js';

/** rows a page of results holds at most */
export const MAX_PAGE_ROWS = 1000;
/** rows a CSV download holds at most: a bigger export is `crawl sql --format parquet`'s job */
export const MAX_CSV_ROWS = 1_000_000;
/** a console query is stopped past this: the service is not the place for hour-long scans (`crawl sql` is) */
export const QUERY_TIME_LIMIT_MS = 60_000;
/** console queries at once: each opens its own database, and the crawl shares the machine */
const QUERIES_AT_ONCE = 2;
let running = 0;
/** statements the console runs: reads only (DESCRIBE, SHOW and PRAGMA read too, as SELECT) */
const READ_STATEMENTS = new Set(['SELECT', 'EXPLAIN']);

export type QueryAnswer =
  | { ok: true; columns: string[]; rows: unknown[][]; offset: number; has_more: boolean }
  | { ok: false; status: number; field: string; reason: string };

/** DuckDB's message without the client library's wrapper, first line kept whole. */
const duckdbMessage = (err: Error) => err.message.replace(/^Failed to extract statements: /, '');

/**
 * A database over the output that can read the output and nothing else: no other file, no
 * network, no setting changed later. The query box then cannot read the server's files,
 * whoever holds the token.
 */
async function openReadOnly(outDir: string): Promise<OutputDatabase> {
  const dir = path.resolve(outDir) + path.sep;
  return openOutputDatabase(outDir, {
    setup: [`SET allowed_directories = [${sqlString(dir)}]`, 'SET enable_external_access = false', 'SET lock_configuration = true'],
  });
}

/** Checks that `sql` is one statement that reads; the refusal names what it is. */
async function refusal(db: OutputDatabase, sql: string): Promise<string | null> {
  const types = await db.statementTypes(sql);
  if (types.length !== 1) return `one statement at a time (this is ${types.length})`;
  if (!READ_STATEMENTS.has(types[0]!)) return `the console only reads: ${types[0]} statements are for \`crawl sql\``;
  return null;
}

/**
 * Runs a query of the console over the crawl's views: a page of `limit` rows from `offset`
 * (the statement wrapped in LIMIT/OFFSET when DuckDB can take it as a subquery, else run
 * whole and sliced), or every row up to MAX_CSV_ROWS for a download.
 */
export async function runConsoleQuery(
  outDir: string | undefined,
  sql: string,
  page: { offset: number; limit: number } | 'all',
  timeLimitMs = QUERY_TIME_LIMIT_MS,
): Promise<QueryAnswer> {
  if (!outDir || !existsSync(outDir)) return { ok: false, status: 409, field: 'sql', reason: 'no crawl output yet: nothing has been stored' };
  if (running >= QUERIES_AT_ONCE) return { ok: false, status: 503, field: 'sql', reason: `${running} queries are running; try again when one has ended` };
  running += 1;
  let db: OutputDatabase | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  try {
    db = await openReadOnly(outDir);
    const open = db;
    const deadline = Date.now() + timeLimitMs;
    // past the deadline, interrupted again and again: one sent between two statements is lost
    timer = setInterval(() => {
      if (Date.now() < deadline) return;
      stopped = true;
      open.interrupt();
    }, 100);
    const body = sql.trim().replace(/;\s*$/, '');
    const refused = await refusal(db, body);
    if (refused) return { ok: false, status: 400, field: 'sql', reason: refused };
    const offset = page === 'all' ? 0 : page.offset;
    const limit = page === 'all' ? MAX_CSV_ROWS : page.limit;
    let res: QueryResult;
    try {
      // the line break: a statement ending in a -- comment would swallow the parenthesis
      res = await db.run(`SELECT * FROM (${body}\n) LIMIT ${limit + 1} OFFSET ${offset}`);
    } catch (err) {
      if (stopped) throw err;
      const whole = await db.run(body);
      res = { columns: whole.columns, rows: whole.rows.slice(offset, offset + limit + 1) };
    }
    return { ok: true, columns: res.columns, rows: res.rows.slice(0, limit), offset, has_more: res.rows.length > limit };
  } catch (err) {
    if (stopped) return { ok: false, status: 400, field: 'sql', reason: `stopped after ${timeLimitMs / 1000} s (crawl sql has no time limit): ${duckdbMessage(err as Error)}` };
    return { ok: false, status: 400, field: 'sql', reason: duckdbMessage(err as Error) };
  } finally {
    if (timer) clearInterval(timer);
    running -= 1;
    await db?.close();
  }
}

const csvCell = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** RFC 4180 CSV with a header line. */
export function toCsv(columns: readonly string[], rows: readonly unknown[][]): string {
  return [columns, ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';
}
