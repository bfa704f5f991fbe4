import type { CandidateUrl } from '../../schemas/index.js';
import type { StageContext } from '../../pipeline/stage.js';
import { casUpdate } from '../../pipeline/kv-store.js';
import { JobRecordCache } from '../shared/jobs/job-records.js';
import { crawlIdOf } from '../shared/jobs/job-fields.js';
import { oncePerObject } from '../shared/once-per-object.js';
import { admittedCountKey } from '../shared/breadth/page-budget.js';

const jobRecordsOf = oncePerObject((ctx: StageContext) => new JobRecordCache(ctx.kv.jobs));

/** The page limit of a candidate's crawl (--max-pages) or job (its max_pages); 0 for none. Read once per message and job. */
export class PageLimits {
  private readonly limits = new Map<string | undefined, number>();

  constructor(private readonly ctx: StageContext) {}

  async of(c: CandidateUrl): Promise<number> {
    let limit = this.limits.get(c.job);
    if (limit === undefined) {
      limit = c.job === undefined ? this.ctx.settings.maxPages : ((await jobRecordsOf(this.ctx).get(c.job, this.ctx.clock.now()))?.spec.max_pages ?? 0);
      this.limits.set(c.job, limit);
    }
    return limit;
  }
}

/**
 * Counts new candidates against their crawl's admitted count (crawl-seen bucket,
 * page-budget.ts), so the limit is never exceeded: one counter write per crawl for all of
 * them, each then given, in order, the count it made (as if each had been added alone). After
 * a crash a URL may be counted twice: stricter, not looser. `limits[i]` is candidate i's limit
 * (0: none, not counted); those in `uncounted` (held by the first pass) are counted when
 * served instead. Returns the places (in `candidates`) of those over their limit.
 */
export async function overPageLimit(ctx: StageContext, candidates: readonly CandidateUrl[], limits: readonly number[], uncounted: ReadonlySet<number>): Promise<Set<number>> {
  const counted = [...candidates.keys()].filter((i) => limits[i]! > 0 && !uncounted.has(i));
  const added = new Map<string, number>();
  for (const i of counted) {
    const crawl = crawlIdOf(ctx, candidates[i]!);
    added.set(crawl, (added.get(crawl) ?? 0) + 1);
  }
  const reached = new Map<string, number>();
  await Promise.all(
    [...added].map(async ([crawl, n]) => {
      const before = await casUpdate<number, number>(ctx.kv.seen, admittedCountKey(crawl), (count) => ({ value: (count ?? 0) + n, result: count ?? 0 }));
      reached.set(crawl, before);
    }),
  );
  const over = new Set<number>();
  for (const i of counted) {
    const crawl = crawlIdOf(ctx, candidates[i]!);
    const count = (reached.get(crawl) ?? 0) + 1;
    reached.set(crawl, count);
    if (count > limits[i]!) over.add(i);
  }
  return over;
}
