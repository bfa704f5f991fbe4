/**
 * CDXJ, the index pywb and Webrecorder's replay engine look records up in: one line a record,
 * `<surt key> <14-digit timestamp> <json>`, sorted as bytes. The entry is read from the
 * record itself (its WARC head and, for HTTP records, its status line and Content-Type), so
 * the line the archive writes as it appends and the line `crawl index` rebuilds from the file
 * come from the same bytes. Which records and which values follow warcio.js's indexer
 * (`cdx-index`, the one ReplayWeb.page's tools use): response, revisit, resource and
 * conversion records; not request, warcinfo, or metadata made of warc-fields.
 */
import type { CdxjEntry } from '../ports/warc-sink.js';
import { surtKey } from './surt.js';

const HEAD_END = Buffer.from('\r\n\r\n');
/** more than any record head here: the HTTP head of a response is read from this prefix */
const HEAD_WINDOW = 64 * 1024;

/**
 * The fields of a head (the lines after its first) that are in `wanted` (lowercased names),
 * a repeated field joined by ", " as fetch's Headers does. Only the wanted lines are split:
 * this runs for every record the archive writes.
 */
function fieldsOf(head: string, wanted: ReadonlySet<string>): Map<string, string> {
  const m = new Map<string, string>();
  let at = head.indexOf('\r\n');
  while (at >= 0) {
    const start = at + 2;
    const next = head.indexOf('\r\n', start);
    const line = next < 0 ? head.slice(start) : head.slice(start, next);
    const i = line.indexOf(':');
    if (i > 0) {
      const k = line.slice(0, i).trim().toLowerCase();
      if (wanted.has(k)) {
        const v = line.slice(i + 1).trim();
        const had = m.get(k);
        m.set(k, had === undefined ? v : `${had}, ${v}`);
      }
    }
    at = next;
  }
  return m;
}

const WARC_FIELDS = new Set(['warc-type', 'content-type', 'warc-target-uri', 'warc-date', 'warc-payload-digest']);
const HTTP_FIELDS = new Set(['content-type']);

/** `2024-01-02T03:04:05.678Z` → `20240102030405` */
export const cdxTimestamp = (warcDate: string): string => warcDate.replace(/[-:T]/g, '').slice(0, 14);

/** The index entry of one uncompressed WARC record, or null when replay never looks it up. */
export function cdxjEntryOf(record: Uint8Array): CdxjEntry | null {
  const buf = Buffer.from(record.buffer, record.byteOffset, record.byteLength);
  const headEnd = buf.indexOf(HEAD_END);
  if (headEnd < 0) return null;
  const warc = fieldsOf(buf.toString('utf8', 0, headEnd), WARC_FIELDS);
  const type = warc.get('warc-type') ?? '';
  const contentType = warc.get('content-type') ?? '';
  if (type === 'request' || type === 'warcinfo' || type === '') return null;
  if ((type === 'metadata' || type === 'resource') && contentType === 'application/warc-fields') return null;
  const url = warc.get('warc-target-uri');
  if (!url) return null;
  const entry: CdxjEntry = { urlkey: surtKey(url), timestamp: cdxTimestamp(warc.get('warc-date') ?? ''), url };
  if (type === 'response' || type === 'revisit') {
    const block = buf.subarray(headEnd + 4, Math.min(buf.length, headEnd + 4 + HEAD_WINDOW));
    const httpEnd = block.indexOf(HEAD_END);
    if (contentType.startsWith('application/http') && httpEnd >= 0) {
      const http = block.toString('latin1', 0, httpEnd);
      const status = /^HTTP\/\S+\s+(\d{3})/.exec(http)?.[1];
      const mime = fieldsOf(http, HTTP_FIELDS).get('content-type')?.split(';', 1)[0]?.trim();
      if (type === 'response' && mime) entry.mime = mime;
      if (status) entry.status = status;
    }
    if (type === 'revisit') entry.mime = 'warc/revisit';
  } else if (contentType) {
    entry.mime = contentType;
  }
  const digest = warc.get('warc-payload-digest');
  if (digest) entry.digest = digest.split(':', 2)[1] ?? digest;
  return entry;
}

/** Where a record landed: the file name is the WARC's own (pywb resolves it against the archive directory). */
export interface CdxjPlace {
  offset: number;
  length: number;
  filename: string;
}

/** One CDXJ line, without its newline; the JSON has warcio.js's keys in its order, numbers as strings. */
export function cdxjLine(e: CdxjEntry, at: CdxjPlace): string {
  const json: Record<string, string> = { url: e.url };
  if (e.mime !== undefined) json.mime = e.mime;
  if (e.status !== undefined) json.status = e.status;
  if (e.digest !== undefined) json.digest = e.digest;
  json.length = String(at.length);
  json.offset = String(at.offset);
  json.filename = at.filename;
  return `${e.urlkey} ${e.timestamp} ${JSON.stringify(json)}`;
}

/**
 * Byte order, as `LC_ALL=C sort` and pywb's binary search expect. UTF-16 order (JavaScript's
 * `<`) equals UTF-8 byte order except between astral characters and U+E000..U+FFFF, which a
 * SURT key (from a parsed, percent-encoded URL) never holds; the JSON after it decides only
 * between lines of the same key and second.
 */
export function compareCdxj(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The lines sorted, joined, newline-terminated: a CDXJ file's contents. */
export function cdxjText(lines: readonly string[]): string {
  if (lines.length === 0) return '';
  return [...lines].sort(compareCdxj).join('\n') + '\n';
}
