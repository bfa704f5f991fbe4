import type { CrawlSettings } from '../../../pipeline/settings.js';

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
 */

/**
 * How long after the end of a response the host's next delay starts. A server measures the
 * gap from when it finished sending, which it may record some ms after we finished reading
 * (a busy event loop, its own clock), and every gap it sees must be the full delay. 25 ms
 * was not enough: on a loaded 2-core machine the test web logged the end of a page 39 ms
 * after the crawler had read it (the politeness audit saw a 986 ms gap for a 1 s delay).
 */
export const PACING_GUARD_MS = 50;

export type FetchFeedback =
  /** an answer from a healthy server: 2xx, 3xx, 4xx other than 429 */
  | { kind: 'ok'; durationMs: number; baseDelayMs: number }
  /** 429 or 503: the server asked us to slow down */
  | { kind: 'throttled'; status: number; retryAfterMs: number | null; durationMs: number; baseDelayMs: number }
  /** another 5xx */
  | { kind: 'server_error'; status: number; durationMs: number; baseDelayMs: number }
  /** timeout, reset, refused, DNS failure */
  | { kind: 'network_error'; code: string; durationMs: number; baseDelayMs: number };

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
}

/** ±20 % so that hosts backing off together do not come back together. */
export function withJitter(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (0.8 + 0.4 * random()));
}

export function backoffMs(failures: number, s: PacingSettings, random: () => number = Math.random): number {
  const raw = s.backoffBaseMs * 2 ** Math.max(0, failures - 1);
  return Math.min(s.maxBackoffMs, withJitter(Math.min(raw, s.maxBackoffMs), random));
}

export function nextPacing(
  slot: { failures: number; paused_until: number },
  fb: FetchFeedback,
  end: number,
  s: PacingSettings,
  random: () => number = Math.random,
): Pacing {
  if (fb.kind === 'ok') {
    const failures = Math.max(0, slot.failures - 1);
    const adaptive = Math.round(s.adaptiveDelayFactor * fb.durationMs);
    // while recovering, the backoff of the remaining failures still applies
    const recovering = failures > 0 ? backoffMs(failures, s, random) : 0;
    const delay = Math.max(fb.baseDelayMs, adaptive, recovering);
    let decision = '';
    if (recovering > fb.baseDelayMs && recovering >= adaptive) decision = `recovering: ${failures} failures left, delay ${delay} ms`;
    else if (adaptive > fb.baseDelayMs) decision = `slow server (${fb.durationMs} ms): delay ${delay} ms`;
    return { next_allowed_at: end + delay, delay_ms: delay, failures, paused_until: 0, last_decision: decision };
  }
  const failures = slot.failures + 1;
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
    return {
      next_allowed_at: pausedUntil,
      delay_ms: delay,
      failures,
      paused_until: pausedUntil,
      last_decision: `${what}: ${failures} failures in a row, host paused ${pausedUntil - end} ms, then one probe`,
    };
  }
  return { next_allowed_at: end + delay, delay_ms: delay, failures, paused_until: 0, last_decision: decision };
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
