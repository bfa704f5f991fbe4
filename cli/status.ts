import { existsSync } from 'node:fs';
import path from 'node:path';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { formatResult } from './table-format.js';
import { sqlString } from '../pipeline/adapters/sql-quote.js';
import { openKvStores } from '../pipeline/adapters/nats-kv.js';
import { streamAccess } from '../pipeline/adapters/stream-access.js';
import { streamAdmin } from '../pipeline/adapters/stream-admin.js';
import { EDGES } from '../topology/index.js';
import { pipelineBacklog } from '../app/backlog.js';
import { readStoredSettings } from '../app/settings-store.js';
import {
  formatDuration,
  formatWaitSummary,
  hostWaitSources,
  listHostWaits,
  summarizeWaits,
  type HostWait,
  type WaitSummary,
} from '../stages/politeness-gate/index.js';
import { joinOrOpenCrawl } from './connection.js';
import { UsageError } from './usage-error.js';
import { resolveOut } from './output-location.js';

const FORMATS = ['table', 'json'] as const;
/** hosts whose queued URLs are counted, and listed in the table (JSON lists every host) */
const COUNTED_HOSTS = 200;
const LISTED_HOSTS = 50;

export interface StatusOptions {
  out: string;
  format: string;
}

export interface CrawlStatus {
  crawl_id: string;
  /** fetch_log rows of this crawl id so far, by outcome (persisted output; `retry` is not terminal) */
  outcomes: Record<string, number>;
  /** messages not yet handled, per stage consumer */
  pipeline: Record<string, number>;
  /** URLs waiting in host queues */
  host_queued: number | null;
  waiting: WaitSummary;
  hosts: HostWait[];
  at: number;
}

/**
 * `crawl status [--out DIR]`: what the crawl has done and what it waits for, read from the
 * server the crawl uses (NATS_URL, or the embedded one of `--out`) and from its output.
 */
export async function runStatus(o: StatusOptions): Promise<number> {
  if (!(FORMATS as readonly string[]).includes(o.format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got "${o.format}"`);
  const outDir = resolveOut(o.out, 'status', false);
  const conn = await joinOrOpenCrawl(outDir, 'crawl status');
  let status: CrawlStatus;
  try {
    status = await readStatus(conn.nc, outDir);
  } finally {
    await conn.close();
  }
  process.stdout.write(o.format === 'json' ? JSON.stringify(status, null, 2) + '\n' : formatStatus(status));
  return 0;
}

async function readStatus(nc: Parameters<typeof openKvStores>[0], outDir: string): Promise<CrawlStatus> {
  const kv = await openKvStores(nc);
  const settings = await readStoredSettings(kv);
  if (!settings) throw new UsageError('no crawl settings on this server: start a crawl with `crawl run` or `crawl topology apply`');
  const admin = streamAdmin(nc);
  const backlog = await pipelineBacklog(admin);
  const at = Date.now();
  const hosts = await listHostWaits(hostWaitSources(kv, streamAccess(nc), settings), at);
  // two requests a host: the hosts tried soonest are counted, the rest stay null
  for (const h of hosts.slice(0, COUNTED_HOSTS)) {
    if (h.queued !== null) continue;
    let n = 0;
    for (const q of h.queues) n += await admin.countFrom(EDGES.hostq.stream, q.subject, q.fromSeq);
    h.queued = n;
  }
  const waiting = summarizeWaits(hosts);
  return {
    crawl_id: settings.crawlId,
    outcomes: await outcomeCounts(outDir, settings.crawlId),
    pipeline: backlog.perStage,
    host_queued: waiting.queued,
    waiting,
    hosts,
    at,
  };
}

/** Outcomes so far from the output's fetch_log (empty when nothing is persisted yet). */
async function outcomeCounts(outDir: string, crawlId: string): Promise<Record<string, number>> {
  if (!existsSync(path.join(outDir, 'fetch_log'))) return {};
  const db = await openOutputDatabase(outDir);
  try {
    const res = await db.run(`SELECT outcome, count(*)::BIGINT AS n FROM fetch_log WHERE crawl_id = ${sqlString(crawlId)} GROUP BY 1 ORDER BY 2 DESC, 1`);
    return Object.fromEntries(res.rows.map((r) => [String(r[0]), Number(r[1])]));
  } finally {
    await db.close();
  }
}

const clock = (t: number) => new Date(t).toISOString().slice(11, 19);
const inTime = (t: number, now: number) => `${clock(t)} UTC (in ${formatDuration(t - now)})`;

export function formatStatus(s: CrawlStatus): string {
  const lines: string[] = [`crawl ${s.crawl_id}`];
  const outcomes = Object.entries(s.outcomes);
  lines.push(`outcomes so far: ${outcomes.length === 0 ? 'none persisted yet' : outcomes.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  const busy = Object.entries(s.pipeline).filter(([, n]) => n > 0);
  lines.push(`in the stages: ${busy.length === 0 ? 'nothing' : busy.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  lines.push(`in host queues: ${s.host_queued ?? `≥ ${s.waiting.hosts}`} URLs at ${s.waiting.hosts} hosts`);
  lines.push(s.waiting.hosts === 0 ? 'waiting: no host' : formatWaitSummary(s.waiting, s.at));
  if (s.hosts.length > 0) {
    const rows = s.hosts.slice(0, LISTED_HOSTS).map((h) => [
      h.host,
      h.queued,
      h.reason,
      h.until === null ? 'now' : inTime(h.until, s.at),
      h.givesUpAt === null ? '' : inTime(h.givesUpAt, s.at),
      h.detail,
    ]);
    lines.push('', formatResult({ columns: ['host', 'queued', 'waits for', 'next try', 'gives up', 'detail'], rows }, 'table').trimEnd());
    if (s.hosts.length > LISTED_HOSTS) lines.push(`(the ${LISTED_HOSTS} hosts tried soonest of ${s.hosts.length}; --format json lists them all)`);
  }
  return lines.join('\n') + '\n';
}
