import { batchesBy, encodeAdmittedBatch, type AdmittedUrl, type CandidateUrl } from '../../schemas/index.js';
import { casUpdate } from '../../pipeline/kv-store.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, type Emit, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { outcomeEmit } from '../shared/messages/outcome-emit.js';
import type { PartitionSeenSet, Verdict } from './partition-seen-set.js';
import { exactKeyOf } from './exact-key.js';
import { JobBook } from '../shared/job-book.js';
import { crawlIdOf, jobOf } from '../shared/job-fields.js';
import { perKey } from '../shared/per-key.js';
import { heldByFirstPass } from '../shared/breadth/first-pass.js';
import { admittedCountKey } from '../shared/breadth/page-budget.js';
import { DomainInlinks, importanceKey, isImportanceStep, type ImportanceNote } from '../shared/importance/domain-inlinks.js';
import { jsonValue } from '../../pipeline/kv-store.js';

const jobBookOf = perKey((ctx: StageContext) => new JobBook(ctx.kv.jobs));

const admittedCounter = admittedCountKey;

/** this process's in-link counts per registrable domain (the importance estimate) */
export const domainInlinksOf = perKey((_ctx: StageContext) => new DomainInlinks());

/**
 * One fetch id per URL per crawl, whoever admits it and however often: a candidate admitted
 * again after a crash (or a takeover) is published with the same fetch id and msgId
 * (admittedEmits), which the frontier's duplicate window drops. A new crawl id (a recrawl) gives new fetch ids.
 */
export const fetchIdOf = (crawlId: string, url: string) => stableId(crawlId, url);

/** What the seen set holds for a URL: each job has its own view of what was seen (the same URL in two jobs is two fetches). */
export const seenKeyOf = (c: Pick<CandidateUrl, 'url' | 'job'>) => (c.job === undefined ? c.url : `${c.job} ${c.url}`);

/** A revisit is a new fetch of a known URL: its own fetch id, from when it was due. */
const fetchIdFor = (ctx: StageContext, c: CandidateUrl) =>
  c.revisit ? stableId(crawlIdOf(ctx, c), c.url, c.revisit.due_at) : fetchIdOf(crawlIdOf(ctx, c), c.url);

function admittedUrl(ctx: StageContext, c: CandidateUrl): AdmittedUrl {
  const url: AdmittedUrl = { ...c, fetch_id: fetchIdFor(ctx, c), admitted_at: ctx.clock.now() };
  const importance = domainInlinksOf(ctx).count(c.domain);
  if (importance > 0) url.importance = importance;
  return url;
}

/**
 * The frontier messages of what one candidate message admitted: one per partition subject (all
 * of them share the input's partition), in batches. The msgId makes a redelivery's publish a
 * duplicate the frontier drops: a message of one candidate, as before batching, by its fetch
 * id; a batch by the candidate message it answers and its first URL, so a redelivery that
 * decides again after a takeover (the same URLs, or fewer when the page limit filled meanwhile)
 * is dropped whole rather than queueing its URLs a second time.
 */
function admittedEmits(ctx: StageContext, urls: AdmittedUrl[], input: StageInput<CandidateUrl[]>): Emit[] {
  const single = input.message.length === 1;
  return batchesBy(urls, (a) => subjectFor('frontier', a.host, ctx.settings.partitions)).map(({ key, items }, i) => ({
    subject: key,
    data: encodeAdmittedBatch(items),
    msgId: single ? `admit:${items[0]!.fetch_id}` : `admits:${input.streamSeq}:${i}:${items[0]!.fetch_id}`,
  }));
}

function overLimit(ctx: StageContext, c: CandidateUrl, limit: number): Emit {
  ctx.metrics.count('seen-filter', 'urls', 'max_pages');
  const crawl = crawlIdOf(ctx, c);
  return outcomeEmit(ctx, `maxpages:${fetchIdOf(crawl, c.url)}`, {
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
  });
}

/**
 * Admits each URL of a candidate message (one, or a page's batch, schemas/url-batches.ts) the
 * first time its partition's seen set meets it. The set belongs to this process while it holds
 * the partition's lease (pipeline/partition-owner.ts), so no other process decides for these
 * URLs meanwhile. A Bloom miss is a new URL for certain. A Bloom hit is confirmed: seen if a
 * message being handled holds the URL, or the partition's recent keys know it, or its key is
 * in the exact record (one KV read, all of a message's at once); a hit on none of these was
 * a false positive, and the URL is new. Every URL decided here (admitted, or over the page
 * limit) has its key written to the exact record before the message is acked, so no URL is
 * ever lost to a false positive, nor decided twice. A URL seen before is dropped with no row
 * (counted under `seen`): a row per repeated link would be most of the log. A redelivery of a
 * message repeats the decision made for each of its URLs: admitted with the same fetch id, or
 * over the page limit.
 */
export async function handleSeenFilter(input: StageInput<CandidateUrl[]>, ctx: StageContext, seen: PartitionSeenSet): Promise<Outcome> {
  const outcomes: Emit[] = [];
  const admitted: Array<{ index: number; url: AdmittedUrl }> = [];
  const limits = new Map<string | undefined, number>();
  const limitOf = async (c: CandidateUrl): Promise<number> => {
    let limit = limits.get(c.job);
    if (limit === undefined) {
      limit = c.job === undefined ? ctx.settings.maxPages : ((await jobBookOf(ctx).get(c.job, ctx.clock.now()))?.spec.max_pages ?? 0);
      limits.set(c.job, limit);
    }
    return limit;
  };
  const seq = input.streamSeq;
  // decided here (new, or learnt from a replay without its decision): decided below, in message order
  const fresh: Candidate[] = [];
  // decided by an earlier delivery of this message: decided the same way, their keys written again
  const repeated: Candidate[] = [];
  const repeatedOverLimit: Candidate[] = [];
  const unconfirmed: Candidate[] = [];
  const sort = (verdict: Verdict, candidate: Candidate) => {
    if (verdict.kind === 'seen') ctx.metrics.count('seen-filter', 'urls', 'seen');
    else if (verdict.kind === 'unconfirmed') unconfirmed.push(candidate);
    else if (verdict.kind === 'new' || verdict.decision === 'unknown') fresh.push(candidate);
    else {
      repeated.push(candidate);
      if (verdict.decision === 'admitted') admitted.push({ index: candidate.index, url: admittedUrl(ctx, candidate.c) });
      else repeatedOverLimit.push(candidate);
    }
  };
  // every link counts as an in-link, repeats included, before any of the page's URLs is stamped
  const inlinks = domainInlinksOf(ctx);
  const steps = new Map<string, number>();
  for (const c of input.message) {
    if (c.via !== 'link' || c.source_url === null) continue;
    const n = inlinks.saw(c.source_url, c.domain);
    if (isImportanceStep(n)) steps.set(c.domain, n);
  }
  // the gates' news of a domain's count (domain-inlinks.ts); written with the message's other writes
  const noting = Promise.all([...steps].map(([domain, n]) => ctx.kv.hosts.put(importanceKey(domain), jsonValue({ domain, inlinks: n } satisfies ImportanceNote))));
  noting.catch(() => undefined); // awaited below; a failure then fails the message
  for (const [index, c] of input.message.entries()) {
    if (c.via === 'revisit') {
      // a known URL fetched again (a job's schedule): past the set, which holds it already
      ctx.metrics.count('seen-filter', 'urls', 'revisit');
      admitted.push({ index, url: admittedUrl(ctx, c) });
      continue;
    }
    const key = seenKeyOf(c);
    const exact = exactKeyOf(ctx.settings.crawlId, key);
    const verdict = seen.check(key, exact, seq, index);
    if (verdict.kind === 'seen') ctx.metrics.count('seen-filter', 'bloom_hits', verdict.by === 'bloom' ? 'unconfirmed' : verdict.by);
    sort(verdict, { c, index, exact });
  }
  if (unconfirmed.length > 0) {
    const found = await Promise.all(unconfirmed.map((u) => ctx.kv.seenKeys.get(u.exact)));
    // decided together after the reads, with no await in between: a URL two messages both
    // found missing is taken up by the first only
    for (const [i, u] of unconfirmed.entries()) {
      const verdict = seen.resolve(u.exact, found[i] !== null, seq, u.index);
      ctx.metrics.count('seen-filter', 'bloom_hits', found[i] !== null ? 'in_record' : verdict.kind === 'new' ? 'false_positive' : 'taken_meanwhile');
      sort(verdict, u);
    }
    fresh.sort((a, b) => a.index - b.index);
  }
  // written while the page limit is counted; awaited before the outcome goes to the runner,
  // which acks the message only after publishing it
  const recording = seen.confirmsHits ? Promise.all([...fresh, ...repeated].map((f) => ctx.kv.seenKeys.put(f.exact, NO_VALUE))) : Promise.resolve([]);
  recording.catch(() => undefined); // awaited below; a failure then fails the message
  for (const r of repeatedOverLimit) outcomes.push(overLimit(ctx, r.c, await limitOf(r.c)));
  const limited = await Promise.all(fresh.map((f) => limitOf(f.c)));
  // counted against the page limit, so the limit is never exceeded (after a crash a URL may be
  // counted twice: stricter, not looser); one counter write for all of a crawl's new URLs here
  // held by the first pass (--target-unique-domains): admitted, not counted until served
  const held = await heldByFirstPass(ctx, fresh.map((f) => f.c));
  const counts = await countAdmissions(ctx, fresh.filter((_, i) => limited[i]! > 0 && !held.has(i)).map((f) => f.c));
  for (const [i, { c, index }] of fresh.entries()) {
    const limit = limited[i]!;
    if (held.has(i)) {
      seen.decide(seq, 'admitted', index);
      ctx.metrics.count('seen-filter', 'urls', 'held');
      admitted.push({ index, url: { ...admittedUrl(ctx, c), held: true } });
      continue;
    }
    if (limit > 0 && counts.next(crawlIdOf(ctx, c)) > limit) {
      seen.decide(seq, 'over_limit', index);
      outcomes.push(overLimit(ctx, c, limit));
      continue;
    }
    seen.decide(seq, 'admitted', index);
    ctx.metrics.count('seen-filter', 'urls', 'admitted');
    admitted.push({ index, url: admittedUrl(ctx, c) });
  }
  await recording;
  await noting;
  for (const f of [...fresh, ...repeated]) seen.recorded(f.exact);
  // in message order, whatever the order of decisions: a redelivery then publishes the same batches
  admitted.sort((a, b) => a.index - b.index);
  return emit(...admittedEmits(ctx, admitted.map((a) => a.url), input), ...outcomes);
}

interface Candidate {
  c: CandidateUrl;
  /** its place in the message */
  index: number;
  exact: string;
}

/** the exact record's keys carry no value: their presence is the record */
const NO_VALUE = new Uint8Array(0);

/**
 * Adds the candidates to their crawl's admitted count, one write a crawl; `next(crawl)` then
 * gives each candidate, in order, the count it made (as if each had been added alone).
 */
async function countAdmissions(ctx: StageContext, candidates: CandidateUrl[]): Promise<{ next: (crawl: string) => number }> {
  const added = new Map<string, number>();
  for (const c of candidates) {
    const crawl = crawlIdOf(ctx, c);
    added.set(crawl, (added.get(crawl) ?? 0) + 1);
  }
  const reached = new Map<string, number>();
  await Promise.all(
    [...added].map(async ([crawl, n]) => {
      const before = await casUpdate<number, number>(ctx.kv.seen, admittedCounter(crawl), (count) => ({ value: (count ?? 0) + n, result: count ?? 0 }));
      reached.set(crawl, before);
    }),
  );
  return {
    next: (crawl) => {
      const count = (reached.get(crawl) ?? 0) + 1;
      reached.set(crawl, count);
      return count;
    },
  };
}
