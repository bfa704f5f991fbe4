import { STATUS_CODES } from 'node:http';
import type { HttpResponse } from '../../../ports/http.js';
import { requestHeadersSent } from '../../../ports/http.js';
import { subjectFor } from '../../../pipeline/partition.js';
import type { Emit } from '../../../pipeline/stage.js';
import { encodeExchange, type ArchivedExchange, type ExchangeInfo } from '../../../schemas/index.js';
import { parseContentType } from '../content-type.js';
import type { PlacedBody } from './page-body.js';

/** One HTTP exchange (or attempt at one), as fetch and the gate saw it. */
export interface ExchangeFacts {
  kind: ExchangeInfo['kind'];
  captureId: string;
  fetchId: string;
  url: string;
  host: string;
  domain: string;
  depth: number;
  fetchTime: number;
  durationMs: number;
  /** headers the caller gave the client (the client adds its own: see requestHeadersSent) */
  requestHeaders: Record<string, string> | undefined;
  userAgent: string;
  res: HttpResponse | null;
  /** the response's body as its message carries it (page-body.ts's placeBody); absent: inline */
  placed?: PlacedBody;
  failure?: string | null;
  redirect?: string | null;
  robots?: string | null;
  refersToDate?: number | null;
  attempt?: number;
  redirectChain?: string[];
  /** the crawl job the exchange was made for (its captures' crawl id) */
  job?: string | undefined;
  /** the body was not downloaded (its type is not stored): why, and the length it declared */
  bodyNotRead?: string;
}

/** The `exchange` field: the request line and headers as sent, and what the crawler made of the answer. */
export function exchangeInfo(f: ExchangeFacts): ExchangeInfo {
  const host = new URL(f.url).host;
  return {
    kind: f.kind,
    capture_id: f.captureId,
    method: 'GET',
    request_headers: [['host', host], ...Object.entries(requestHeadersSent(f.requestHeaders, f.userAgent))],
    status_text: f.res ? (STATUS_CODES[f.res.status] ?? '') : '',
    remote_ip: f.res?.remoteAddress ?? null,
    failure: f.failure ?? null,
    redirect: f.redirect ?? null,
    robots: f.robots ?? null,
    refers_to_date: f.refersToDate ?? null,
    attempt: f.attempt ?? 0,
    ...(f.bodyNotRead ? { body_not_read: f.bodyNotRead } : {}),
    ...protocolFields(f.res),
  };
}

/** How the response travelled, for the archive's WARC-Protocol and WARC-Cipher-Suite fields. */
function protocolFields(res: HttpResponse | null): Pick<ExchangeInfo, 'protocols' | 'cipher_suite' | 'tls_unverified'> {
  const p = res?.protocol;
  if (!p) return {};
  return {
    protocols: p.tls ? [p.http, p.tls] : [p.http],
    ...(p.cipher ? { cipher_suite: p.cipher } : {}),
    ...(p.unverified ? { tls_unverified: p.unverified } : {}),
  };
}

/** The whole message for the archive (pages get only `exchangeInfo`, added to their fetched message). */
export function exchangeMessage(f: ExchangeFacts): ArchivedExchange {
  const { mimeType, charset } = parseContentType(f.res?.headers['content-type']);
  return {
    v: 1,
    fetch_id: f.fetchId,
    url: f.url,
    host: f.host,
    domain: f.domain,
    depth: f.depth,
    fetch_time: f.fetchTime,
    // 0: no response (kind failure)
    fetch_status: f.res?.status ?? 0,
    duration_ms: Math.max(0, Math.round(f.durationMs)),
    content_type: mimeType,
    charset,
    headers: f.res?.headers ?? {},
    ...(f.res?.headerLines ? { header_lines: f.res.headerLines } : {}),
    ...(f.placed ?? { body: f.res?.body ?? new Uint8Array(0) }),
    truncated: f.res?.truncated ?? false,
    ...(f.redirectChain?.length ? { redirect_chain: f.redirectChain } : {}),
    ...(f.job !== undefined ? { job: f.job } : {}),
    exchange: exchangeInfo(f),
  };
}

/** `crawl.exchanges.<p>`: every exchange that is not an HTML page goes to the archive this way. */
export function exchangeEmit(f: ExchangeFacts, partitions: number): Emit {
  return {
    subject: subjectFor('exchanges', f.host, partitions),
    msgId: `exchange:${f.captureId}`,
    data: encodeExchange(exchangeMessage(f)),
  };
}
