import { batchesBy, encodeAdmittedBatch, type AdmittedUrl, type CandidateUrl } from '../../schemas/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import type { Emit, StageContext, StageInput } from '../../pipeline/stage.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { outcomeEmit, urlOutcome } from '../shared/messages/outcome-emit.js';
import { crawlIdOf, jobOf } from '../shared/jobs/job-fields.js';
import { domainInlinksOf } from './inlink-notes.js';

/**
 * One fetch id per URL per crawl, whoever admits it and however often: a candidate admitted
 * again after a crash (or a takeover) is published with the same fetch id and msgId
 * (Admissions.emits), which the frontier's duplicate window drops. A new crawl id (a recrawl) gives new fetch ids.
 */
export const fetchIdOf = (crawlId: string, url: string) => stableId(crawlId, url);

/** A revisit is a new fetch of a known URL: its own fetch id, from when it was due. */
const fetchIdFor = (ctx: StageContext, c: CandidateUrl) =>
  c.revisit ? stableId(crawlIdOf(ctx, c), c.url, c.revisit.due_at) : fetchIdOf(crawlIdOf(ctx, c), c.url);

/**
 * What the seen-filter decided for one candidate message, whatever the order of the
 * decisions: the URLs it admits (each stamped with its fetch id, the time and its domain's
 * in-links when it is admitted) and the outcome rows of those over the page limit.
 */
export class Admissions {
  private readonly admitted: Array<{ index: number; url: AdmittedUrl }> = [];
  private readonly outcomes: Emit[] = [];

  constructor(
    private readonly ctx: StageContext,
    private readonly input: StageInput<CandidateUrl[]>,
  ) {}

  /** Admits the candidate at `index` of the message; `held`: by the first pass (first-pass.ts). */
  admit(index: number, c: CandidateUrl, held = false): void {
    const url: AdmittedUrl = { ...c, fetch_id: fetchIdFor(this.ctx, c), admitted_at: this.ctx.clock.now() };
    const importance = domainInlinksOf(this.ctx).count(c.domain);
    if (importance > 0) url.importance = importance;
    if (held) url.held = true;
    this.admitted.push({ index, url });
  }

  /** The candidate's crawl (or job) has admitted `limit` pages already: a `filtered` row. */
  overLimit(c: CandidateUrl, limit: number): void {
    this.ctx.metrics.count('seen-filter', 'urls', 'max_pages');
    const crawl = crawlIdOf(this.ctx, c);
    this.outcomes.push(
      outcomeEmit(
        this.ctx,
        `maxpages:${fetchIdOf(crawl, c.url)}`,
        urlOutcome(
          { ...jobOf(c), url: c.url, host: c.host, depth: c.depth },
          {
            event_id: c.job === undefined ? stableId('max_pages', c.url) : stableId('max_pages', c.url, c.job),
            outcome: 'filtered',
            reason: `max_pages: the crawl's limit of ${limit} pages is reached`,
            fetch_time: this.ctx.clock.now(),
          },
        ),
      ),
    );
  }

  /**
   * The frontier messages of what the message admitted, then the outcome rows. The admitted
   * URLs go in message order, whatever the order of decisions, so a redelivery publishes the
   * same batches: one message per partition subject (all of them share the input's
   * partition), in batches. The msgId makes a redelivery's publish a duplicate the frontier
   * drops: a message of one candidate, as before batching, by its fetch id; a batch by the
   * candidate message it answers and its first URL, so a redelivery that decides again after
   * a takeover (the same URLs, or fewer when the page limit filled meanwhile) is dropped whole
   * rather than queueing its URLs a second time.
   */
  emits(): Emit[] {
    this.admitted.sort((a, b) => a.index - b.index);
    const urls = this.admitted.map((a) => a.url);
    const single = this.input.message.length === 1;
    const seq = this.input.streamSeq;
    const frontier = batchesBy(urls, (a) => subjectFor('frontier', a.host, this.ctx.settings.partitions)).map(({ key, items }, i) => ({
      subject: key,
      data: encodeAdmittedBatch(items),
      msgId: single ? `admit:${items[0]!.fetch_id}` : `admits:${seq}:${i}:${items[0]!.fetch_id}`,
    }));
    return [...frontier, ...this.outcomes];
  }
}
