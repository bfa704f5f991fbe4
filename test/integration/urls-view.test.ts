/**
 * The `urls` view over Parquet files the crawl's writer wrote: one row per URL with its state
 * (each status rule), a revisited URL's schedule, the newest version after a replay, copies a
 * redelivery wrote twice, and files written before fetch_log had the schedule's columns.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ParquetTableWriter } from '../../pipeline/adapters/parquet/row-sink.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import type { FetchLogRow, OutputBatch } from '../../schemas/output-tables.js';
import { T0, logRow, page } from '../../bench/support/output-rows.js';

const HOUR = 3_600_000;
const url = (name: string) => `https://example.com/${name}`;

/** One fetch_log row of the URL `name`; a request's row unless `over` says otherwise. */
function row(name: string, event: string, outcome: string, at: number, over: Partial<FetchLogRow> = {}): FetchLogRow {
  return logRow(0, { event_id: event, fetch_id: `f-${name}`, url: url(name), outcome, reason: outcome, fetch_time: T0 + at, ...over });
}
/** A row of a decision without a request (robots, filters): no status, no duration. */
const decided = (over: Partial<FetchLogRow> = {}): Partial<FetchLogRow> => ({ fetch_status: null, duration_ms: null, ...over });

async function write(out: string, batch: Partial<OutputBatch>, version?: number): Promise<void> {
  const w = await ParquetTableWriter.open(out, version === undefined ? {} : { version });
  try {
    await w.write({ pages: [], links: [], fetch_log: [], captures: [], ...batch });
  } finally {
    await w.close();
  }
}

async function urlsRows(out: string): Promise<Map<string, Record<string, unknown>>> {
  const db = await openOutputDatabase(out);
  try {
    const r = await db.run('SELECT * FROM urls ORDER BY url');
    return new Map(r.rows.map((values) => {
      const o = Object.fromEntries(r.columns.map((c, i) => [c, values[i]]));
      return [String(o['url']).replace(url(''), ''), o];
    }));
  } finally {
    await db.close();
  }
}

const iso = (at: number) => new Date(T0 + at).toISOString();
const pick = (o: Record<string, unknown> | undefined, ...cols: string[]) => cols.map((c) => o?.[c]);

describe('the urls view', () => {
  const dirs: string[] = [];
  const mk = async () => {
    const d = await fsp.mkdtemp(path.join(os.tmpdir(), 'urls-view-'));
    dirs.push(d);
    return d;
  };
  after(async () => {
    for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
  });

  test('one row per URL; each status from what happened to it', async () => {
    const out = await mk();
    const fetched = page(0, { fetch_id: 'f-page', url: url('page'), content_digest: 'sha1:PAGE', fetch_time: T0 + 2000 });
    await write(out, {
      pages: [fetched],
      fetch_log: [
        // a page after a failed try, and later linked again from past the depth limit
        row('page', 'page-retry', 'retry', 1000, { fetch_status: 503 }),
        row('page', 'page-fetched', 'fetched', 2000, { fetch_status: 200 }),
        row('page', 'page-deep', 'filtered', 9000, decided({ fetch_id: null, reason: 'max_depth: 4 > 3' })),
        row('gone', 'gone', 'http_error', 1000, { fetch_status: 404 }),
        row('removed', 'removed', 'http_error', 1000, { fetch_status: 410 }),
        row('nxdomain', 'nxdomain', 'network_error', 1000, { fetch_status: null, reason: 'dns_error: ENOTFOUND nx.example.com (the name does not exist)' }),
        // 503 three times: gone after its retries
        row('failing', 'failing-1', 'retry', 1000, { fetch_status: 503 }),
        row('failing', 'failing-2', 'retry', 2000, { fetch_status: 503 }),
        row('failing', 'failing-3', 'http_error', 3000, { fetch_status: 503 }),
        // a 403 answers: the URL is there, it refused us
        row('forbidden', 'forbidden', 'http_error', 1000, { fetch_status: 403 }),
        row('pdf', 'pdf', 'unsupported_content', 1000, { fetch_status: 200 }),
        row('private', 'private', 'robots_disallowed', 1000, decided()),
        row('offsite', 'offsite', 'filtered', 1000, decided({ fetch_id: null, reason: 'out_of_scope: other.org' })),
        row('loopback', 'loopback', 'refused', 1000, { fetch_status: null, reason: 'refused: 127.0.0.1 is a loopback address' }),
        row('moved', 'moved', 'redirect', 1000, { fetch_status: 301, fetch_redirect: url('page') }),
      ],
    });
    const urls = await urlsRows(out);
    assert.deepEqual(
      Object.fromEntries([...urls].map(([name, o]) => [name, o['status']])),
      {
        failing: 'dead',
        forbidden: 'active',
        gone: 'dead',
        loopback: 'filtered',
        moved: 'redirect',
        nxdomain: 'dead',
        offsite: 'filtered',
        page: 'active',
        pdf: 'active',
        private: 'blocked_by_robots',
        removed: 'dead',
      },
    );
    // the newest row is the filter's; the page it stored and the requests made for it stay
    assert.deepEqual(pick(urls.get('page'), 'first_seen', 'last_fetched', 'last_outcome', 'last_reason', 'content_digest', 'fetches', 'crawl_id', 'url_host_name'), [
      iso(1000), iso(2000), 'filtered', 'max_depth: 4 > 3', 'sha1:PAGE', 2, 'c1', 'example.com',
    ]);
    assert.deepEqual(pick(urls.get('failing'), 'first_seen', 'last_fetched', 'last_outcome', 'fetches'), [iso(1000), iso(3000), 'http_error', 3]);
    // decided without a request: nothing fetched, no digest
    assert.deepEqual(pick(urls.get('offsite'), 'last_fetched', 'fetches', 'content_digest', 'last_reason'), [null, 0, null, 'out_of_scope: other.org']);
    assert.deepEqual(pick(urls.get('private'), 'last_fetched', 'fetches', 'next_due_at', 'change_rate'), [null, 0, null, null]);
  });

  test("a revisited URL: its schedule and change estimate are its newest fetch's; the page is the newest copy", async () => {
    const out = await mk();
    const due = T0 + 30 * HOUR;
    await write(out, {
      pages: [page(0, { fetch_id: 'f-news-1', url: url('news'), content_digest: 'sha1:V1', fetch_time: T0 })],
      fetch_log: [row('news', 'news-1', 'fetched', 0, { fetch_id: 'f-news-1', next_due_at: T0 + 24 * HOUR, change_rate: null })],
    });
    await write(out, {
      pages: [page(0, { fetch_id: 'f-news-2', url: url('news'), content_digest: 'sha1:V2', fetch_time: T0 + 24 * HOUR })],
      fetch_log: [
        row('news', 'news-2', 'fetched', 24 * HOUR, { fetch_id: 'f-news-2', next_due_at: T0 + 28 * HOUR, change_rate: 0.9 }),
        // the third check: a 304 whose revisit is due at 30 h; a retry of a fourth check is in flight
        row('news', 'news-3', 'not_modified', 28 * HOUR, { fetch_id: 'f-news-3', fetch_status: 304, next_due_at: due, change_rate: 0.5 }),
        row('news', 'news-4', 'retry', 30 * HOUR, { fetch_id: 'f-news-4', fetch_status: 503 }),
      ],
    });
    const news = (await urlsRows(out)).get('news');
    assert.deepEqual(pick(news, 'status', 'last_outcome', 'next_due_at', 'change_rate', 'content_digest', 'fetches', 'first_seen', 'last_fetched'), [
      'active', 'retry', new Date(due).toISOString(), 0.5, 'sha1:V2', 4, iso(0), iso(30 * HOUR),
    ]);
  });

  test('after a replay and a redelivery: each event once, its newest version', async () => {
    const out = await mk();
    const batch = { pages: [page(0, { fetch_id: 'f-a', url: url('a'), content_digest: 'sha1:OLD' })], fetch_log: [row('a', 'a', 'fetched', 0, { fetch_id: 'f-a', reason: 'stored' })] };
    await write(out, batch);
    await write(out, batch); // a redelivered batch: the same rows in a second file
    await write(out, { pages: [page(0, { fetch_id: 'f-a', url: url('a'), content_digest: 'sha1:NEW' })], fetch_log: [row('a', 'a', 'fetched', 0, { fetch_id: 'f-a', reason: 'stored; replayed' })] }, 1);
    const urls = await urlsRows(out);
    assert.equal(urls.size, 1);
    assert.deepEqual(pick(urls.get('a'), 'last_reason', 'content_digest', 'fetches'), ['stored; replayed', 'sha1:NEW', 1]);
  });

  test('fetch_log files written before it had next_due_at and change_rate are read beside newer ones', async () => {
    const out = await mk();
    await write(out, { fetch_log: [row('old', 'old', 'fetched', 0), row('both', 'both-1', 'fetched', 0)] });
    await dropScheduleColumns(out);
    // only old files: the columns are typed NULLs
    assert.deepEqual(pick((await urlsRows(out)).get('both'), 'status', 'next_due_at', 'change_rate'), ['active', null, null]);
    await write(out, { fetch_log: [row('both', 'both-2', 'not_modified', HOUR, { fetch_status: 304, next_due_at: T0 + 2 * HOUR, change_rate: 0.25 })] });
    const db = await openOutputDatabase(out);
    try {
      const log = await db.run("SELECT event_id, next_due_at, change_rate FROM fetch_log ORDER BY event_id");
      assert.deepEqual(log.rows, [['both-1', null, null], ['both-2', new Date(T0 + 2 * HOUR).toISOString(), 0.25], ['old', null, null]]);
    } finally {
      await db.close();
    }
    const urls = await urlsRows(out);
    assert.deepEqual(pick(urls.get('old'), 'status', 'next_due_at', 'change_rate', 'fetches'), ['active', null, null, 1]);
    assert.deepEqual(pick(urls.get('both'), 'last_outcome', 'next_due_at', 'change_rate', 'fetches'), ['not_modified', new Date(T0 + 2 * HOUR).toISOString(), 0.25, 2]);
  });

  test('an output with no files yet: the view is there, empty, with its columns', async () => {
    const out = await mk();
    const db = await openOutputDatabase(out);
    try {
      const r = await db.run('SELECT * FROM urls');
      assert.deepEqual(r.columns, [
        'crawl_id', 'url', 'url_host_name', 'first_seen', 'last_fetched', 'last_outcome', 'last_reason', 'status', 'next_due_at', 'change_rate', 'content_digest', 'fetches',
      ]);
      assert.equal(r.rows.length, 0);
    } finally {
      await db.close();
    }
  });
});

/** Rewrites every fetch_log file as the writer wrote it before the schedule's columns existed. */
async function dropScheduleColumns(out: string): Promise<void> {
  const files = (await fsp.readdir(path.join(out, 'fetch_log'), { recursive: true })).filter((f) => f.endsWith('.parquet'));
  assert.ok(files.length > 0);
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    for (const f of files) {
      const file = path.join(out, 'fetch_log', f);
      await conn.run(`COPY (SELECT * EXCLUDE (next_due_at, change_rate) FROM read_parquet('${file}')) TO '${file}.old' (FORMAT PARQUET)`);
      await fsp.rename(`${file}.old`, file);
      const cols = await conn.runAndReadAll(`SELECT name FROM parquet_schema('${file}')`);
      assert.ok(!cols.getRows().some((r) => r[0] === 'next_due_at'), 'the old file has no next_due_at');
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
