import { existsSync } from 'node:fs';
import path from 'node:path';
import { openOutputDatabase, type OutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { sqlString } from '../../pipeline/adapters/sql-quote.js';
import { readWarcRecord } from '../../pipeline/adapters/warc/read-record.js';
import { hostQueueSubject } from '../../pipeline/partition.js';
import type { StreamAdmin } from '../../ports/stream-admin.js';
import type { KvStore } from '../../ports/kv.js';
import { EDGES } from '../../topology/index.js';
import { listHostWaits, type HostWait, type HostWaitSources } from '../../stages/politeness-gate/index.js';
import { laneJob } from '../../stages/shared/politeness/index.js';
import { pipelineBacklog } from '../backlog.js';
import { findCapture } from '../archived-record.js';

/** hosts listed (and their queued URLs counted) per answer: the ones tried soonest */
const LISTED_HOSTS = 50;
/** rows of the newest pages and failures on a job's page */
const NEWEST_ROWS = 20;
/** points of a job's timeline at most: the bucket grows with the crawl's length */
const TIMELINE_POINTS = 120;
/** outcomes a job's page lists as failures (filtered, redirect and retry are the crawl working as meant) */
export const FAILURE_OUTCOMES = ['http_error', 'network_error', 'robots_disallowed', 'unsupported_content', 'refused'] as const;
/** a stored body shown past this is cut (a page is up to 5 MB; the browser need not hold it all) */
const SHOWN_BODY_BYTES = 256 * 1024;

export interface HostWaitRow extends Omit<HostWait, 'queues'> {
  /** the jobs whose URLs wait in the host's queues */
  jobs: string[];
}

export interface JobActivity {
  /** the width of a timeline point */
  bucket_ms: number;
  /** fetch_log rows per point, by outcome (t: the point's start, epoch ms) */
  timeline: Array<{ t: number; outcomes: Record<string, number> }>;
  newest_pages: Array<Record<string, unknown>>;
  newest_failures: Array<Record<string, unknown>>;
}

export interface CrawlViewSources {
  admin: StreamAdmin;
  hosts: KvStore;
  waits: HostWaitSources;
  partitions: number;
  outDir?: string;
}

const rowsOf = (r: { columns: string[]; rows: unknown[][] }) => r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c, row[i]])));

/**
 * What the console shows beside the jobs API: the stages' backlog and the hosts waiting
 * (from NATS, as `crawl status` reads them), a job's activity over time (DuckDB over the
 * output, one database kept open: its views pick up new files at each query) and a stored
 * record (as `crawl get` finds it).
 */
export class CrawlViews {
  private db: Promise<OutputDatabase> | null = null;

  constructor(private readonly src: CrawlViewSources) {}

  /** Messages each stage has not handled yet, and the hosts with queued URLs, why they wait and until when (`job`: its hosts only). */
  async status(job: string | undefined, now: number): Promise<{ pipeline: Record<string, number>; hosts: HostWaitRow[]; hosts_total: number; at: number }> {
    const backlog = await pipelineBacklog(this.src.admin);
    const all = await listHostWaits(this.src.waits, now);
    const withJobs = all.map((h) => ({ h, jobs: this.jobsOf(h) }));
    const mine = job === undefined ? withJobs : withJobs.filter((w) => w.jobs.includes(job));
    const hosts: HostWaitRow[] = [];
    for (const { h, jobs } of mine.slice(0, LISTED_HOSTS)) {
      let queued = h.queued;
      if (queued === null) {
        queued = 0;
        for (const q of h.queues) queued += await this.src.admin.countFrom(EDGES.hostq.stream, q.subject, q.fromSeq);
      }
      const { queues: _queues, ...rest } = h;
      hosts.push({ ...rest, queued, jobs });
    }
    return { pipeline: backlog.perStage, hosts, hosts_total: mine.length, at: now };
  }

  /** A host queue's subject ends with its lane (`<level>:<job>`) after the host's base subject. */
  private jobsOf(h: HostWait): string[] {
    const base = hostQueueSubject(h.host, this.src.partitions).split('.').length;
    const jobs = new Set<string>();
    for (const q of h.queues) {
      const job = laneJob(q.subject.split('.').slice(base).join('.'));
      if (job) jobs.add(job);
    }
    return [...jobs];
  }

  /** A job's fetch_log over time, its newest stored pages and its newest failures, from the output. */
  async activity(job: string): Promise<JobActivity> {
    const db = await this.output();
    if (!db) return { bucket_ms: 1000, timeline: [], newest_pages: [], newest_failures: [] };
    const id = sqlString(job);
    const span = (await db.run(`SELECT min(epoch_ms(fetch_time)), max(epoch_ms(fetch_time)) FROM fetch_log WHERE crawl_id = ${id}`)).rows[0] ?? [];
    const first = Number(span[0] ?? 0);
    const last = Number(span[1] ?? 0);
    const bucket = Math.max(1, Math.ceil((last - first) / 1000 / TIMELINE_POINTS)) * 1000;
    const points = await db.run(
      `SELECT (epoch_ms(fetch_time) // ${bucket}) * ${bucket} AS t, outcome, count(*)::BIGINT FROM fetch_log WHERE crawl_id = ${id} GROUP BY 1, 2 ORDER BY 1`,
    );
    const timeline = new Map<number, Record<string, number>>();
    for (const [t, outcome, n] of points.rows) {
      const at = timeline.get(Number(t)) ?? {};
      at[String(outcome)] = Number(n);
      timeline.set(Number(t), at);
    }
    const pages = existsSync(path.join(this.src.outDir!, 'pages'))
      ? await db.run(
          `SELECT url, title, content_length, near_duplicate_of, fetch_status, fetch_time FROM pages WHERE crawl_id = ${id} ORDER BY fetch_time DESC, url LIMIT ${NEWEST_ROWS}`,
        )
      : { columns: [], rows: [] };
    const failures = await db.run(
      `SELECT url, outcome, reason, fetch_status, fetch_time FROM fetch_log WHERE crawl_id = ${id} AND outcome IN (${FAILURE_OUTCOMES.map(sqlString).join(', ')})
       ORDER BY fetch_time DESC, url LIMIT ${NEWEST_ROWS}`,
    );
    return {
      bucket_ms: bucket,
      timeline: [...timeline.entries()].map(([t, outcomes]) => ({ t, outcomes })),
      newest_pages: rowsOf(pages),
      newest_failures: rowsOf(failures),
    };
  }

  /** The stored record of a URL (its latest response) or of a fetch, split as a reader wants it; null when nothing is stored. */
  async record(which: { url?: string; fetchId?: string }): Promise<Record<string, unknown> | null> {
    const db = await this.output();
    if (!db) return null;
    const capture = await findCapture(db, which);
    if (!capture) return null;
    const record = await readWarcRecord(this.src.outDir!, capture.warc_filename, capture.warc_record_offset, capture.warc_record_length);
    const http = record.block.length - record.payload.length;
    const page = await db.run(
      `SELECT title, text_full, content_mime_type FROM pages WHERE url = ${sqlString(capture.url)} ORDER BY fetch_time DESC LIMIT 1`,
    ).catch(() => ({ columns: [], rows: [] as unknown[][] }));
    const [title, text, mime] = page.rows[0] ?? [null, null, null];
    return {
      ...capture,
      warc_headers: record.head,
      http_headers: http > 0 ? record.block.subarray(0, http).toString('latin1').trimEnd() : null,
      payload_bytes: record.payload.length,
      payload: record.payload.subarray(0, SHOWN_BODY_BYTES).toString('utf8'),
      payload_truncated: record.payload.length > SHOWN_BODY_BYTES,
      title: title ?? null,
      text: text ?? null,
      content_mime_type: mime ?? null,
    };
  }

  /** The output database, opened once a fetch_log file exists (null before); kept open until close(). */
  async output(): Promise<OutputDatabase | null> {
    const dir = this.src.outDir;
    if (!dir || !existsSync(path.join(dir, 'fetch_log'))) return null;
    this.db ??= openOutputDatabase(dir).catch((err: Error) => {
      this.db = null;
      throw err;
    });
    return this.db;
  }

  async close(): Promise<void> {
    const db = this.db;
    this.db = null;
    await (await db?.catch(() => null))?.close();
  }
}
