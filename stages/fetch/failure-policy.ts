import { HttpFetchError, type HttpResponse } from '../../pipeline/adapters/http-client.js';
import { parseRetryAfter, type FetchFeedback } from '../host-pacing.js';

/**
 * The one place that decides what a fetch's result means: how it paces the host (see
 * host-pacing.ts) and whether the URL is worth another try.
 *
 * | result                         | host pacing              | URL retried |
 * |--------------------------------|--------------------------|-------------|
 * | 429, 503                       | Retry-After, else backoff | yes        |
 * | other 5xx                      | backoff                  | yes         |
 * | timeout, reset, connect error  | backoff                  | yes         |
 * | DNS failure                    | backoff                  | no (the name does not resolve) |
 * | malformed response, TLS error  | backoff                  | no          |
 * | refused by the SSRF guard      | none (nothing was sent)  | no          |
 * | anything else (2xx-4xx)        | healthy                  | no          |
 */
export interface FetchVerdict {
  feedback: FetchFeedback;
  retryable: boolean;
}

const RETRYABLE_ERRORS = new Set<HttpFetchError['code']>(['timeout', 'reset', 'connect']);

/** How an HTTP status paces its host (robots.txt fetches use this too). */
export function feedbackForStatus(status: number, retryAfterMs: number | null, durationMs: number, baseDelayMs: number): FetchFeedback {
  if (status === 429 || status === 503) return { kind: 'throttled', status, retryAfterMs, durationMs, baseDelayMs };
  if (status >= 500) return { kind: 'server_error', status, durationMs, baseDelayMs };
  return { kind: 'ok', durationMs, baseDelayMs };
}

export function judgeFetch(res: HttpResponse | null, err: HttpFetchError | null, baseDelayMs: number, durationMs: number, now: number): FetchVerdict {
  if (res) {
    const feedback = feedbackForStatus(res.status, parseRetryAfter(res.headers['retry-after'], now), durationMs, baseDelayMs);
    return { feedback, retryable: feedback.kind !== 'ok' };
  }
  const code = err?.code ?? 'other';
  if (code === 'refused') return { feedback: { kind: 'ok', durationMs: 0, baseDelayMs }, retryable: false };
  return { feedback: { kind: 'network_error', code, durationMs, baseDelayMs }, retryable: RETRYABLE_ERRORS.has(code) };
}
