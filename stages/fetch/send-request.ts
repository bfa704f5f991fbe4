import type { FetchGrant, RevisitState } from '../../schemas/index.js';
import { HttpFetchError, type HttpResponse } from '../../ports/http.js';
import type { StageContext } from '../../pipeline/stage.js';
import { judgeFetch, releaseTurn, type HostLease } from '../shared/politeness/index.js';
import { conditionalHeaders, readValidators, type Validators } from '../shared/conditional-get.js';
import { bodyWanted } from './classify-response.js';

/** One request made for a grant: the answer, or the failure the HTTP client reported. */
export interface SentRequest {
  res: HttpResponse | null;
  failure: HttpFetchError | null;
  requestHeaders: Record<string, string>;
  /** when it started and ended (the end of the response, or of the failure) */
  start: number;
  end: number;
  durationMs: number;
}

/**
 * The validators a conditional GET sends for the grant's URL, or null (a plain GET): a job's
 * revisit carries those of the copy it revisits; other URLs keep them in KV.
 */
export async function previousCopyOf(ctx: StageContext, g: FetchGrant): Promise<Validators | null> {
  return g.revisit ? revisitValidators(g.revisit) : ownFirstAnswerAside(await readValidators(ctx.kv.validators, g.url), g.fetch_id);
}

/**
 * Makes the grant's request, holding its host's turn. A failure the client reports (a
 * timeout, a reset, a refused address) is an answer like a response; anything else thrown is
 * a fault: the turn is released and the error goes on (the runner retries the grant).
 */
export async function sendRequest(ctx: StageContext, g: FetchGrant, turn: HostLease, previous: Validators | null): Promise<SentRequest> {
  const s = ctx.settings;
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
      const now = ctx.clock.now();
      await releaseTurn(ctx, turn, { from: now, feedback: judgeFetch(null, null, g.delay_ms, Math.round(now - start), now).feedback });
      throw err;
    }
    failure = err;
  }
  const end = ctx.clock.now();
  return { res, failure, requestHeaders, start, end, durationMs: Math.round(end - start) };
}

/** The validators a revisit carries, as a conditional GET sends them (null: none, a plain GET). */
function revisitValidators(r: RevisitState): Validators | null {
  if (!r.etag && !r.last_modified) return null;
  return { etag: r.etag ?? null, last_modified: r.last_modified ?? null, fetch_time: r.fetched_at };
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
