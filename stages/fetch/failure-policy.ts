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

export function judgeFetch(res: HttpResponse | null, err: HttpFetchError | null, baseDelayMs: number, durationMs: number, now: number): FetchVerdict {
  if (res) {
    if (res.status === 429 || res.status === 503) {
      const retryAfterMs = parseRetryAfter(res.headers['retry-after'], now);
      return { feedback: { kind: 'throttled', status: res.status, retryAfterMs, durationMs, baseDelayMs }, retryable: true };
    }
    if (res.status >= 500) return { feedback: { kind: 'server_error', status: res.status, durationMs, baseDelayMs }, retryable: true };
    return { feedback: { kind: 'ok', durationMs, baseDelayMs }, retryable: false };
  }
  const code = err?.code ?? 'other';
  if (code === 'refused') return { feedback: { kind: 'ok', durationMs: 0, baseDelayMs }, retryable: false };
  return { feedback: { kind: 'network_error', code, durationMs, baseDelayMs }, retryable: RETRYABLE_ERRORS.has(code) };
}
