import type { ArchivedExchange } from '../../schemas/index.js';
import type { CaptureRow } from '../../schemas/output-tables.js';
import { truncation, type BuiltRecords } from './exchange-records.js';
import { surtKey } from './surt.js';
import { hostParts } from './host-parts.js';

/** cc-index subsets: what a user filters on to get pages only, or the crawl's diagnostics; `rendered` for the DOM of a rendered page. */
export function subsetOf(e: ArchivedExchange): 'warc' | 'crawldiagnostics' | 'robotstxt' | 'rendered' {
  if (e.exchange?.kind === 'robots') return 'robotstxt';
  if (e.exchange?.kind === 'rendered') return 'rendered';
  return e.fetch_status >= 200 && e.fetch_status < 300 ? 'warc' : 'crawldiagnostics';
}

/** A few magic numbers and markup: enough to tell when a server's Content-Type is wrong. */
export function detectMime(body: Uint8Array): string | null {
  if (body.length === 0) return null;
  const head = Buffer.from(body.subarray(0, 512));
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf';
  if (head[0] === 0x89 && head.subarray(1, 4).toString('latin1') === 'PNG') return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (head[0] === 0x1f && head[1] === 0x8b) return 'application/gzip';
  if (head.subarray(0, 4).toString('latin1') === 'PK\u0003\u0004') return 'application/zip';
  const text = head.toString('utf8').trimStart().toLowerCase();
  if (/^(<!doctype html|<html|<head|<body|<!--)/.test(text)) return 'text/html';
  if (text.startsWith('<?xml')) return 'application/xml';
  if (text.startsWith('{') || text.startsWith('[')) return 'application/json';
  // no control bytes other than whitespace: text
  return head.every((b) => b >= 0x20 || b === 9 || b === 10 || b === 13) ? 'text/plain' : 'application/octet-stream';
}

export function captureRow(e: ArchivedExchange, built: BuiltRecords, where: { filename: string; offset: number; length: number }, crawlId: string): CaptureRow {
  const u = new URL(e.url);
  const host = u.hostname.toLowerCase();
  const failed = built.kind === 'metadata';
  return {
    url_surtkey: surtKey(e.url),
    url: e.url,
    url_host_name: host,
    ...hostParts(host),
    url_protocol: u.protocol.replace(/:$/, ''),
    url_port: u.port ? Number(u.port) : null,
    url_path: u.pathname,
    url_query: u.search ? u.search.slice(1) : null,
    fetch_time: e.fetch_time,
    fetch_status: failed ? null : e.fetch_status,
    fetch_redirect: e.exchange?.redirect ?? null,
    content_digest: built.payloadDigest,
    content_mime_type: failed || e.content_type === '' ? null : e.content_type,
    content_mime_detected: failed ? null : detectMime(e.body),
    content_charset: e.charset,
    content_languages: null,
    content_truncated: truncation(e),
    warc_filename: where.filename,
    warc_record_offset: where.offset,
    warc_record_length: where.length,
    subset: subsetOf(e),
    capture_id: e.exchange?.capture_id ?? `${e.fetch_id}:0`,
    fetch_id: e.exchange?.kind === 'robots' ? null : e.fetch_id,
    warc_record_id: built.mainRecordId,
    warc_type: built.kind === 'response' || built.kind === 'metadata' || built.kind === 'conversion' ? built.kind : 'revisit',
    fetch_duration_ms: e.duration_ms,
    remote_ip: e.exchange?.remote_ip ?? null,
    fetch_protocol: e.exchange?.protocols?.join(' ') ?? null,
    failure_reason: e.exchange?.failure ?? null,
    crawl_id: crawlId,
  };
}
