import { existsSync } from 'node:fs';
import path from 'node:path';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { readWarcRecord } from '../pipeline/adapters/warc/read-record.js';
import { findCapture } from '../app/archived-record.js';
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
  let capture: Awaited<ReturnType<typeof findCapture>>;
  try {
    capture = await findCapture(db, { ...(url !== undefined ? { url } : { fetchId: o.fetchId! }), rendered: o.rendered === true });
  } finally {
    await db.close();
  }
  if (!capture) {
    process.stderr.write(`crawl: no ${o.rendered ? 'rendered capture' : 'capture'} of ${url ?? `fetch ${o.fetchId}`} in ${outDir}\n`);
    return 1;
  }
  const { warc_filename: file, warc_record_offset: offset, warc_record_length: length } = capture;
  const record = await readWarcRecord(outDir, file, offset, length);
  await new Promise<void>((resolve, reject) => process.stdout.write(o.payload ? record.payload : record.raw, (err) => (err ? reject(err) : resolve())));
  return 0;
}
