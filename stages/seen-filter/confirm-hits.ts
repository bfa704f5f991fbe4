import type { CandidateUrl } from '../../schemas/index.js';
import type { StageContext, StageInput } from '../../pipeline/stage.js';
import type { PartitionSeenSet, Verdict } from './partition-seen-set.js';
import type { Admissions } from './admissions.js';
import { exactKeyOf } from './exact-key.js';

/** What the seen set holds for a URL: each job has its own view of what was seen (the same URL in two jobs is two fetches). */
export const seenKeyOf = (c: Pick<CandidateUrl, 'url' | 'job'>) => (c.job === undefined ? c.url : `${c.job} ${c.url}`);

export interface Candidate {
  c: CandidateUrl;
  /** its place in the message */
  index: number;
  /** its key in the exact record (exact-key.ts) */
  exact: string;
}

export interface Sorted {
  /** to be decided here (new, or learnt from a replay without its decision), in message order */
  fresh: Candidate[];
  /** decided by an earlier delivery of this message: decided the same way, their keys written again */
  repeated: Candidate[];
  /** those of `repeated` that were over the page limit (the admitted ones are admitted already) */
  repeatedOverLimit: Candidate[];
}

/**
 * Sorts the candidates of a message by what the partition's seen set knows of them. A Bloom
 * miss is a new URL for certain. A Bloom hit is confirmed: seen if a message being handled
 * holds the URL, or the partition's recent keys know it, or its key is in the exact record
 * (one KV read, all of the message's at once); a hit on none of these was a false positive,
 * and the URL is new. A URL seen before is dropped with no row (counted under `seen`): a row
 * per repeated link would be most of the log.
 *
 * What needs no decision is admitted at once: a revisit (past the set, which holds it
 * already) and a URL an earlier delivery of this message admitted (the same fetch id).
 */
export async function confirmHits(ctx: StageContext, seen: PartitionSeenSet, input: StageInput<CandidateUrl[]>, admissions: Admissions): Promise<Sorted> {
  const seq = input.streamSeq;
  const sorted: Sorted = { fresh: [], repeated: [], repeatedOverLimit: [] };
  const unconfirmed: Candidate[] = [];
  const sort = (verdict: Verdict, candidate: Candidate) => {
    if (verdict.kind === 'seen') ctx.metrics.count('seen-filter', 'urls', 'seen');
    else if (verdict.kind === 'unconfirmed') unconfirmed.push(candidate);
    else if (verdict.kind === 'new' || verdict.decision === 'unknown') sorted.fresh.push(candidate);
    else {
      sorted.repeated.push(candidate);
      if (verdict.decision === 'admitted') admissions.admit(candidate.index, candidate.c);
      else sorted.repeatedOverLimit.push(candidate);
    }
  };
  for (const [index, c] of input.message.entries()) {
    if (c.via === 'revisit') {
      // a known URL fetched again (a job's schedule): past the set, which holds it already
      ctx.metrics.count('seen-filter', 'urls', 'revisit');
      admissions.admit(index, c);
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
    sorted.fresh.sort((a, b) => a.index - b.index);
  }
  return sorted;
}

/** the exact record's keys carry no value: their presence is the record */
const NO_VALUE = new Uint8Array(0);

/**
 * Writes the exact-record keys of the URLs decided here, so no URL is ever lost to a false
 * positive nor decided twice. Started, not awaited: the caller awaits it before its outcome
 * goes to the runner (which acks the message only after publishing it), and only then marks
 * the keys recorded in the seen set. A set begun by a version that kept no exact record
 * (`confirmsHits` false) gets no keys.
 */
export function writeExactKeys(ctx: StageContext, seen: PartitionSeenSet, decided: readonly Candidate[]): Promise<unknown> {
  const writing = seen.confirmsHits ? Promise.all(decided.map((f) => ctx.kv.seenKeys.put(f.exact, NO_VALUE))) : Promise.resolve([]);
  writing.catch(() => undefined); // awaited by the caller; a failure then fails the message
  return writing;
}
