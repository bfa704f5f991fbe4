import { encodeAdmitted, type AdmittedUrl, type CandidateUrl } from '../../schemas/index.js';
import { casUpdate } from '../../pipeline/kv-store.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, type Emit, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { outcomeEmit } from '../shared/messages/outcome-emit.js';
import type { PartitionSeenSet } from './partition-seen-set.js';
import { JobBook } from '../shared/job-book.js';
import { crawlIdOf, jobOf } from '../shared/job-fields.js';
import { perKey } from '../shared/per-key.js';

const jobBookOf = perKey((ctx: StageContext) => new JobBook(ctx.kv.jobs));

const admittedCounter = (crawlId: string) => `admitted-count.${crawlId}`;

/**
 * One fetch id per URL per crawl, whoever admits it and however often: a candidate admitted
 * again after a crash (or a takeover) publishes the same `admit:<fetch_id>`, which the
 * frontier's duplicate window drops. A new crawl id (a recrawl) gives new fetch ids.
 */
export const fetchIdOf = (crawlId: string, url: string) => stableId(crawlId, url);

/** What the seen set holds for a URL: each job has its own view of what was seen (the same URL in two jobs is two fetches). */
export const seenKeyOf = (c: Pick<CandidateUrl, 'url' | 'job'>) => (c.job === undefined ? c.url : `${c.job} ${c.url}`);

/** A revisit is a new fetch of a known URL: its own fetch id, from when it was due. */
const fetchIdFor = (ctx: StageContext, c: CandidateUrl) =>
  c.revisit ? stableId(crawlIdOf(ctx, c), c.url, c.revisit.due_at) : fetchIdOf(crawlIdOf(ctx, c), c.url);

function admitted(ctx: StageContext, c: CandidateUrl): Emit {
  const fetchId = fetchIdFor(ctx, c);
  const message: AdmittedUrl = { ...c, fetch_id: fetchId, admitted_at: ctx.clock.now() };
  return {
    subject: subjectFor('frontier', c.host, ctx.settings.partitions),
    data: encodeAdmitted(message),
    msgId: `admit:${fetchId}`,
  };
}

function overLimit(ctx: StageContext, c: CandidateUrl, limit: number): Outcome {
  ctx.metrics.count('seen-filter', 'urls', 'max_pages');
  const crawl = crawlIdOf(ctx, c);
  return emit(
    outcomeEmit(ctx, `maxpages:${fetchIdOf(crawl, c.url)}`, {
      ...jobOf(c),
      event_id: c.job === undefined ? stableId('max_pages', c.url) : stableId('max_pages', c.url, c.job),
      fetch_id: null,
      url: c.url,
      host: c.host,
      outcome: 'filtered',
      reason: `max_pages: the crawl's limit of ${limit} pages is reached`,
      fetch_status: null,
      fetch_time: ctx.clock.now(),
      duration_ms: null,
      depth: c.depth,
    }),
  );
}

/**
 * Admits a URL the first time its partition's seen set meets it. The set belongs to this
 * process while it holds the partition's lease (pipeline/partition-owner.ts), so no other
 * process decides for these URLs meanwhile. A URL the set reports as seen is dropped
 * silently (counted under `seen`): a Bloom false positive drops a new URL the same way, about
 * 0.05 % of them (README, "The seen set"); no fetch_log row, since a row per repeated link
 * would be most of the log and a false positive cannot be told from a repeat. A redelivery of a message that was admitted repeats the
 * admission with the same fetch id; one that was over the page limit stays over it.
 */
export async function handleSeenFilter(input: StageInput<CandidateUrl>, ctx: StageContext, seen: PartitionSeenSet): Promise<Outcome> {
  const c = input.message;
  if (c.via === 'revisit') {
    // a known URL fetched again (a job's schedule): past the set, which holds it already
    ctx.metrics.count('seen-filter', 'urls', 'revisit');
    return emit(admitted(ctx, c));
  }
  const verdict = seen.check(seenKeyOf(c), input.streamSeq);
  if (verdict.kind === 'seen') {
    ctx.metrics.count('seen-filter', 'urls', 'seen');
    return emit();
  }
  const limit = c.job === undefined ? ctx.settings.maxPages : ((await jobBookOf(ctx).get(c.job, ctx.clock.now()))?.spec.max_pages ?? 0);
  if (verdict.kind === 'again' && verdict.decision === 'admitted') return emit(admitted(ctx, c));
  if (verdict.kind === 'again' && verdict.decision === 'over_limit') return overLimit(ctx, c, limit);
  // new, or learnt from a replay without its decision: count it against the page limit, so
  // the limit is never exceeded (after a crash a URL may be counted twice: stricter, not looser)
  if (limit > 0) {
    const count = await casUpdate<number, number>(ctx.kv.seen, admittedCounter(crawlIdOf(ctx, c)), (n) => ({ value: (n ?? 0) + 1, result: (n ?? 0) + 1 }));
    if (count > limit) {
      seen.decide(input.streamSeq, 'over_limit');
      return overLimit(ctx, c, limit);
    }
  }
  seen.decide(input.streamSeq, 'admitted');
  ctx.metrics.count('seen-filter', 'urls', 'admitted');
  return emit(admitted(ctx, c));
}
