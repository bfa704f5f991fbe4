import {
  encodeAdmitted,
  encodeDiscoveredLinks,
  encodeExchange,
  type FetchGrant,
  type OutcomeKind,
} from '../../schemas/index.js';
import { HttpFetchError, type HttpResponse } from '../../ports/http.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, type Emit, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { confirmLease, emptySlot, readSlot, releaseSlot } from '../shared/host-state/host-slot.js';
import { nextPacing, type FetchFeedback } from '../shared/host-state/host-pacing.js';
import { judgeFetch } from '../shared/failure-policy.js';
import { harvestPdfLinks } from './pdf-links.js';
import { MESSAGE_SLACK_BYTES, utf8Length, withinBudget } from '../shared/messages/message-budget.js';
import { conditionalHeaders, readValidators, type Validators } from '../shared/validators.js';
import { extendIp, releaseIp } from '../shared/host-state/ip-slot.js';
import { pacingOf } from '../shared/host-state/host-pacing.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { outcomeEmit } from '../shared/messages/outcome-emit.js';
import { classifyResponse } from './classify-response.js';
import { MESSAGE_OVERHEAD_BYTES } from './spec.js';
import { exchangeEmit, exchangeInfo, type ExchangeFacts } from '../shared/messages/exchange-emit.js';

/** Redirect hops followed from the URL first linked; one more is refused. */
export const MAX_REDIRECTS = 5;

/** How long after the end of a response the host's next delay starts (see handleFetch). */
export const PACING_GUARD_MS = 25;

/** Why a redirect is not followed (a loop, or too many hops), or null to follow it. */
export function redirectStop(chain: readonly string[], target: string): string | null {
  if (chain.includes(target)) return `redirect loop: ${[...chain, target].join(' -> ')}, not followed`;
  if (chain.length > MAX_REDIRECTS) return `too many redirects: more than ${MAX_REDIRECTS} from ${chain[0]}, ${target} not followed`;
  return null;
}

function fetchOutcome(
  ctx: StageContext,
  g: FetchGrant,
  outcome: OutcomeKind,
  reason: string,
  status: number | null,
  fetchTime: number,
  durationMs: number | null,
  redirect: string | null = null,
): Emit {
  return outcomeEmit(ctx, `outcome:${g.fetch_id}:${outcome}`, {
    event_id: stableId(outcome, g.fetch_id),
    fetch_id: g.fetch_id,
    url: g.url,
    host: g.host,
    outcome,
    reason,
    fetch_status: status,
    fetch_time: fetchTime,
    duration_ms: durationMs,
    depth: g.depth,
    fetch_redirect: redirect,
  });
}

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

function responseEmits(ctx: StageContext, g: FetchGrant, res: HttpResponse, start: number, durationMs: number, pacingNote: string, facts: ExchangeFacts): Emit[] {
  const verdict = classifyResponse(res, g.url, ctx.settings.pageTypes);
  switch (verdict.kind) {
    case 'redirect': {
      const chain = [...(g.redirect_chain ?? []), g.url];
      const target = verdict.location;
      const stop = redirectStop(chain, target);
      const outcome = fetchOutcome(ctx, g, 'redirect', stop ?? `redirect to ${target}`, res.status, start, durationMs, target);
      if (stop) {
        ctx.metrics.count('fetch', 'redirects', 'stopped');
        return [outcome];
      }
      return [
        outcome,
        {
          subject: subjectFor('links', g.host, ctx.settings.partitions),
          msgId: `redirect:${g.fetch_id}`,
          // a redirect is the same resource at another address: its target keeps the depth, and
          // goes through normalize, seen-filter and the gate like any link (scope, dedup, robots)
          data: encodeDiscoveredLinks({ v: 1, source_url: g.url, depth: g.depth, via: 'redirect', links: [{ url: target }], redirect_chain: chain }),
        },
      ];
    }
    case 'http_error':
      return [fetchOutcome(ctx, g, 'http_error', withNote(verdict.reason, pacingNote), res.status, start, durationMs)];
    case 'pdf': {
      // URLs normalize would refuse anyway (over 2048 characters) are dropped, and the rest must fit one message
      const links = withinBudget(
        harvestPdfLinks(res.body).filter((u) => u.length <= 2048),
        (u) => utf8Length(u) + 16,
        Math.max(0, ctx.maxPayloadBytes - MESSAGE_SLACK_BYTES),
      );
      const reason = `${verdict.mimeType}: not stored; ${links.length} links harvested${res.truncated ? ' (body truncated)' : ''}`;
      const out = [fetchOutcome(ctx, g, 'unsupported_content', reason, res.status, start, durationMs)];
      if (links.length > 0 && g.depth + 1 <= ctx.settings.maxDepth) {
        out.push({
          subject: subjectFor('links', g.host, ctx.settings.partitions),
          msgId: `pdf-links:${g.fetch_id}`,
          data: encodeDiscoveredLinks({ v: 1, source_url: g.url, depth: g.depth + 1, via: 'link', links: links.map((url) => ({ url, anchor: '', rel: 'pdf' })) }),
        });
      }
      return out;
    }
    case 'unsupported_content':
      return [fetchOutcome(ctx, g, 'unsupported_content', verdict.reason, res.status, start, durationMs)];
    case 'html':
      return [
        {
          subject: subjectFor('fetched', g.host, ctx.settings.partitions),
          msgId: `fetched:${g.fetch_id}`,
          // the exchange rides along for the archive; extract's decoder drops it
          data: encodeExchange({
            v: 1,
            fetch_id: g.fetch_id,
            url: g.url,
            host: g.host,
            domain: g.domain,
            depth: g.depth,
            fetch_time: start,
            fetch_status: res.status,
            duration_ms: durationMs,
            content_type: verdict.mimeType,
            charset: verdict.charset,
            headers: res.headers,
            body: res.body,
            truncated: res.truncated,
            ...(g.redirect_chain ? { redirect_chain: g.redirect_chain } : {}),
            exchange: exchangeInfo({ ...facts, kind: 'page' }),
          }),
        },
      ];
  }
}

/**
 * A retryable failure (5xx, 429, timeout, network error) with retries left: a `retry` row
 * in fetch_log and the URL back in its host's queue, where the host's backoff (or its
 * Retry-After) decides when it is tried again.
 */
function retryEmits(ctx: StageContext, g: FetchGrant, feedback: FetchFeedback, status: number | null, start: number, durationMs: number, pacingNote: string): Emit[] {
  const attempt = (g.attempt ?? 0) + 1;
  const { lease_id: _lease, granted_at: _granted, delay_ms: _delay, ip: _ip, ...admitted } = g;
  const what = feedback.kind === 'network_error' ? feedback.code : `http ${status}`;
  ctx.metrics.count('fetch', 'retries', feedback.kind);
  return [
    outcomeEmit(ctx, `outcome:${g.fetch_id}:retry:${attempt}`, {
      event_id: stableId('retry', g.fetch_id, attempt),
      fetch_id: g.fetch_id,
      url: g.url,
      host: g.host,
      outcome: 'retry',
      reason: withNote(`${what}: retry ${attempt} of ${ctx.settings.maxRetries}`, pacingNote),
      fetch_status: status,
      fetch_time: start,
      duration_ms: durationMs,
      depth: g.depth,
    }),
    {
      subject: subjectFor('frontier', g.host, ctx.settings.partitions),
      msgId: `retry:${g.fetch_id}:${attempt}`,
      data: encodeAdmitted({ ...admitted, attempt }),
    },
  ];
}

export async function handleFetch(input: StageInput<FetchGrant>, ctx: StageContext): Promise<Outcome> {
  const g = input.message;
  const s = ctx.settings;
  const leaseMs = s.totalTimeoutMs + 10_000;
  const lease = await confirmLease(ctx.kv.hosts, g.host, g.lease_id, ctx.clock.now(), leaseMs);
  if (lease === 'done') {
    // redelivered after its request completed (the ack was lost): its outputs are already out
    ctx.metrics.count('fetch', 'grants', 'already_done');
    return emit();
  }
  if (lease === 'lost') return backToGate(ctx, g);
  if (g.ip) await extendIp(ctx.kv.hosts, g.ip, g.lease_id, ctx.clock.now() + leaseMs);
  const previous = await readValidators(ctx.kv.validators, g.url);
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
      // the body travels in one message: it must fit the server's max_payload
      maxBodyBytes: Math.max(1024, Math.min(s.maxBodyBytes, ctx.maxPayloadBytes - MESSAGE_OVERHEAD_BYTES)),
      maxDecompressionRatio: s.maxDecompressionRatio,
      minBytesPerSecond: s.minTransferRate,
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
  const { feedback, retryable } = judgeFetch(res, failure, g.delay_ms, durationMs, end);
  // the host's pacing decision after a failure goes into the fetch_log row too; one random
  // draw, so the jitter written there is the jitter applied
  const draw = Math.random();
  // the host's next delay runs from a little after our end of the response: a server measures
  // the gap from when it finished sending, which it may record some ms after we finished
  // reading (a busy event loop, its own clock), and every gap it sees must be the full delay
  const paceFrom = end + PACING_GUARD_MS;
  const pacingNote = feedback.kind === 'ok' ? '' : await pacingPreview(ctx, g.host, feedback, paceFrom, draw);
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
    failure: failure ? `${failure.code}: ${failure.message}` : null,
    redirect: res && res.status >= 300 && res.status < 400 ? locationOf(res, g.url) : null,
    robots: 'allowed (granted by the politeness gate)',
    refersToDate: res?.status === 304 && previous ? previous.fetch_time : null,
    attempt: g.attempt ?? 0,
    ...(g.redirect_chain ? { redirectChain: g.redirect_chain } : {}),
  };
  let out: Emit[];
  if (res?.status === 304 && previous) {
    out = notModifiedEmits(ctx, g, previous, start, durationMs);
  } else if (retryable && (g.attempt ?? 0) < s.maxRetries) {
    out = retryEmits(ctx, g, feedback, res?.status ?? null, start, durationMs, pacingNote);
  } else if (res) {
    out = responseEmits(ctx, g, res, start, durationMs, pacingNote, facts);
  } else if (failure!.code === 'refused') {
    ctx.log.warn({ url: g.url, reason: failure!.message }, 'SSRF guard refused an address');
    out = [fetchOutcome(ctx, g, 'refused', failure!.message || 'refused by the SSRF guard', null, start, durationMs)];
  } else {
    out = [fetchOutcome(ctx, g, 'network_error', withNote(`${failure!.code}: ${failure!.message}`, pacingNote), null, start, durationMs)];
  }
  // every exchange is archived: an HTML page through its fetched message, anything else here
  if (!out.some((m) => m.subject.startsWith('crawl.fetched.'))) out.push(exchangeEmit(facts, s.partitions));
  ctx.metrics.count('fetch', 'responses', res ? String(res.status) : `error_${failure!.code}`);
  // the host is released only once the outputs are published: a grant redelivered after that
  // is recognised as done, and one redelivered before it still holds the lease and fetches again
  return { kind: 'emit', messages: out, afterPublish: () => release(ctx, g, paceFrom, feedback, draw) };
}

/** A 304 to a conditional GET: the page is unchanged, and so are its links, followed as the first fetch did. */
function notModifiedEmits(ctx: StageContext, g: FetchGrant, previous: Validators, start: number, durationMs: number): Emit[] {
  const since = new Date(previous.fetch_time).toISOString();
  const validator = previous.etag ? `ETag ${previous.etag}` : `Last-Modified ${previous.last_modified}`;
  const out = [fetchOutcome(ctx, g, 'not_modified', `not modified since the fetch of ${since} (${validator})`, 304, start, durationMs)];
  if (previous.links?.length && g.depth + 1 <= ctx.settings.maxDepth) {
    out.push({
      subject: subjectFor('links', g.host, ctx.settings.partitions),
      msgId: `links:${g.fetch_id}`,
      data: encodeDiscoveredLinks({ v: 1, source_url: g.url, depth: g.depth + 1, via: 'link', links: previous.links.map((url) => ({ url })) }),
    });
  }
  return out;
}

/** Frees the host (paced by what the request showed) and the grant's place on its IP. */
async function release(ctx: StageContext, g: FetchGrant, end: number, feedback: FetchFeedback, draw = Math.random()): Promise<void> {
  const slot = await releaseSlot(ctx.kv.hosts, g.host, g.lease_id, end, feedback, pacingOf(ctx), () => draw);
  if (g.ip) await releaseIp(ctx.kv.hosts, g.ip, g.lease_id, end);
  if (slot.last_decision) ctx.log.info({ host: g.host, url: g.url, decision: slot.last_decision }, 'host pacing');
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

const withNote = (reason: string, note: string) => (note ? `${reason}; ${note}` : reason);

/** What the release will decide for the host, from its current failure count. */
async function pacingPreview(ctx: StageContext, host: string, feedback: FetchFeedback, end: number, draw: number): Promise<string> {
  const slot = (await readSlot(ctx.kv.hosts, host)) ?? emptySlot(host);
  return nextPacing(slot, feedback, end, pacingOf(ctx), () => draw).last_decision;
}
