import type { FetchGrant, LastFailure } from '../../schemas/index.js';
import type { HttpFetchError, HttpResponse } from '../../ports/http.js';
import type { StageContext } from '../../pipeline/stage.js';
import { judgeFetch, pacedFrom, previewRelease, type FetchFeedback, type TurnAnswer } from '../shared/politeness/index.js';
import type { SentRequest } from './send-request.js';

/** What an answer means for its host (the release) and for its URL (retried or not, and the note its row gets). */
export interface JudgedAnswer {
  /** what the host's turn is released with */
  release: Required<Pick<TurnAnswer, 'from' | 'feedback' | 'draw'>>;
  /** the URL is tried again: a failure worth another try, retries left, and the host not paused for it */
  retry: boolean;
  /** after a failure: the host's pacing decision, which the URL's row says */
  pacingNote: string;
}

/**
 * Judges the answer once (failure-policy.ts) for both its host and its URL. A failure that
 * pauses its host ends its URL, retries left or not: the retry would come only after the
 * pause, and failing again would cost the host another one (a failed probe is such a
 * failure). The gate ends the host's other URLs waiting for a retry likewise
 * (failing-host.ts), so a host's failing URLs cost at most its two pauses, not one each.
 * A URL the server only asked to come back later for (429, Retry-After) is retried after it.
 */
export async function judgeAnswer(ctx: StageContext, g: FetchGrant, sent: SentRequest): Promise<JudgedAnswer> {
  const { res, failure } = sent;
  const judged = judgeFetch(res, failure, g.delay_ms, sent.durationMs, sent.end);
  // a failure travels with the host's pacing: a given-up host's queued URLs end with it
  const feedback: FetchFeedback = judged.feedback.kind === 'ok' ? judged.feedback : { ...judged.feedback, failure: failureOf(res, failure, judged.feedback) };
  // the host's pacing decision after a failure goes into the fetch_log row too; one random
  // draw, so the jitter written there is the jitter applied
  const release = { from: pacedFrom(sent.end), feedback, draw: Math.random() };
  const paced = feedback.kind === 'ok' ? null : await previewRelease(ctx, g.host, release);
  const retriesLeft = judged.retryable && (g.attempt ?? 0) < ctx.settings.maxRetries;
  const pausesHost = paced !== null && paced.paused_until > 0 && !(feedback.kind !== 'ok' && feedback.failure?.throttled);
  const pacingNote = !paced ? '' : retriesLeft && pausesHost ? `not retried: ${paced.last_decision}` : paced.last_decision;
  return { release, retry: retriesLeft && !pausesHost, pacingNote };
}

/** A failed request as its URL's row records it: `http 503`, or the network failure. */
export function failureOf(res: HttpResponse | null, failure: HttpFetchError | null, feedback: FetchFeedback): LastFailure {
  const throttled = feedback.kind === 'throttled' && (feedback.status === 429 || feedback.retryAfterMs !== null);
  if (res) return { outcome: 'http_error', reason: `http ${res.status}`, status: res.status, ...(throttled ? { throttled } : {}) };
  return { outcome: 'network_error', reason: failure ? `${failure.code}: ${failure.message}` : 'unknown failure', status: null };
}
