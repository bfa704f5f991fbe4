import { existsSync } from 'node:fs';
import path from 'node:path';
import { EDGES, SUBJECTS } from '../../topology/index.js';
import { parseJsonValue } from '../../pipeline/kv-store.js';
import { hostQueueSubject } from '../../pipeline/partition.js';
import { openOutputDatabase, type OutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { sqlString } from '../../pipeline/adapters/sql-quote.js';
import type { KvStore } from '../../ports/kv.js';
import type { StreamAdmin } from '../../ports/stream-admin.js';
import type { JobRecord } from '../../schemas/index.js';
import { laneJob, lanesWithWork, readSlot, TAIL_PREFIX, type QueueTail } from '../../stages/shared/politeness/index.js';
import { pipelineBacklog } from '../backlog.js';

export interface JobStatus extends JobRecord {
  /** crawling: URLs of it wait in host queues or the pipeline is busy; idle: nothing of it is in flight */
  activity: 'crawling' | 'idle';
  /** URLs of the job waiting in host queues (counted in at most MAX_COUNTED_LANES lanes; null past them) */
  queued: number | null;
  /** URLs scheduled for a revisit, and when the first of them is due */
  due_for_revisit: number;
  next_revisit_at: number | null;
  /** fetch_log rows of the job so far, by outcome, and pages stored (from the output; {} without one) */
  outcomes: Record<string, number>;
  pages: number;
}

const MAX_COUNTED_LANES = 200;

export interface StatusSources {
  admin: StreamAdmin;
  hosts: KvStore;
  partitions: number;
  slotMs: number;
  /** the output directory the persist stage writes (status reads the job's rows there) */
  outDir?: string;
  /** a database over that output kept open by the caller (else one is opened per status) */
  output?: () => Promise<OutputDatabase | null>;
}

/** The host-queue lanes of a job with URLs not handed out yet: each subject and the sequence its next URL is read from. */
export async function jobLanesWithWork(src: Pick<StatusSources, 'hosts' | 'partitions'>, jobId: string, now: number): Promise<Array<{ subject: string; fromSeq: number }>> {
  const out: Array<{ subject: string; fromSeq: number }> = [];
  for await (const key of src.hosts.keys()) {
    if (!key.startsWith(TAIL_PREFIX)) continue;
    const entry = await src.hosts.get(key);
    if (!entry) continue;
    const tail = parseJsonValue<QueueTail>(entry.value);
    if (!Object.keys(tail.tails ?? {}).some((lane) => laneJob(lane) === jobId)) continue;
    const slot = await readSlot(src.hosts, tail.host);
    for (const l of lanesWithWork(slot, tail, now)) {
      if (laneJob(l.lane) === jobId) out.push({ subject: hostQueueSubject(tail.host, src.partitions, l.lane), fromSeq: l.cursor + 1 });
    }
  }
  return out;
}

/**
 * What is in flight for a job: whether any of its URLs wait in a host's queue, and whether
 * any stage has work at all. The streams do not say whose work a stage holds, so while
 * other jobs keep the pipeline busy the caller judges a job by how long its queues stay
 * empty (service.ts).
 */
export async function jobInFlight(src: StatusSources, job: JobRecord, now: number): Promise<{ queued: boolean; pipelineBusy: boolean }> {
  if ((await jobLanesWithWork(src, job.id, now)).length > 0) return { queued: true, pipelineBusy: true };
  return { queued: false, pipelineBusy: (await pipelineBacklog(src.admin, src.hosts)).total > 0 };
}

export async function jobStatus(src: StatusSources, job: JobRecord, now: number): Promise<JobStatus> {
  const lanes = await jobLanesWithWork(src, job.id, now);
  let queued: number | null = 0;
  for (const [i, l] of lanes.entries()) {
    if (i >= MAX_COUNTED_LANES) {
      queued = null;
      break;
    }
    queued += await src.admin.countFrom(EDGES.hostq.stream, l.subject, l.fromSeq);
  }
  const slots = Object.entries(await src.admin.subjectCounts(EDGES.revisits.stream, `${SUBJECTS.revisit}.*.${job.id}`));
  const idle = lanes.length === 0 && (await pipelineBacklog(src.admin, src.hosts)).total === 0;
  return {
    ...job,
    activity: idle ? 'idle' : 'crawling',
    queued,
    due_for_revisit: slots.reduce((n, [, count]) => n + count, 0),
    next_revisit_at: slots.length > 0 ? Math.min(...slots.map(([s]) => Number(s.split('.')[2]))) * src.slotMs : null,
    ...(await outputCounts(src, job.id)),
  };
}

async function outputCounts(src: Pick<StatusSources, 'outDir' | 'output'>, crawlId: string): Promise<{ outcomes: Record<string, number>; pages: number }> {
  const outDir = src.outDir;
  if (!outDir || !existsSync(path.join(outDir, 'fetch_log'))) return { outcomes: {}, pages: 0 };
  const shared = src.output ? await src.output() : null;
  const db = shared ?? (await openOutputDatabase(outDir));
  try {
    const outcomes = await db.run(`SELECT outcome, count(*)::BIGINT FROM fetch_log WHERE crawl_id = ${sqlString(crawlId)} GROUP BY 1 ORDER BY 1`);
    const pages = existsSync(path.join(outDir, 'pages')) ? await db.run(`SELECT count(*)::BIGINT FROM raw_pages WHERE crawl_id = ${sqlString(crawlId)}`) : { rows: [[0]] };
    return { outcomes: Object.fromEntries(outcomes.rows.map((r) => [String(r[0]), Number(r[1])])), pages: Number(pages.rows[0]?.[0] ?? 0) };
  } finally {
    if (!shared) await db.close();
  }
}
