import type { ApiAnswer } from '../service/job-api.js';
import type { ApiContext } from '../service/http-api.js';
import { MAX_PAGE_ROWS, runConsoleQuery, toCsv } from './console-query.js';
import { renderCrawlReport } from '../report/index.js';

const refused = (status: number, field: string, reason: string): ApiAnswer => ({ status, body: { error: { field, reason } } });

/** Rows a results page shows unless the request says otherwise. */
const DEFAULT_PAGE_ROWS = 100;

function queryBody(body: unknown): { sql: string; offset: number; limit: number } | ApiAnswer {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return refused(400, '(body)', 'expected a JSON object: {"sql": "SELECT ..."}');
  const b = body as Record<string, unknown>;
  if (typeof b.sql !== 'string' || b.sql.trim() === '') return refused(400, 'sql', 'required: the statement to run');
  const offset = b.offset ?? 0;
  const limit = b.limit ?? DEFAULT_PAGE_ROWS;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0) return refused(400, 'offset', 'a whole number, 0 or more');
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_ROWS) return refused(400, 'limit', `a whole number from 1 to ${MAX_PAGE_ROWS}`);
  return { sql: b.sql, offset, limit };
}

/**
 * The routes the console reads beside the jobs API (the same access rules, listed in
 * docs/api/openapi.json): the crawl's backlog and waiting hosts, a job's activity over
 * time, a stored record, read-only queries over the crawl's views, and the crawl report
 * (`crawl report`'s page, made from the output as it is now).
 */
export const CONSOLE_ROUTES: ReadonlyArray<{ method: 'GET' | 'POST'; path: string; handle: (ctx: ApiContext, params: Record<string, string>, body: unknown, query: URLSearchParams) => Promise<ApiAnswer> }> = [
  {
    method: 'GET',
    path: '/api/v1/crawl/status',
    handle: async (c, _p, _b, q) => ({ status: 200, body: await c.views.status(q.get('job') ?? undefined, Date.now()) }),
  },
  {
    method: 'GET',
    path: '/api/v1/jobs/{id}/activity',
    handle: async (c, p) => ({ status: 200, body: await c.views.activity(p.id!) }),
  },
  {
    method: 'GET',
    path: '/api/v1/record',
    handle: async (c, _p, _b, q) => {
      const url = q.get('url') ?? undefined;
      const fetchId = q.get('fetch_id') ?? undefined;
      if ((url === undefined) === (fetchId === undefined)) return refused(400, 'url', 'give url or fetch_id (one of them)');
      const record = await c.views.record(url !== undefined ? { url } : { fetchId: fetchId! });
      return record ? { status: 200, body: record } : refused(404, url !== undefined ? 'url' : 'fetch_id', `nothing stored for ${url ?? fetchId}`);
    },
  },
  {
    method: 'POST',
    path: '/api/v1/query',
    handle: async (c, _p, body) => {
      const q = queryBody(body);
      if ('status' in q) return q;
      const a = await runConsoleQuery(c.outDir, q.sql, { offset: q.offset, limit: q.limit });
      return a.ok ? { status: 200, body: a } : refused(a.status, a.field, a.reason);
    },
  },
  {
    method: 'POST',
    path: '/api/v1/query/csv',
    handle: async (c, _p, body) => {
      const q = queryBody(body);
      if ('status' in q) return q;
      const a = await runConsoleQuery(c.outDir, q.sql, 'all');
      if (!a.ok) return refused(a.status, a.field, a.reason);
      return {
        status: 200,
        body: null,
        raw: { contentType: 'text/csv; charset=utf-8', data: toCsv(a.columns, a.rows), headers: { 'content-disposition': 'attachment; filename="query.csv"' } },
      };
    },
  },
  {
    method: 'GET',
    path: '/report',
    handle: async (c) => {
      if (!c.outDir) return refused(404, 'path', 'this service has no output directory to report on');
      return {
        status: 200,
        body: null,
        raw: { contentType: 'text/html; charset=utf-8', data: await renderCrawlReport(c.outDir), headers: { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } },
      };
    },
  },
];
