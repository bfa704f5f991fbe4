import { encodeAdmitted, type FetchGrant, type RevisitState } from '../../schemas/index.js';
import { HttpFetchError, type HttpResponse } from '../../ports/http.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, type Emit, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { confirmLeaseOf, emptySlot, readSlot, releaseSlot } from '../shared/host-state/host-slot.js';
import { removeServed } from '../shared/host-state/served-urls.js';
import { nextPacing, pacingOf, type FetchFeedback, type Pacing } from '../shared/host-state/host-pacing.js';
import { judgeFetch } from '../shared/failure-policy.js';
import { conditionalHeaders, readValidators, type Validators } from '../shared/validators.js';
import { extendIp, releaseIp } from '../shared/host-state/ip-slot.js';
import { exchangeEmit, type ExchangeFacts } from '../shared/messages/exchange-emit.js';
import { failureOf, fetchOutcome, notModifiedEmits, responseEmits, retryEmits, validatorsOf, withNote, type Attempt } from './attempt-emits.js';
import { revisitEmit } from '../shared/revisits/revisit-emit.js';
import type { FetchResult } from '../shared/revisits/revisit-policy.js';
import { placeBody, type PlacedBody } from '../shared/messages/page-body.js';
import { PACING_GUARD_MS } from '../shared/host-state/host-pacing.js';
import { retryFor } from '../../pipeline/retry.js';
import { bodyWanted, declaredLength, notDownloaded } from './classify-response.js';
import { isSubjectOf } from '../../topology/index.js';

export { PACING_GUARD_MS };

/** How long a release that must not be lost is tried again (a grant's ack wait is 30 s). */
const RELEASE_RETRY_MS = 10_000;

/**
 * A grant whose lease lapsed (it waited too long in the stream, or another process took
 * the host over) must not fetch: it goes back to the gate, which grants it again.
 */
function backToGate(ctx: StageContext, g: FetchGrant): Outcome {
  const { lease_id: _lease, granted_at: _granted, delay_ms: _delay, ip: _ip, ...admitted } = g;
  ctx.metrics.count('fetch', 'grants', 'stale');
  return emit({
    subject: subjectFor('frontier', g.host, ctx.settings.partitions),
    msgId: `regrant:${g.fetch_id}:${g.lease_id}`,
    data: encodeAdmitted(admitted),
  });
}

export async function handleFetch(input: StageInput<FetchGrant>, ctx: StageContext): Promise<Outcome> {
  const g = input.message;
  const s = ctx.settings;
  const leaseMs = s.totalTimeoutMs + 10_000;
  const { check: lease, seq: queuedAt } = await confirmLeaseOf(ctx.kv.hosts, g.host, g.lease_id, ctx.clock.now(), leaseMs);
  // the grant is this fetcher's now (redelivered if it dies): the URL no longer waits in its host's queue
  if (lease === 'ours' || lease === 'resumed') await removeServed(ctx, 'fetch', queuedAt, g.host);
  // rare, and what an operator needs to follow a URL that waited: said once per grant
  if (lease !== 'ours') ctx.log.info({ host: g.host, url: g.url, lease: g.lease_id, granted_ms_ago: ctx.clock.now() - g.granted_at, delivery: input.deliveryCount, found: lease }, 'grant not fetched as granted');
  if (lease === 'done') {
    // redelivered after its request completed (the ack was lost): its outputs are already out
    ctx.metrics.count('fetch', 'grants', 'already_done');
    return emit();
  }
  if (lease === 'lost') return backToGate(ctx, g);
  if (lease === 'resumed') return afterUnrecordedRequest(ctx, g);
  if (g.ip) await extendIp(ctx.kv.hosts, g.ip, g.lease_id, ctx.clock.now() + leaseMs);
  // a job's revisit carries the validators of the copy it revisits; other URLs keep them in KV
  const previous = g.revisit ? revisitValidators(g.revisit) : ownFirstAnswerAside(await readValidators(ctx.kv.validators, g.url), g.fetch_id);
  const start = ctx.clock.now();
  const requestHeaders = { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5', ...conditionalHeaders(previous) };
  let res: HttpResponse | null = null;
  let failure: HttpFetchError | null = null;
  try {
    res = await ctx.http.request({
      url: g.url,
      headers: requestHeaders,
      connectTimeoutMs: s.connectTimeoutMs,
      headersTimeoutMs: s.headersTimeoutMs,
      totalTimeoutMs: s.totalTimeoutMs,
      // whatever the server's max_payload: a body too large for its message is stored beside it
      maxBodyBytes: s.maxPageBytes,
      maxDecompressionRatio: s.maxDecompressionRatio,
      minBytesPerSecond: s.minTransferRate,
      // a body classify-response would not keep (a video, an archive) is not downloaded
      wantBody: bodyWanted(s.pageTypes, g.fetch_as),
      // the address the gate charged the request to, first (the others if it does not connect)
      address: g.ip ?? null,
    });
  } catch (err) {
    if (!(err instanceof HttpFetchError)) {
      await release(ctx, g, ctx.clock.now(), judgeFetch(null, null, g.delay_ms, Math.round(ctx.clock.now() - start), ctx.clock.now()).feedback);
      throw err;
    }
    failure = err;
  }
  const end = ctx.clock.now();
  const durationMs = Math.round(end - start);
  const judged = judgeFetch(res, failure, g.delay_ms, durationMs, end);
  const { retryable } = judged;
  // a failure travels with the host's pacing: a given-up host's queued URLs end with it
  const feedback: FetchFeedback = judged.feedback.kind === 'ok' ? judged.feedback : { ...judged.feedback, failure: failureOf(res, failure, judged.feedback) };
  // the host's pacing decision after a failure goes into the fetch_log row too; one random
  // draw, so the jitter written there is the jitter applied
  const draw = Math.random();
  // the host's next delay runs from a little after our end of the response: a server measures
  // the gap from when it finished sending, which it may record some ms after we finished
  // reading (a busy event loop, its own clock), and every gap it sees must be the full delay
  const paceFrom = end + PACING_GUARD_MS;
  const paced = feedback.kind === 'ok' ? null : await pacingPreview(ctx, g.host, feedback, paceFrom, draw);
  // A failure that pauses its host ends its URL, retries left or not: the retry would come
  // only after the pause, and failing again would cost the host another one (a failed probe
  // is such a failure). The gate ends the host's other URLs waiting for a retry likewise
  // (failing-host.ts), so a host's failing URLs cost at most its two pauses, not one each.
  // A URL the server only asked to come back later for (429, Retry-After) is retried after it.
  const retriesLeft = retryable && (g.attempt ?? 0) < s.maxRetries;
  const pausesHost = paced !== null && paced.paused_until > 0 && !(feedback.kind !== 'ok' && feedback.failure?.throttled);
  const pacingNote = !paced ? '' : retriesLeft && pausesHost ? `not retried: ${paced.last_decision}` : paced.last_decision;
  // the grant is redelivered: it must find the host paced by this answer (a Retry-After, a
  // backoff) and go back to the gate, not ask again at once
  const keepAnswer = () => retryFor(() => release(ctx, g, paceFrom, feedback, draw, false), RELEASE_RETRY_MS);
  let placed: PlacedBody | undefined;
  try {
    placed = res ? await placeBody(ctx, 'fetch', g.host, res.body) : undefined;
  } catch (err) {
    // storing a large body failed as a publish would (the bodies stream unavailable)
    await keepAnswer().catch(() => undefined);
    throw err;
  }
  if (res?.truncated) ctx.metrics.count('fetch', 'bodies', 'truncated');
  const facts: ExchangeFacts = {
    kind: res ? 'response' : 'failure',
    captureId: `${g.fetch_id}:${g.attempt ?? 0}`,
    fetchId: g.fetch_id,
    url: g.url,
    host: g.host,
    domain: g.domain,
    depth: g.depth,
    fetchTime: start,
    durationMs,
    requestHeaders,
    userAgent: s.userAgent,
    res,
    ...(placed ? { placed } : {}),
    failure: failure ? `${failure.code}: ${failure.message}` : null,
    redirect: res && res.status >= 300 && res.status < 400 ? locationOf(res, g.url) : null,
    robots: 'allowed (granted by the politeness gate)',
    refersToDate: res?.status === 304 && previous ? previous.fetch_time : null,
    attempt: g.attempt ?? 0,
    ...(g.redirect_chain ? { redirectChain: g.redirect_chain } : {}),
    job: g.job,
    ...(res?.bodyNotRead ? { bodyNotRead: notDownloaded(res) } : {}),
  };
  const a: Attempt = { ctx, g, start, durationMs, status: res?.status ?? null, pacingNote };
  let out: Emit[];
  if (res?.status === 304 && previous) {
    out = notModifiedEmits(a, previous);
  } else if (retriesLeft && !pausesHost) {
    out = retryEmits(a, feedback);
  } else if (res) {
    out = responseEmits(a, res, facts);
  } else if (failure!.code === 'refused') {
    ctx.log.warn({ host: g.host, reason: failure!.message }, 'SSRF guard refused an address');
    out = [fetchOutcome(a, 'refused', failure!.message || 'refused by the SSRF guard')];
  } else {
    out = [fetchOutcome(a, 'network_error', withNote(`${failure!.code}: ${failure!.message}`, pacingNote))];
  }
  const page = out.some((m) => isSubjectOf('fetched', m.subject));
  // every exchange is archived: an HTML page through its fetched message, anything else here
  if (!page) out.push(exchangeEmit(facts, s.partitions));
  // a job's URL that ended here (not a page: simhash schedules those) gets its next revisit
  const retried = out.some((m) => isSubjectOf('frontier', m.subject));
  if (g.job !== undefined && !page && !retried) {
    // a 304's validators are those of the copy it confirms (the revisit keeps them); a failure has none
    const sent = res && res.status !== 304 ? validatorsOf(res) : null;
    const extra = sent ? { etag: sent.etag, lastModified: sent.last_modified } : {};
    out.push(...(await revisitEmit(ctx, g, g.fetch_id, fetchResultOf(res, failure), extra)).emits);
  }
  // by status class (a bounded label set); a failed request by its error code
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
  // the host is released only once the outputs are published: a grant redelivered after that
  // is recognised as done, and one redelivered before it still holds the lease and fetches again
  return {
    kind: 'emit',
    messages: out,
    afterPublish: () => release(ctx, g, paceFrom, feedback, draw),
    // (the KV store may be electing a leader too: the same outage that failed the publish)
    onPublishFailed: keepAnswer,
  };
}

/**
 * A redelivered grant whose lease an earlier delivery confirmed, with no record of how its
 * request ended (its fetcher died, or its outputs and then the release both failed): the
 * server may have answered anything, a Retry-After included, so the request counts as a
 * failure (the host backs off) and the URL goes back to the gate to be granted again.
 */
function afterUnrecordedRequest(ctx: StageContext, g: FetchGrant): Outcome {
  ctx.metrics.count('fetch', 'grants', 'unrecorded');
  const unknown: FetchFeedback = { kind: 'network_error', code: 'outcome_unknown', durationMs: 0, baseDelayMs: g.delay_ms };
  const regrant = backToGate(ctx, g);
  if (regrant.kind !== 'emit') return regrant;
  return { ...regrant, afterPublish: () => release(ctx, g, ctx.clock.now() + PACING_GUARD_MS, unknown, Math.random(), false) };
}


/**
 * Validators stored by this very fetch (a grant delivered again after its outputs went out)
 * describe its own first answer, not an earlier crawl's: asking "changed since?" would record
 * a 304 next to the page it already stored. Fetched again unconditionally, it emits the same
 * messages (same ids), which the output's views count once.
 */
function ownFirstAnswerAside(v: Validators | null, fetchId: string): Validators | null {
  return v && v.fetch_id === fetchId ? null : v;
}

/** Frees the host (paced by what the request showed) and the grant's place on its IP. */
async function release(ctx: StageContext, g: FetchGrant, end: number, feedback: FetchFeedback, draw = Math.random(), done = true): Promise<void> {
  const slot = await releaseSlot(ctx.kv.hosts, g.host, g.lease_id, end, feedback, pacingOf(ctx), () => draw, done);
  if (g.ip) await releaseIp(ctx.kv.hosts, g.ip, g.lease_id, end);
  if (slot.last_decision) ctx.log.info({ host: g.host, decision: slot.last_decision }, 'host pacing');
}

/** a 3xx's Location resolved against the URL, or null when absent or invalid */
function locationOf(res: HttpResponse, url: string): string | null {
  const location = res.headers['location'];
  if (!location) return null;
  try {
    return new URL(location, url).toString();
  } catch {
    return null;
  }
}


/**
 * What the release will decide for the host, from its current failure count (the host is
 * this request's alone until then: one request in flight).
 */
async function pacingPreview(ctx: StageContext, host: string, feedback: FetchFeedback, end: number, draw: number): Promise<Pacing> {
  const slot = (await readSlot(ctx.kv.hosts, host)) ?? emptySlot(host);
  return nextPacing(slot, feedback, end, pacingOf(ctx), () => draw);
}

/** The validators a revisit carries, as a conditional GET sends them (null: none, a plain GET). */
function revisitValidators(r: RevisitState): Validators | null {
  if (!r.etag && !r.last_modified) return null;
  return { etag: r.etag ?? null, last_modified: r.last_modified ?? null, fetch_time: r.fetched_at };
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
