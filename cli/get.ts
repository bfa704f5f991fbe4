import { sqlString } from '../pipeline/adapters/sql-quote.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { readWarcRecord } from '../pipeline/adapters/warc/read-record.js';
import { UsageError } from './usage-error.js';
import { resolveOut } from './output-location.js';


/**
 * `crawl get URL` / `crawl get --fetch-id ID`: the stored WARC record of the URL's latest
 * response (else its latest capture: a revisit, a failure), or of that fetch's last attempt,
 * found in `captures`, read by offset and length. `--rendered`: the DOM the render stage made
 * of the page instead (its conversion record).
 */
export async function runGet(url: string | undefined, o: { out: string; fetchId?: string; payload: boolean; rendered?: boolean }): Promise<number> {
  if ((url === undefined) === (o.fetchId === undefined)) throw new UsageError('give a URL or --fetch-id ID (one of them)');
  const outDir = resolveOut(o.out, 'get', false);
  if (!existsSync(outDir)) throw new UsageError(`no crawl output at ${outDir} (use --out DIR)`);
  const db = await openOutputDatabase(outDir);
  let row: unknown[] | undefined;
  try {
    const which = url !== undefined ? `url = ${sqlString(url)}` : `fetch_id = ${sqlString(o.fetchId!)}`;
    // the page's response and its DOM share the URL and fetch id: a DOM only when asked for
    const where = `${which} AND ${o.rendered ? "warc_type = 'conversion'" : "warc_type <> 'conversion'"}`;
    const res = await db.run(
      // the content first: a later 304 or duplicate (revisit) only points back at a response
      `SELECT warc_filename, warc_record_offset, warc_record_length FROM captures WHERE ${where}
       ORDER BY warc_type = 'response' DESC, fetch_time DESC, capture_id DESC LIMIT 1`,
    );
    row = res.rows[0];
  } finally {
    await db.close();
  }
  if (!row) {
    process.stderr.write(`crawl: no ${o.rendered ? 'rendered capture' : 'capture'} of ${url ?? `fetch ${o.fetchId}`} in ${outDir}\n`);
    return 1;
  }
  const [file, offset, length] = row as [string, number, number];
  const record = await readWarcRecord(outDir, file, offset, length);
  await new Promise<void>((resolve, reject) => process.stdout.write(o.payload ? record.payload : record.raw, (err) => (err ? reject(err) : resolve())));
  return 0;
}
