import type { FetchGrant } from '../../schemas/index.js';
import type { HttpResponse } from '../../ports/http.js';
import type { StageContext } from '../../pipeline/stage.js';
import type { ExchangeFacts } from '../shared/messages/exchange-emit.js';
import type { PlacedBody } from '../shared/messages/page-body.js';
import type { Validators } from '../shared/conditional-get.js';
import { notDownloaded } from './classify-response.js';
import type { SentRequest } from './send-request.js';

/** The exchange as the archive records it. */
export function exchangeFactsOf(ctx: StageContext, g: FetchGrant, sent: SentRequest, previous: Validators | null, placed: PlacedBody | undefined): ExchangeFacts {
  const { res, failure } = sent;
  return {
    kind: res ? 'response' : 'failure',
    captureId: `${g.fetch_id}:${g.attempt ?? 0}`,
    fetchId: g.fetch_id,
    url: g.url,
    host: g.host,
    domain: g.domain,
    depth: g.depth,
    fetchTime: sent.start,
    durationMs: sent.durationMs,
    requestHeaders: sent.requestHeaders,
    userAgent: ctx.settings.userAgent,
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
