import type { HttpResponse } from '../../ports/http.js';
import { parseContentType } from '../shared/content-type.js';

export type ResponseClass =
  | { kind: 'html'; mimeType: string; charset: string | null }
  | { kind: 'redirect'; location: string }
  | { kind: 'http_error'; reason: string }
  | { kind: 'pdf'; mimeType: string }
  | { kind: 'unsupported_content'; mimeType: string; reason: string };

/** What is extracted and stored as a page unless the crawl says otherwise (`--page-type`). */
export const DEFAULT_PAGE_TYPES: readonly string[] = ['text/html', 'application/xhtml+xml'];
/** PDFs are not stored, but their links are followed (best effort) */
const PDF_TYPES = new Set(['application/pdf', 'application/x-pdf']);

/**
 * What a response is, for the crawl: a page to extract, a redirect to follow, or an outcome to
 * record. A URL fetched as a sitemap goes to extract whatever its type (XML, text, gzip): the
 * sitemap parser reads what it is.
 */
export function classifyResponse(res: HttpResponse, url: string, pageTypes: readonly string[] = DEFAULT_PAGE_TYPES, fetchAs?: 'sitemap'): ResponseClass {
  if (res.status >= 300 && res.status < 400 && res.status !== 304) {
    const location = res.headers['location'];
    if (!location) return { kind: 'http_error', reason: `http ${res.status} without a Location header` };
    try {
      return { kind: 'redirect', location: new URL(location, url).toString() };
    } catch {
      return { kind: 'http_error', reason: `http ${res.status} with an invalid Location: ${location.slice(0, 200)}` };
    }
  }
  if (res.status < 200 || res.status >= 300) return { kind: 'http_error', reason: `http ${res.status}` };
  const { mimeType, charset } = parseContentType(res.headers['content-type']);
  if (fetchAs === 'sitemap') return { kind: 'html', mimeType: mimeType || 'application/octet-stream', charset };
  // no Content-Type at all: sniff the start of the body for markup
  const looksHtml = mimeType === '' && /^\s*(<!doctype html|<html|<head|<body)/i.test(new TextDecoder().decode(res.body.subarray(0, 512)));
  if (pageTypes.includes(mimeType) || looksHtml) return { kind: 'html', mimeType: mimeType || 'text/html', charset };
  if (PDF_TYPES.has(mimeType)) return { kind: 'pdf', mimeType };
  const reason = `content type ${mimeType || '(none)'} is not HTML (not stored; --page-type adds types)`;
  return { kind: 'unsupported_content', mimeType, reason: res.bodyNotRead ? `${reason}; ${notDownloaded(res)}` : reason };
}

/**
 * Whether a response's body is worth downloading, decided from its status and headers by the
 * rules `classifyResponse` applies after it: a 2xx whose type is neither a page type nor a PDF
 * (whose links are harvested) ends as `unsupported_content` whatever its body, so it is not
 * read. A sitemap is read whatever its type; a body without a Content-Type is read (it is
 * sniffed); redirects and errors are read (small, and archived as they came).
 */
export function bodyWanted(pageTypes: readonly string[] = DEFAULT_PAGE_TYPES, fetchAs?: 'sitemap'): (status: number, headers: Record<string, string>) => boolean {
  return (status, headers) => {
    if (fetchAs === 'sitemap' || status < 200 || status >= 300) return true;
    const { mimeType } = parseContentType(headers['content-type']);
    return mimeType === '' || pageTypes.includes(mimeType) || PDF_TYPES.has(mimeType);
  };
}

/** The bytes a response declared (Content-Length, as sent: compressed if it was), or null. */
export function declaredLength(res: HttpResponse): number | null {
  const raw = res.headers['content-length'];
  return raw !== undefined && /^\d{1,15}$/.test(raw.trim()) ? Number(raw.trim()) : null;
}

/** `body not downloaded (Content-Length 123456789 bytes)`, or `(no Content-Length)` */
export function notDownloaded(res: HttpResponse): string {
  const n = declaredLength(res);
  return `body not downloaded (${n === null ? 'no Content-Length' : `Content-Length ${n} bytes`})`;
}
