import { encodeAdmitted, type FetchGrant, type RevisitSchedule } from '../../schemas/index.js';
import type { HttpFetchError, HttpResponse } from '../../ports/http.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, type Emit, type Disposition, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { retryFor } from '../../pipeline/retry.js';
import { confirmTurn, HELD_LEASE_MS, keepTurn, pacedFrom, PACING_GUARD_MS, releaseTurn, type FetchFeedback, type HostLease, type KeptTurn, type LeaseCheck } from '../shared/politeness/index.js';
import { revisitEmit } from '../shared/revisits/revisit-emit.js';
import { withSchedule } from '../shared/messages/outcome-emit.js';
import type { FetchResult } from '../shared/revisits/revisit-policy.js';
import { placeBody, type PlacedBody } from '../shared/messages/page-body.js';
import { attemptMessages, attemptOf, isPage, isRetry, validatorsOf } from './attempt-messages.js';
import { previousCopyOf, sendRequest, type SentRequest } from './send-request.js';
import { judgeAnswer } from './judge-answer.js';
import { declaredLength } from './classify-response.js';

export { PACING_GUARD_MS };

/** How long a release that must not be lost is tried again (a grant's ack wait is 30 s). */
const RELEASE_RETRY_MS = 10_000;
/** A confirmed turn's lease is renewed (keepTurn) up to the request's longest time and this much more, for publishing what it ended in. */
const LEASE_SLACK_MS = 10_000;

/**
 * One grant: confirm the host's turn the gate took for it, make the request, judge the
 * answer, emit what it ends in, and release the turn with what the answer said once those
 * messages are out (a grant redelivered after that is recognised as done, one redelivered
 * before it still holds the lease and fetches again).
 */
export async function handleFetch(input: StageInput<FetchGrant>, ctx: StageContext): Promise<Disposition> {
  const g = input.message;
  const turn = turnOf(g);
  const confirmedAt = ctx.clock.now();
  const check = await confirmTurn(ctx, 'fetch', turn, HELD_LEASE_MS);
  if (check !== 'ours') return notFetchedAsGranted(ctx, input, check);
  const kept = keepTurn(ctx, turn, HELD_LEASE_MS, confirmedAt + ctx.settings.totalTimeoutMs + LEASE_SLACK_MS);
  try {
    return await fetchAndJudge(input, ctx, turn, kept);
  } catch (err) {
    kept.stop();
    throw err;
  }
}

/** The request of a confirmed turn, what it ends in, and the release once that is out. */
async function fetchAndJudge(input: StageInput<FetchGrant>, ctx: StageContext, turn: HostLease, kept: KeptTurn): Promise<Disposition> {
  const g = input.message;
  const previous = await previousCopyOf(ctx, g);
  const sent = await sendRequest(ctx, g, turn, previous);
  const judged = await judgeAnswer(ctx, g, sent);
  const release = (done: boolean) => {
    kept.stop();
    return releaseTurn(ctx, turn, { ...judged.release, done });
  };
  // the grant is redelivered: it must find the host paced by this answer (a Retry-After, a
  // backoff) and go back to the gate, not ask again at once
  const keepAnswer = async () => void (await retryFor(() => release(false), RELEASE_RETRY_MS));
  let placed: PlacedBody | undefined;
  try {
    placed = sent.res ? await placeBody(ctx, 'fetch', g.host, sent.res.body) : undefined;
  } catch (err) {
    // storing a large body failed as a publish would (the bodies stream unavailable)
    await keepAnswer().catch(() => undefined);
    throw err;
  }
  const attempted = attemptMessages(attemptOf(ctx, g, sent, judged), sent, previous, judged, placed);
  const revisit = await nextRevisit(ctx, g, sent, attempted);
  const messages = [...withSchedule(attempted, revisit.schedule), ...revisit.emits];
  countAnswer(ctx, g, sent);
  return {
    kind: 'emit',
    messages,
    afterPublish: async () => void (await release(true)),
    // (the KV store may be electing a leader too: the same outage that failed the publish)
    onPublishFailed: keepAnswer,
  };
}

/** The host's turn the gate took for the grant: its lease, and the address it charged the request to. */
const turnOf = (g: FetchGrant): HostLease => ({ host: g.host, leaseId: g.lease_id, ip: g.ip ?? null });

/**
 * A grant whose turn is not this delivery's to use: 'done', redelivered after its request
 * completed (the ack was lost: its outputs are already out); 'lost', its lease lapsed (it
 * waited too long in the stream, or another process took the host over); 'resumed', an
 * earlier delivery confirmed it and its request's end was never recorded.
 */
function notFetchedAsGranted(ctx: StageContext, input: StageInput<FetchGrant>, check: Exclude<LeaseCheck, 'ours'>): Disposition {
  const g = input.message;
  // rare, and what an operator needs to follow a URL that waited: said once per grant
  ctx.log.info({ host: g.host, url: g.url, lease: g.lease_id, granted_ms_ago: ctx.clock.now() - g.granted_at, delivery: input.deliveryCount, found: check }, 'grant not fetched as granted');
  if (check === 'done') {
    ctx.metrics.count('fetch', 'grants', 'already_done');
    return emit();
  }
  if (check === 'lost') return backToGate(ctx, g);
  return afterUnrecordedRequest(ctx, g);
}

/** A grant that must not fetch goes back to the gate, which grants it again. */
function backToGate(ctx: StageContext, g: FetchGrant): Disposition {
  const { lease_id: _lease, granted_at: _granted, delay_ms: _delay, ip: _ip, ...admitted } = g;
  ctx.metrics.count('fetch', 'grants', 'stale');
  return emit({
    subject: subjectFor('frontier', g.host, ctx.settings.partitions),
    msgId: `regrant:${g.fetch_id}:${g.lease_id}`,
    data: encodeAdmitted(admitted),
  });
}

/**
 * A redelivered grant whose lease an earlier delivery confirmed, with no record of how its
 * request ended (its fetcher died, or its outputs and then the release both failed): the
 * server may have answered anything, a Retry-After included, so the request counts as a
 * failure (the host backs off) and the URL goes back to the gate to be granted again.
 */
function afterUnrecordedRequest(ctx: StageContext, g: FetchGrant): Disposition {
  ctx.metrics.count('fetch', 'grants', 'unrecorded');
  const unknown: FetchFeedback = { kind: 'network_error', code: 'outcome_unknown', durationMs: 0, baseDelayMs: g.delay_ms };
  const regrant = backToGate(ctx, g);
  if (regrant.kind !== 'emit') return regrant;
  return { ...regrant, afterPublish: async () => void (await releaseTurn(ctx, turnOf(g), { from: pacedFrom(ctx.clock.now()), feedback: unknown, done: false })) };
}

/** A job's URL that ended here (not a page: simhash schedules those; not retried) gets its next revisit. */
async function nextRevisit(ctx: StageContext, g: FetchGrant, sent: SentRequest, out: readonly Emit[]): Promise<{ emits: Emit[]; schedule?: RevisitSchedule }> {
  if (g.job === undefined || out.some(isPage) || out.some(isRetry)) return { emits: [] };
  const { res, failure } = sent;
  // a 304's validators are those of the copy it confirms (the revisit keeps them); a failure has none
  const validators = res && res.status !== 304 ? validatorsOf(res) : null;
  const extra = validators ? { etag: validators.etag, lastModified: validators.last_modified } : {};
  return revisitEmit(ctx, g, g.fetch_id, fetchResultOf(res, failure), extra);
}

/** By status class (a bounded label set); a failed request by its error code. */
function countAnswer(ctx: StageContext, g: FetchGrant, { res, failure }: SentRequest): void {
  if (res?.truncated) ctx.metrics.count('fetch', 'bodies', 'truncated');
  ctx.metrics.count('fetch', 'responses', res ? `${Math.floor(res.status / 100)}xx` : 'error');
  if (res) ctx.metrics.count('fetch', 'bytes', `${Math.floor(res.status / 100)}xx`, res.body.length);
  else ctx.metrics.count('fetch', 'errors', failure!.code);
  if (res?.bodyNotRead) {
    // what stopping at the headers saved: the declared lengths (a body without one counts 0)
    ctx.metrics.count('fetch', 'bodies_not_downloaded', 'unsupported_content');
    ctx.metrics.count('fetch', 'bytes_not_downloaded', 'unsupported_content', declaredLength(res) ?? 0);
  }
  // the request was charged to one address and connected to another (the first did not answer)
  if (res && g.ip && res.remoteAddress && res.remoteAddress !== g.ip) ctx.metrics.count('fetch', 'address_fallbacks');
}

/**
 * What a fetch that stored no page means for its revisit: a 304 is unchanged; a redirect, a
 * page that is gone (404, 410) or an address the guard refuses ends the revisits; any other
 * answer or failure is tried again later, less often.
 */
function fetchResultOf(res: HttpResponse | null, failure: HttpFetchError | null): FetchResult {
  if (res?.status === 304) return { kind: 'not_modified' };
  if (res && ((res.status >= 300 && res.status < 400) || res.status === 404 || res.status === 410)) return { kind: 'stop' };
  if (!res && failure?.code === 'refused') return { kind: 'stop' };
  return { kind: 'failed' };
}
