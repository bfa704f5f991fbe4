import { sqlString } from '../pipeline/adapters/sql-quote.js';
import type { OutputDatabase } from '../pipeline/adapters/duckdb-views.js';

/** Where a capture's WARC record lies: file, offset and length of its gzip member, as `captures` points to it. */
export interface CaptureLocation {
  url: string;
  warc_filename: string;
  warc_record_offset: number;
  warc_record_length: number;
  warc_type: string;
  fetch_time: string | null;
  fetch_id: string | null;
}

/**
 * The capture `crawl get` shows for a URL or a fetch id: the latest response (else its latest
 * capture: a revisit, a failure), or the rendered DOM (the conversion record) when asked for.
 */
export async function findCapture(db: OutputDatabase, which: { url?: string; fetchId?: string; rendered?: boolean }): Promise<CaptureLocation | null> {
  const by = which.url !== undefined ? `url = ${sqlString(which.url)}` : `fetch_id = ${sqlString(which.fetchId ?? '')}`;
  // the page's response and its DOM share the URL and fetch id: a DOM only when asked for
  const where = `${by} AND ${which.rendered ? "warc_type = 'conversion'" : "warc_type <> 'conversion'"}`;
  const res = await db.run(
    // the content first: a later 304 or duplicate (revisit) only points back at a response
    `SELECT url, warc_filename, warc_record_offset, warc_record_length, warc_type, fetch_time, fetch_id FROM captures WHERE ${where}
     ORDER BY warc_type = 'response' DESC, fetch_time DESC, capture_id DESC LIMIT 1`,
  );
  const row = res.rows[0];
  if (!row) return null;
  const [url, file, offset, length, type, time, fetchId] = row;
  return {
    url: String(url),
    warc_filename: String(file),
    warc_record_offset: Number(offset),
    warc_record_length: Number(length),
    warc_type: String(type),
    fetch_time: time === null ? null : String(time),
    fetch_id: fetchId === null ? null : String(fetchId),
  };
}
