import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { EDGES } from '../topology/index.js';
import { formatResult } from './table-format.js';
import { joinOrOpenCrawl } from './connection.js';
import { resolveOut } from './output-location.js';

const DAY_NS = 86_400e9;

/**
 * `crawl streams [--out DIR]`: what each stream holds and what it costs per fetched page
 * (its bytes divided by the messages of CRAWL_FETCHED, one per page fetched with its body),
 * extrapolated to a million pages: the disk a retention window needs.
 */
export async function runStreams(o: { out: string; format: string }): Promise<number> {
  const conn = await joinOrOpenCrawl(resolveOut(o.out, 'streams', true), 'crawl streams');
  try {
    const jsm = await jetstreamManager(conn.nc);
    const infos = [];
    for (const edge of Object.values(EDGES)) infos.push(await jsm.streams.info(edge.stream));
    const fetched = infos.find((i) => i.config.name === EDGES.fetched.stream)!.state.messages;
    const rows = infos.map((i) => {
      const perPage = fetched > 0 ? i.state.bytes / fetched : null;
      return [
        i.config.name,
        i.state.messages,
        i.state.bytes,
        perPage === null ? null : Math.round(perPage),
        perPage === null ? null : Number(((perPage * 1e6) / 1e9).toFixed(2)),
        i.config.max_age > 0 ? `${(i.config.max_age / DAY_NS).toFixed(1)}d` : 'none',
        i.config.max_bytes > 0 ? i.config.max_bytes : 'none',
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
