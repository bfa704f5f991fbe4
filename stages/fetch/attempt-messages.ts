/**
 * The messages one fetch attempt ends in: its fetch_log row, what follows from the response
 * (the page for extract, a redirect's target or a PDF's links for normalize, the URL back in
 * the frontier for a retry), and the exchange for the archive. No I/O: built from the answer.
 */
import { encodeAdmitted, encodeDiscoveredLinks, encodeExchange, type FetchGrant, type OutcomeKind } from '../../schemas/index.js';
import type { HttpResponse } from '../../ports/http.js';
import { subjectFor } from '../../pipeline/partition.js';
import type { Emit, StageContext } from '../../pipeline/stage.js';
import { isSubjectOf } from '../../topology/index.js';
import type { FetchFeedback } from '../shared/politeness/index.js';
import type { PlacedBody } from '../shared/messages/page-body.js';
import type { SentRequest } from './send-request.js';
import type { JudgedAnswer } from './judge-answer.js';
import { MESSAGE_SLACK_BYTES, utf8Length, withinBudget } from '../shared/messages/message-budget.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { outcomeEmit, urlOutcome } from '../shared/messages/outcome-emit.js';
import { exchangeEmit, exchangeInfo, type ExchangeFacts } from '../shared/messages/exchange-emit.js';
import { exchangeFactsOf } from './exchange-facts.js';
import type { Validators } from '../shared/conditional-get.js';
import { jobFieldsOf, jobOf } from '../shared/jobs/job-fields.js';
import { classifyResponse } from './classify-response.js';
import { harvestPdfLinks } from './pdf-links.js';
import { indexingVerdict, xRobotsTagGroup } from '../shared/robots/robots-directives.js';
import { robotsTokenOf } from '../shared/robots/robots-rules.js';

/** ETag and Last-Modified as the response sent them (a revisit's conditional GET sends them back). */
export const validatorsOf = (res: HttpResponse) => ({ etag: res.headers['etag'] ?? null, last_modified: res.headers['last-modified'] ?? null });

/** Last-Modified as a freshness hint (epoch ms), when the response has a valid one. */
function lastModifiedOf(res: HttpResponse): { last_modified?: number } {
  const t = Date.parse(res.headers['last-modified'] ?? '');
  return Number.isFinite(t) ? { last_modified: t } : {};
}

/** `X-Robots-Tag: nofollow` (or none) for the crawler, as the reason says it, or null. */
function pdfNofollow(res: HttpResponse, ctx: StageContext): string | null {
  const group = xRobotsTagGroup(res.headers, robotsTokenOf(ctx.settings), res.headerLines);
  return group && indexingVerdict([group]).nofollow ? `X-Robots-Tag: ${group.rules.join(', ')}` : null;
}

/** Redirect hops followed from the URL first linked; one more is refused. */
export const MAX_REDIRECTS = 5;

/** Why a redirect is not followed (a loop, or too many hops), or null to follow it. */
export function redirectStop(chain: readonly string[], target: string): string | null {
  if (chain.includes(target)) return `redirect loop: ${[...chain, target].join(' -> ')}, not followed`;
  if (chain.length > MAX_REDIRECTS) return `too many redirects: more than ${MAX_REDIRECTS} from ${chain[0]}, ${target} not followed`;
  return null;
}

/**
 * Everything one attempt emits: its row and what follows from the answer (attemptOf describes
 * the attempt); every exchange is archived, an HTML page through its fetched message and
 * anything else as an exchange of its own.
 */
export function attemptMessages(a: Attempt, sent: SentRequest, previous: Validators | null, judged: JudgedAnswer, placed: PlacedBody | undefined): Emit[] {
  const { ctx, g } = a;
  const { res, failure } = sent;
  const facts = exchangeFactsOf(a.ctx, a.g, sent, previous, placed);
  let out: Emit[];
  if (res?.status === 304 && previous) {
    out = notModifiedEmits(a, previous);
  } else if (judged.retry) {
    out = retryEmits(a, judged.release.feedback);
  } else if (res) {
    out = responseEmits(a, res, facts);
  } else if (failure!.code === 'refused') {
    ctx.log.warn({ host: g.host, reason: failure!.message }, 'SSRF guard refused an address');
    out = [fetchOutcome(a, 'refused', failure!.message || 'refused by the SSRF guard')];
  } else {
    out = [fetchOutcome(a, 'network_error', withNote(`${failure!.code}: ${failure!.message}`, a.pacingNote))];
  }
  if (!out.some(isPage)) out.push(exchangeEmit(facts, ctx.settings.partitions));
  return out;
}

/** The page for extract (which carries its exchange for the archive). */
export const isPage = (m: Emit): boolean => isSubjectOf('fetched', m.subject);
/** The URL back in the frontier, to be tried again. */
export const isRetry = (m: Emit): boolean => isSubjectOf('frontier', m.subject);

/** The attempt as the rows it ends in describe it. */
export function attemptOf(ctx: StageContext, g: FetchGrant, sent: SentRequest, judged: JudgedAnswer): Attempt {
  return { ctx, g, start: sent.start, durationMs: sent.durationMs, status: sent.res?.status ?? null, pacingNote: judged.pacingNote };
}

/** One request made for a grant, as the rows it ends in describe it. */
export interface Attempt {
  ctx: StageContext;
  g: FetchGrant;
  /** when the request started, and how long it took */
  start: number;
  durationMs: number;
  /** the response's status; null when there was none */
  status: number | null;
  /** after a failure: the host's pacing decision, appended to the reason */
  pacingNote: string;
}

export function fetchOutcome(a: Attempt, outcome: OutcomeKind, reason: string, redirect: string | null = null): Emit {
  const { ctx, g } = a;
  return outcomeEmit(
    ctx,
    `outcome:${g.fetch_id}:${outcome}`,
    urlOutcome(g, { event_id: stableId(outcome, g.fetch_id), outcome, reason, fetch_status: a.status, fetch_time: a.start, duration_ms: a.durationMs, fetch_redirect: redirect }),
  );
}

export function responseEmits(a: Attempt, res: HttpResponse, facts: ExchangeFacts): Emit[] {
  const { ctx, g } = a;
  const verdict = classifyResponse(res, g.url, ctx.settings.pageTypes, g.fetch_as);
  switch (verdict.kind) {
    case 'redirect': {
      const chain = [...(g.redirect_chain ?? []), g.url];
      const target = verdict.location;
      const stop = redirectStop(chain, target);
      const outcome = fetchOutcome(a, 'redirect', stop ?? `redirect to ${target}`, target);
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
          data: encodeDiscoveredLinks({
            v: 1,
            source_url: g.url,
            depth: g.depth,
            via: 'redirect',
            // a sitemap that moved is still a sitemap
            links: [{ url: target, ...(g.fetch_as ? { fetch_as: g.fetch_as } : {}) }],
            redirect_chain: chain,
            // a seed that moved (example.com -> www.example.co.uk) takes its scope along
            ...(g.via === 'seed' || g.from_seed ? { from_seed: true as const } : {}),
            ...jobOf(g),
            ...(g.sitemap_level !== undefined ? { sitemap_level: g.sitemap_level } : {}),
          }),
        },
      ];
    }
    case 'http_error':
      return [fetchOutcome(a, 'http_error', withNote(verdict.reason, a.pacingNote))];
    case 'pdf': {
      // URLs normalize would refuse anyway (over 2048 characters) are dropped, and the rest must fit one message
      const links = withinBudget(
        harvestPdfLinks(res.body).filter((u) => u.length <= 2048),
        (u) => utf8Length(u) + 16,
        Math.max(0, ctx.maxPayloadBytes - MESSAGE_SLACK_BYTES),
      );
      // the header is how a PDF says nofollow (it has no meta tags)
      const nofollow = pdfNofollow(res, ctx);
      const reason = `${verdict.mimeType}: not stored; ${links.length} links harvested${res.truncated ? ' (body truncated)' : ''}${nofollow ? `, not followed (${nofollow})` : ''}`;
      const out = [fetchOutcome(a, 'unsupported_content', reason)];
      if (!nofollow && links.length > 0 && (g.job !== undefined || g.depth + 1 <= ctx.settings.maxDepth)) {
        out.push({
          subject: subjectFor('links', g.host, ctx.settings.partitions),
          msgId: `pdf-links:${g.fetch_id}`,
          data: encodeDiscoveredLinks({ v: 1, source_url: g.url, depth: g.depth + 1, via: 'link', links: links.map((url) => ({ url, anchor: '', rel: 'pdf' })), ...jobOf(g) }),
        });
      }
      return out;
    }
    case 'unsupported_content':
      return [fetchOutcome(a, 'unsupported_content', verdict.reason)];
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
            fetch_time: a.start,
            fetch_status: res.status,
            duration_ms: a.durationMs,
            content_type: verdict.mimeType,
            charset: verdict.charset,
            headers: res.headers,
            ...(res.headerLines ? { header_lines: res.headerLines } : {}),
            // the body, or (too large for the message) where it is stored
            ...(facts.placed ?? { body: res.body }),
            truncated: res.truncated,
            ...(g.redirect_chain ? { redirect_chain: g.redirect_chain } : {}),
            ...jobFieldsOf(g),
            ...lastModifiedOf(res),
            ...(g.job !== undefined ? { validators: validatorsOf(res) } : {}),
            ...(g.importance !== undefined ? { importance: g.importance } : {}),
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
export function retryEmits(a: Attempt, feedback: FetchFeedback): Emit[] {
  const { ctx, g } = a;
  const attempt = (g.attempt ?? 0) + 1;
  const { lease_id: _lease, granted_at: _granted, delay_ms: _delay, ip: _ip, ...admitted } = g;
  const what = feedback.kind === 'network_error' ? feedback.code : `http ${a.status}`;
  ctx.metrics.count('fetch', 'retries', feedback.kind);
  return [
    outcomeEmit(
      ctx,
      `outcome:${g.fetch_id}:retry:${attempt}`,
      urlOutcome(g, {
        event_id: stableId('retry', g.fetch_id, attempt),
        outcome: 'retry',
        reason: withNote(`${what}: retry ${attempt} of ${ctx.settings.maxRetries}`, a.pacingNote),
        fetch_status: a.status,
        fetch_time: a.start,
        duration_ms: a.durationMs,
      }),
    ),
    {
      subject: subjectFor('frontier', g.host, ctx.settings.partitions),
      msgId: `retry:${g.fetch_id}:${attempt}`,
      // how this try failed: the URL's reason if its host is paused before the retry (serve-host.ts)
      data: encodeAdmitted({ ...admitted, attempt, ...(feedback.kind !== 'ok' && feedback.failure ? { last_failure: feedback.failure } : {}) }),
    },
  ];
}

/** A 304 to a conditional GET: the page is unchanged, and so are its links, followed as the first fetch did. */
export function notModifiedEmits(a: Attempt, previous: Validators): Emit[] {
  const { ctx, g } = a;
  const since = new Date(previous.fetch_time).toISOString();
  const validator = previous.etag ? `ETag ${previous.etag}` : `Last-Modified ${previous.last_modified}`;
  const out = [fetchOutcome(a, 'not_modified', `not modified since the fetch of ${since} (${validator})`)];
  if (previous.links?.length && (g.job !== undefined || g.depth + 1 <= ctx.settings.maxDepth)) {
    out.push({
      subject: subjectFor('links', g.host, ctx.settings.partitions),
      msgId: `links:${g.fetch_id}`,
      data: encodeDiscoveredLinks({ v: 1, source_url: g.url, depth: g.depth + 1, via: 'link', links: previous.links.map((url) => ({ url })), ...jobOf(g) }),
    });
  }
  return out;
}

export const withNote = (reason: string, note: string) => (note ? `${reason}; ${note}` : reason);