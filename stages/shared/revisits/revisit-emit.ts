import { encodeRevisit, type RevisitSchedule, type RevisitState } from '../../../schemas/index.js';
import type { Emit, StageContext } from '../../../pipeline/stage.js';
import { SUBJECTS } from '../../../topology/index.js';
import { JobRecordCache } from '../jobs/job-records.js';
import { oncePerObject } from '../once-per-object.js';
import { changeRatePerDay, nextRevisit, type FetchResult } from './revisit-policy.js';

const jobRecordsOf = oncePerObject((ctx: StageContext) => new JobRecordCache(ctx.kv.jobs));

/** The time slot a due time falls in: the schedule is read one slot at a time. */
export const slotOf = (dueAt: number, slotMs: number) => Math.floor(dueAt / slotMs);

/** `crawl.revisit.<slot>.<job>` */
export const revisitSubject = (slot: number, job: string) => `${SUBJECTS.revisit}.${slot}.${job}`;

/**
 * The revisit record of a job's URL after a fetch (fetch for 304s and failures, simhash for
 * pages), or nothing: a URL outside any job, a job without revisits, or nothing to revisit.
 * The msgId makes a redelivered fetch schedule its revisit once. `note` says what the fetch
 * found and when the URL is due again, and `schedule` when and how often it is thought to
 * change, for its fetch_log row.
 */
export async function revisitEmit(
  ctx: StageContext,
  m: { job?: string | undefined; url: string; host: string; depth: number; revisit?: RevisitState | undefined; hint_interval_ms?: number | undefined; importance?: number | undefined },
  fetchId: string,
  result: FetchResult,
  extra: { etag?: string | null; lastModified?: string | null; lastModifiedAt?: number | undefined } = {},
): Promise<{ emits: Emit[]; note?: string; schedule?: RevisitSchedule }> {
  if (m.job === undefined) return { emits: [] };
  const job = await jobRecordsOf(ctx).get(m.job, ctx.clock.now());
  if (!job?.spec.revisit || job.state === 'cancelled') return { emits: [] };
  const now = ctx.clock.now();
  // Last-Modified says how long the page stood unchanged: a first hint like a sitemap's
  const sinceModified = extra.lastModifiedAt !== undefined && extra.lastModifiedAt <= now ? now - extra.lastModifiedAt : undefined;
  const state = nextRevisit(job.spec.revisit, m.revisit, result, now, { hintMs: m.hint_interval_ms ?? sinceModified, etag: extra.etag, lastModified: extra.lastModified, importance: m.importance });
  if (!state) return { emits: [], note: 'revisits end' };
  ctx.metrics.count('revisits', 'scheduled', state.changed === undefined ? 'first' : state.changed ? 'changed' : 'unchanged');
  const emits: Emit[] = [
    {
      subject: revisitSubject(slotOf(state.due_at, ctx.settings.revisitSlotMs), m.job),
      msgId: `revisit:${fetchId}`,
      data: encodeRevisit({ v: 1, job: m.job, url: m.url, host: m.host, depth: m.depth, state }),
    },
  ];
  return { emits, note: revisitNote(m.revisit, state), schedule: { next_due_at: state.due_at, change_rate: changeRatePerDay(state) } };
}

/** `revisit: changed since the fetch of <time>; next in 12 s`, or for a first fetch `next revisit in 1 d`. */
export function revisitNote(prev: RevisitState | undefined, next: RevisitState): string {
  // when it is due (sooner than interval_ms for an important page, revisit-policy.ts)
  const due = `in ${humanMs(next.due_at - next.fetched_at)}`;
  if (next.changed === undefined || !prev) return `next revisit ${due}`;
  return `revisit: ${next.changed ? 'changed' : 'unchanged'} since the fetch of ${new Date(prev.fetched_at).toISOString()}; next ${due}`;
}

function humanMs(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['min', 60_000], ['s', 1000]] as const) {
    if (ms >= size) return `${Math.round((ms / size) * 10) / 10} ${unit}`;
  }
  return `${ms} ms`;
}
