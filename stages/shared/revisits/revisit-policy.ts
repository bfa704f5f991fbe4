import { durationMs, type RevisitPolicy, type RevisitState } from '../../../schemas/index.js';

/** What a fetch found, as the revisit schedule sees it. */
export type FetchResult =
  /** a page: its content digest and SimHash */
  | { kind: 'page'; digest: string; simhash: string }
  /** a 304 to a conditional GET */
  | { kind: 'not_modified' }
  /** no page this time (a failure after retries, a non-HTML answer): try again later, less often */
  | { kind: 'failed' }
  /** nothing left to revisit: the URL redirects, is gone (404, 410), or robots.txt keeps it out */
  | { kind: 'stop' };

/** Two SimHashes this close (bits) are the same page with trivial changes (as near-duplicates are). */
export const UNCHANGED_WITHIN_BITS = 3;

/** Each check's evidence counts this much less at the next one: about the last ten checks decide. */
const EVIDENCE_DECAY = 0.9;
/** An estimate never lengthens the interval more than this at once (a run of unchanged checks backs off in steps). */
const MAX_GROWTH = 2;
/** The most an important page's revisit is brought forward: 4 times as often as its change rate alone asks, never below the policy's min. */
export const MAX_IMPORTANCE_SPEEDUP = 4;

/**
 * How much sooner a page is revisited for its domain's in-links (seed 000: next_due_at =
 * last_crawled + f(change_rate, importance)): the square root of the gate's importance weight
 * (1 + log2(1 + in-links)), at most {@link MAX_IMPORTANCE_SPEEDUP}. 1 for an unlinked domain,
 * 2 for one linked 7 times, about 3.3 for 1,000, 4 from about 30,000. A root, not the weight:
 * the change rate stays the main reason to come back, importance tilts it.
 */
export function importanceSpeedup(inlinks: number | undefined): number {
  if (!inlinks || inlinks <= 0) return 1;
  return Math.min(MAX_IMPORTANCE_SPEEDUP, Math.sqrt(1 + Math.log2(1 + inlinks)));
}

/**
 * The next revisit of a URL after a fetch, or null for none. Unchanged is a 304, the same
 * digest, or a SimHash within {@link UNCHANGED_WITHIN_BITS} of the last copy. The policy's
 * strategy sets the interval (see RevisitPolicy); a failure grows it by `increase`; always
 * within [min, max]. The first interval is the sitemap's or Last-Modified's hint when there
 * is one, else `initial`. The page comes due sooner by its importance (importanceSpeedup),
 * still no sooner than `min`; the interval it keeps (`interval_ms`, what the next one grows or
 * shrinks from) is the change rate's, so the speedup never compounds. Pure.
 */
export function nextRevisit(
  policy: RevisitPolicy,
  prev: RevisitState | undefined,
  result: FetchResult,
  now: number,
  extra: { hintMs?: number | undefined; etag?: string | null; lastModified?: string | null; importance?: number | undefined } = {},
): RevisitState | null {
  if (!policy.enabled || result.kind === 'stop') return null;
  const min = durationMs(policy.min);
  const max = durationMs(policy.max);
  const clamp = (ms: number) => Math.round(Math.min(max, Math.max(min, ms)));
  let interval: number;
  let changed: boolean | undefined;
  let evidence: Pick<RevisitState, 'checks' | 'changes' | 'observed_ms'> = {};
  if (!prev) {
    interval = clamp(extra.hintMs ?? durationMs(policy.initial));
  } else {
    evidence = { checks: prev.checks, changes: prev.changes, observed_ms: prev.observed_ms };
    // the first fetch of a scheduled run has nothing to compare with: keep the interval
    const comparable = result.kind === 'not_modified' || (result.kind === 'page' && prev.digest !== null);
    if (result.kind === 'failed') interval = clamp(prev.interval_ms * (1 + policy.increase));
    else if (!comparable) interval = prev.interval_ms;
    else {
      changed = result.kind === 'page' && result.digest !== prev.digest && !similar(result.simhash, prev.simhash);
      if (policy.strategy === 'multiplicative') interval = clamp(prev.interval_ms * (changed ? 1 - policy.decrease : 1 + policy.increase));
      else {
        evidence = addEvidence(prev, changed, now - prev.fetched_at);
        interval = clamp(Math.min(estimatedInterval(evidence, durationMs(policy.initial)), prev.interval_ms * MAX_GROWTH));
      }
    }
  }
  const page = result.kind === 'page' ? result : null;
  return {
    interval_ms: interval,
    digest: page ? page.digest : (prev?.digest ?? null),
    simhash: page ? page.simhash : (prev?.simhash ?? null),
    fetched_at: now,
    due_at: now + Math.min(interval, clamp(interval / importanceSpeedup(extra.importance))),
    ...(changed !== undefined ? { changed } : {}),
    etag: extra.etag !== undefined ? extra.etag : (prev?.etag ?? null),
    last_modified: extra.lastModified !== undefined ? extra.lastModified : (prev?.last_modified ?? null),
    ...(evidence.checks !== undefined ? evidence : {}),
  };
}

function addEvidence(prev: RevisitState, changed: boolean, sinceMs: number): Required<Pick<RevisitState, 'checks' | 'changes' | 'observed_ms'>> {
  return {
    checks: (prev.checks ?? 0) * EVIDENCE_DECAY + 1,
    changes: (prev.changes ?? 0) * EVIDENCE_DECAY + (changed ? 1 : 0),
    observed_ms: (prev.observed_ms ?? 0) * EVIDENCE_DECAY + Math.max(1, sinceMs),
  };
}

/**
 * The interval the evidence asks for. The change rate is estimated as Cho and Garcia-Molina
 * do for a page checked at (about) regular intervals, with the changes seen among the
 * checks made: λ = −ln(1 − (X + 0.5) / (n + 1)) / mean interval, which stays finite when
 * every check saw a change and above zero when none did. Keeping the mean age of the copies
 * lowest for a number of requests gives each page an interval growing with the cube root of
 * its change period; `reference` (the policy's `initial`) is where the two are equal.
 */
export function estimatedInterval(e: ChangeEvidence, referenceMs: number): number {
  const rate = changesPerMs(e);
  if (rate === null) return referenceMs;
  return Math.cbrt(referenceMs * referenceMs / rate);
}

type ChangeEvidence = Pick<RevisitState, 'checks' | 'changes' | 'observed_ms'>;

/** The estimated change rate (changes per ms, the formula of {@link estimatedInterval}), or null without evidence. */
function changesPerMs(e: ChangeEvidence): number | null {
  const n = e.checks ?? 0;
  const x = e.changes ?? 0;
  if (n <= 0) return null;
  const meanInterval = (e.observed_ms ?? 0) / n;
  return -Math.log(1 - (x + 0.5) / (n + 1)) / meanInterval;
}

const DAY_MS = 86_400_000;

/**
 * The change estimate a URL's rows record (fetch_log and urls' `change_rate`): the estimated
 * changes per day the schedule works from, or null while there is no evidence (the first
 * fetches, before two copies were compared, and the multiplicative strategy, which keeps none).
 */
export function changeRatePerDay(e: ChangeEvidence): number | null {
  const rate = changesPerMs(e);
  return rate === null ? null : rate * DAY_MS;
}

/** Hamming distance of two 16-hex-digit SimHashes within the threshold (unknown: not similar). */
function similar(a: string, b: string | null): boolean {
  if (b === null) return false;
  let x = BigInt.asUintN(64, BigInt('0x' + a) ^ BigInt('0x' + b));
  let bits = 0;
  while (x > 0n && bits <= UNCHANGED_WITHIN_BITS) {
    x &= x - 1n;
    bits += 1;
  }
  return bits <= UNCHANGED_WITHIN_BITS;
}

/**
 * A freshness hint from a sitemap: the interval its `changefreq` names, else the time since
 * its `lastmod` (a page unchanged for a week is not revisited every hour), within a day to a
 * month; null without either.
 */
export function sitemapHintMs(entry: { changefreq?: string | null; lastmod?: number | null }, now: number): number | null {
  const byFreq: Record<string, number> = { always: 3_600_000, hourly: 3_600_000, daily: 86_400_000, weekly: 7 * 86_400_000, monthly: 30 * 86_400_000, yearly: 365 * 86_400_000 };
  if (entry.changefreq && entry.changefreq in byFreq) return byFreq[entry.changefreq]!;
  if (entry.lastmod != null && entry.lastmod <= now) return Math.min(30 * 86_400_000, Math.max(86_400_000, now - entry.lastmod));
  return null;
}
