import type { CandidateUrl } from '../../schemas/index.js';
import { emit, type Disposition, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { heldByFirstPass } from '../shared/breadth/first-pass.js';
import type { PartitionSeenSet } from './partition-seen-set.js';
import { Admissions } from './admissions.js';
import { confirmHits, writeExactKeys } from './confirm-hits.js';
import { noteInlinks } from './inlink-notes.js';
import { overPageLimit, PageLimits } from './page-limit.js';

/** the fetch id of a URL of a crawl (admissions.ts) */
export { fetchIdOf } from './admissions.js';

/**
 * Admits each URL of a candidate message (one, or a page's batch, schemas/url-batches.ts) the
 * first time its partition's seen set meets it. The set belongs to this process while it holds
 * the partition's lease (pipeline/partition-owner.ts), so no other process decides for these
 * URLs meanwhile. Every URL decided here (admitted, or over the page limit) has its key written
 * to the exact record before the message is acked, so no URL is ever lost to a Bloom false
 * positive, nor decided twice. A redelivery of a message repeats the decision made for each of
 * its URLs: admitted with the same fetch id, or over the page limit.
 *
 * The steps, in order (each in its own file):
 * 1. count the page's links as in-links of their domains (inlink-notes.ts), before any URL is stamped;
 * 2. sort the URLs into new, repeated and seen, confirming Bloom hits (confirm-hits.ts);
 * 3. write the exact-record keys of the new and repeated ones (confirm-hits.ts), while
 * 4. the page limit of each new URL is read (page-limit.ts),
 * 5. the first pass holds links to domains already reached (--target-unique-domains, first-pass.ts),
 * 6. the others are counted against the page limit (page-limit.ts);
 * 7. decide each new URL: held, over the limit, or admitted; then await the writes.
 */
export async function handleSeenFilter(input: StageInput<CandidateUrl[]>, ctx: StageContext, seen: PartitionSeenSet): Promise<Disposition> {
  const seq = input.streamSeq;
  const admissions = new Admissions(ctx, input);
  const noting = noteInlinks(ctx, input.message);
  const { fresh, repeated, repeatedOverLimit } = await confirmHits(ctx, seen, input, admissions);
  // written while the page limit is counted; awaited before the disposition goes to the runner,
  // which acks the message only after publishing it
  const recording = writeExactKeys(ctx, seen, [...fresh, ...repeated]);
  const limits = new PageLimits(ctx);
  for (const r of repeatedOverLimit) admissions.overLimit(r.c, await limits.of(r.c));
  const candidates = fresh.map((f) => f.c);
  const limited = await Promise.all(candidates.map((c) => limits.of(c)));
  // held by the first pass: admitted, not counted against the page limit until served
  const held = await heldByFirstPass(ctx, candidates);
  const over = await overPageLimit(ctx, candidates, limited, held);
  // decided together, with no await in between, and remembered so that a redelivery repeats them
  for (const [i, { c, index }] of fresh.entries()) {
    if (held.has(i)) {
      seen.decide(seq, 'admitted', index);
      ctx.metrics.count('seen-filter', 'urls', 'held');
      admissions.admit(index, c, true);
    } else if (over.has(i)) {
      seen.decide(seq, 'over_limit', index);
      admissions.overLimit(c, limited[i]!);
    } else {
      seen.decide(seq, 'admitted', index);
      ctx.metrics.count('seen-filter', 'urls', 'admitted');
      admissions.admit(index, c);
    }
  }
  await recording;
  await noting;
  for (const f of [...fresh, ...repeated]) seen.recorded(f.exact);
  return emit(...admissions.emits());
}
