import type { CrawlSettings } from '../../../pipeline/settings.js';
import type { LastFailure } from '../../../schemas/index.js';

/**
 * Adaptive pacing of one host: how long to wait after a request, from what the request
 * told us. Pure, so every rule is table-tested.
 *
 * - A healthy answer: the gap is max(base delay, factor × response time); a slow server
 *   is a struggling server, so it gets proportionally more room.
 * - 429 and 503 with Retry-After: nothing before that time (clamped to a maximum).
 * - 5xx, 429 or 503 without Retry-After, timeouts and network errors: exponential backoff
 *   with jitter from the host's consecutive-failure count.
 * - After `pauseAfterFailures` failures in a row the host is paused for `pauseMs`; the next
 *   request after the pause is a single probe (the lease still allows only one in flight).
 * - Recovery is gradual: each success takes one failure off the count, so the backoff
 *   shrinks step by step rather than snapping back to full speed.
 * - A failing host has a bounded cost: from its first failure until its count is back to 0
 *   (one failing spell) it gets PAUSES_BEFORE_GIVING_UP pauses; a failure that would pause
 *   it once more gives the host up (`given_up_at`): the gate ends its queued URLs with the
 *   reason instead of making them wait (serve-host.ts), until an answer comes back. Only a
 *   page's own failure (`failure` set) gives a host up: a robots.txt failure has its own
 *   give-up (--robots-give-up-ms), and a request whose end nobody recorded is the crawler's
 *   failure, not the site's. `failingHostBoundMs` is the worst case this allows.
 */

/**
 * Pauses a host gets in one failing spell. Two, so that a host that is still failing after
 * one pause (a restart taking longer than --pause-ms, say) gets one more chance before its
 * URLs end, and a host that answers some URLs and fails others is not given up on the first
 * failed probe; more would add --pause-ms each to a bounded crawl's worst case.
 */
export const PAUSES_BEFORE_GIVING_UP = 2;

/** The most jitter adds to a backoff (withJitter: ±20 %). */
const MAX_JITTER = 1.2;

/**
 * How long after the end of a response the host's next delay starts. A server measures the
 * gap from when it finished sending, which it may record some ms after we finished reading
 * (a busy event loop, its own clock), and every gap it sees must be the full delay. On a
 * loaded 2-core machine the test web can log a page's end tens of ms after the crawler read
 * it, so half this guard lets the politeness audit see gaps just short of the delay
 * (docs/politeness-and-robots.md).
 */
export const PACING_GUARD_MS = 50;

export type FetchFeedback =
  /** an answer from a healthy server: 2xx, 3xx, 4xx other than 429 */
  | { kind: 'ok'; durationMs: number; baseDelayMs: number }
  /** 429 or 503: the server asked us to slow down */
  | ({ kind: 'throttled'; status: number; retryAfterMs: number | null; durationMs: number; baseDelayMs: number } & PageFailure)
  /** another 5xx */
  | ({ kind: 'server_error'; status: number; durationMs: number; baseDelayMs: number } & PageFailure)
  /** timeout, reset, refused, DNS failure */
  | ({ kind: 'network_error'; code: string; durationMs: number; baseDelayMs: number } & PageFailure);

/**
 * A page request's failure, as its URL's row would record it: set by the fetch stage, kept on
 * the host's slot, and what a given-up host's URLs end with. Absent for robots.txt fetches and
 * for requests whose end is unknown, which never give a host up.
 */
interface PageFailure {
  failure?: LastFailure;
}

export interface PacingSettings {
  /** gap ≥ factor × the response time; 0 turns the adaptive part off */
  adaptiveDelayFactor: number;
  /** first backoff step; doubles per consecutive failure */
  backoffBaseMs: number;
  /** the longest backoff (and the longest Retry-After honoured) */
  maxBackoffMs: number;
  /** this many failures in a row pause the host */
  pauseAfterFailures: number;
  pauseMs: number;
}

/** The crawl's pacing settings, as every gate and fetcher applies them. */
export const pacingOf = (ctx: { settings: CrawlSettings }): PacingSettings => ({
  adaptiveDelayFactor: ctx.settings.adaptiveDelayFactor,
  backoffBaseMs: ctx.settings.backoffBaseMs,
  maxBackoffMs: ctx.settings.maxBackoffMs,
  pauseAfterFailures: ctx.settings.pauseAfterFailures,
  pauseMs: ctx.settings.pauseMs,
});

export interface Pacing {
  next_allowed_at: number;
  delay_ms: number;
  failures: number;
  paused_until: number;
  last_decision: string;
  /** pauses in the current failing spell (it ends when `failures` is back to 0) */
  pauses: number;
  /** when the current failing spell began (0: the host is not failing) */
  failing_since: number;
  /** when the host was given up (0: it is not): its queued URLs end instead of waiting */
  given_up_at: number;
  /** the last page failure of the spell: what a given-up host's URLs end with */
  last_failure: LastFailure | null;
}

/** What nextPacing reads of a host's slot (older slots lack the failing-spell fields). */
export interface PacingState {
  failures: number;
  paused_until: number;
  pauses?: number;
  failing_since?: number;
  given_up_at?: number;
  last_failure?: LastFailure | null;
}

/** ±20 % so that hosts backing off together do not come back together. */
export function withJitter(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (0.8 + 0.4 * random()));
}

export function backoffMs(failures: number, s: PacingSettings, random: () => number = Math.random): number {
  const raw = s.backoffBaseMs * 2 ** Math.max(0, failures - 1);
  return Math.min(s.maxBackoffMs, withJitter(Math.min(raw, s.maxBackoffMs), random));
}

export function nextPacing(slot: PacingState, fb: FetchFeedback, end: number, s: PacingSettings, random: () => number = Math.random): Pacing {
  if (fb.kind === 'ok') {
    const failures = Math.max(0, slot.failures - 1);
    const adaptive = Math.round(s.adaptiveDelayFactor * fb.durationMs);
    // while recovering, the backoff of the remaining failures still applies
    const recovering = failures > 0 ? backoffMs(failures, s, random) : 0;
    const delay = Math.max(fb.baseDelayMs, adaptive, recovering);
    let decision = '';
    if (recovering > fb.baseDelayMs && recovering >= adaptive) decision = `recovering: ${failures} failures left, delay ${delay} ms`;
    else if (adaptive > fb.baseDelayMs) decision = `slow server (${fb.durationMs} ms): delay ${delay} ms`;
    // an answer: the host is not given up any more; the spell ends once no failure is left
    const spell = failures > 0 ? { pauses: slot.pauses ?? 0, failing_since: slot.failing_since ?? 0, last_failure: slot.last_failure ?? null } : { pauses: 0, failing_since: 0, last_failure: null };
    return { next_allowed_at: end + delay, delay_ms: delay, failures, paused_until: 0, last_decision: decision, given_up_at: 0, ...spell };
  }
  const failures = slot.failures + 1;
  const failingSince = slot.failures > 0 && slot.failing_since ? slot.failing_since : end;
  const lastFailure = fb.failure ?? slot.last_failure ?? null;
  const spell = { pauses: slot.pauses ?? 0, failing_since: failingSince, given_up_at: slot.given_up_at ?? 0, last_failure: lastFailure };
  const what = fb.kind === 'network_error' ? fb.code : `http ${fb.status}`;
  let wait: number;
  let decision: string;
  if (fb.kind === 'throttled' && fb.retryAfterMs !== null) {
    wait = Math.min(Math.max(0, fb.retryAfterMs), s.maxBackoffMs);
    decision =
      wait < fb.retryAfterMs
        ? `${what}: Retry-After ${fb.retryAfterMs} ms clamped to ${wait} ms`
        : `${what}: Retry-After ${fb.retryAfterMs} ms honoured`;
  } else {
    wait = backoffMs(failures, s, random);
    decision = `${what}: backing off ${wait} ms (${failures} failures in a row)`;
  }
  const delay = Math.max(fb.baseDelayMs, wait);
  if (failures >= s.pauseAfterFailures) {
    const pausedUntil = end + Math.max(delay, s.pauseMs);
    const pauses = spell.pauses + 1;
    const givenUp = spell.given_up_at > 0 || (pauses > PAUSES_BEFORE_GIVING_UP && fb.failure !== undefined);
    const pause = `host paused ${pausedUntil - end} ms, then one probe`;
    const next = pauses < PAUSES_BEFORE_GIVING_UP ? 'URLs that failed are not retried' : 'if it fails, the host is given up';
    return {
      ...spell,
      pauses,
      given_up_at: givenUp ? spell.given_up_at || end : 0,
      next_allowed_at: pausedUntil,
      delay_ms: delay,
      failures,
      paused_until: pausedUntil,
      last_decision: givenUp
        ? `${what}: ${failures} failures in a row after ${PAUSES_BEFORE_GIVING_UP} pauses, host given up: its queued URLs end; ${pause}`
        : `${what}: ${failures} failures in a row, ${pause} (pause ${Math.min(pauses, PAUSES_BEFORE_GIVING_UP)} of ${PAUSES_BEFORE_GIVING_UP}: ${next})`,
    };
  }
  return { ...spell, next_allowed_at: end + delay, delay_ms: delay, failures, paused_until: 0, last_decision: decision };
}

/**
 * The longest a bounded crawl waits on a host whose requests keep failing (it died, or only
 * failing URLs are left), from the start of the first failed request in a row until every URL
 * queued for it has ended, when the host does not ask for more with Retry-After:
 *
 *   (P + K) × (T + G) + Σ_{i=1..P-1} max(D, b(i)) + Σ_{i=P..P+K-1} max(D, b(i), M)
 *
 * P = pauseAfterFailures, K = PAUSES_BEFORE_GIVING_UP, T = the longest a request takes
 * (totalTimeoutMs), G = PACING_GUARD_MS, D = the host's delay (max of Crawl-delay and
 * minDelayMs), b(i) = the backoff after the i-th failure in a row with the most jitter,
 * min(maxBackoffMs, 1.2 × backoffBaseMs × 2^(i-1)), M = pauseMs. That is: P failed requests
 * with their backoffs, a pause, a probe that fails, a second pause, a second probe that fails;
 * then the host is given up and its queued URLs end at once, whatever their number and
 * --max-retries. Not counted: the crawler's own queueing (a place on the host's IP, fetch
 * behind). A host that still answers some URLs is being crawled, not waited on: each of its
 * failing URLs costs up to --max-retries + 1 requests while it is not paused.
 */
export function failingHostBoundMs(s: PacingSettings & { totalTimeoutMs: number }, hostDelayMs: number): number {
  const worstBackoff = (i: number) => Math.min(s.maxBackoffMs, Math.round(s.backoffBaseMs * 2 ** (i - 1) * MAX_JITTER));
  const requests = s.pauseAfterFailures + PAUSES_BEFORE_GIVING_UP;
  let total = requests * (s.totalTimeoutMs + PACING_GUARD_MS);
  for (let i = 1; i < s.pauseAfterFailures; i++) total += Math.max(hostDelayMs, worstBackoff(i));
  for (let i = s.pauseAfterFailures; i < requests; i++) total += Math.max(hostDelayMs, worstBackoff(i), s.pauseMs);
  return total;
}

/**
 * Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. Null when absent or
 * unparseable; never negative.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const date = Date.parse(v);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}
