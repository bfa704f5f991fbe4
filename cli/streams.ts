import path from 'node:path';
import { streamAdmin } from '../pipeline/adapters/stream-admin.js';
import { EDGES } from '../topology/index.js';
import { formatResult } from './table-format.js';
import { joinOrOpenCrawl } from './connection.js';
import { resolveOut } from './output-location.js';

const DAY_MS = 86_400_000;

/**
 * `crawl streams [--out DIR]`: what each stream holds and what it costs per fetched page
 * (its bytes divided by the messages of CRAWL_FETCHED, one per page fetched with its body),
 * extrapolated to a million pages: the disk a retention window needs.
 */
export async function runStreams(o: { out: string; format: string }): Promise<number> {
  const conn = await joinOrOpenCrawl(resolveOut(o.out, 'streams', true), 'crawl streams');
  try {
    const admin = streamAdmin(conn.nc);
    const states = [];
    for (const edge of Object.values(EDGES)) states.push(await admin.streamState(edge.stream));
    const fetched = states.find((s) => s.stream === EDGES.fetched.stream)!.messages;
    const rows = states.map((s) => {
      const perPage = fetched > 0 ? s.bytes / fetched : null;
      return [
        s.stream,
        s.messages,
        s.bytes,
        perPage === null ? null : Math.round(perPage),
        perPage === null ? null : Number(((perPage * 1e6) / 1e9).toFixed(2)),
        s.maxAgeMs > 0 ? `${(s.maxAgeMs / DAY_MS).toFixed(1)}d` : 'none',
        s.maxBytes > 0 ? s.maxBytes : 'none',
      ];
    });
    const total = rows.reduce((n, r) => n + Number(r[2]), 0);
    rows.push(['(all)', rows.reduce((n, r) => n + Number(r[1]), 0), total, fetched > 0 ? Math.round(total / fetched) : null, fetched > 0 ? Number(((total / fetched) * 1e6 / 1e9).toFixed(2)) : null, '', '']);
    const columns = ['stream', 'messages', 'bytes', 'bytes_per_fetched_page', 'gb_per_million_pages', 'max_age', 'max_bytes'];
    process.stdout.write(formatResult({ columns, rows }, o.format === 'json' ? 'json' : 'table'));
    process.stdout.write(`fetched pages (messages in ${EDGES.fetched.stream}): ${fetched}\n`);
    return 0;
  } finally {
    await conn.close();
  }
}
