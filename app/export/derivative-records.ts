/**
 * WET and WAT records as Common Crawl writes them, each its own gzip member in a WARC file:
 *
 * - WET: a `conversion` record per page holding its extracted main text (`text/plain`),
 *   pointing at the response it was extracted from (`WARC-Refers-To`, same Target-URI and
 *   date), with `WARC-Identified-Content-Language` when the page's language is known.
 * - WAT: a `metadata` record per page holding CC's JSON envelope (`application/json`): where
 *   the response record sits (`Container`), its WARC header fields (`Envelope`), and its
 *   payload: the HTTP status line and headers, and HTML metadata (title, metas, `<link>`s)
 *   and the page's links, each with CC's `path` (`A@/href`).
 *
 * Common Crawl's WAT also has an envelope for each request and crawl-metadata record; here
 * there is one per stored page (the response), which is what WAT readers look at.
 */
import { iso6393OfTag } from '../../stages/shared/language-codes.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';
import { newRecordId, warcRecordBytes, type WarcHeaders } from '../../stages/archive/warc-record.js';
import { gzipMember } from '../../stages/archive/gzip-member.js';

const CRLF = '\r\n';

/** `2024-01-02T03:04:05Z`: CC's WARC-Date, to the second */
export const warcDateSeconds = (epochMs: number): string => new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A WARC/1.0 record as its own gzip member, at zlib's default level (a one-off export, not the crawl's hot path). */
const record = (fields: WarcHeaders, block: Buffer): Buffer => gzipMember(warcRecordBytes(fields, block, '1.0'), 6);

/** The warcinfo record a WET or WAT file opens with. */
export function derivativeInfo(filename: string, date: number, software: string, description: string): Buffer {
  const block = Buffer.from(`software: ${software}${CRLF}description: ${description}${CRLF}format: WARC File Format 1.0${CRLF}`, 'utf8');
  return record(
    [
      ['WARC-Type', 'warcinfo'],
      ['WARC-Date', warcDateSeconds(date)],
      ['WARC-Filename', filename],
      ['WARC-Record-ID', newRecordId()],
      ['Content-Type', 'application/warc-fields'],
      ['WARC-Block-Digest', contentDigest(block)],
    ],
    block,
  );
}

/** What the records of one page are made from: the pages table and the response record it was extracted from. */
export interface PageSource {
  url: string;
  /** epoch ms: the fetch's, also the response record's WARC-Date */
  fetchTime: number;
  /** the response (or revisit) record's WARC-Record-ID */
  responseRecordId: string;
  title: string;
  text: string;
  /** comma-separated, as the pages table holds them */
  languages: string | null;
}

export function wetRecord(p: PageSource): Buffer {
  const block = Buffer.from(p.text, 'utf8');
  const fields: Array<[string, string]> = [
    ['WARC-Type', 'conversion'],
    ['WARC-Target-URI', p.url],
    ['WARC-Date', warcDateSeconds(p.fetchTime)],
    ['WARC-Record-ID', newRecordId()],
    ['WARC-Refers-To', p.responseRecordId],
    ['WARC-Block-Digest', contentDigest(block)],
  ];
  const langs = (p.languages ?? '').split(',').map((l) => l.trim().toLowerCase()).filter(Boolean);
  if (langs.length) fields.push(['WARC-Identified-Content-Language', langs.map((l) => iso6393OfTag(l) ?? l).join(',')]);
  fields.push(['Content-Type', 'text/plain']);
  return record(fields, block);
}

/** A link of the page as CC's WAT lists it. */
export interface WatLink {
  path: string;
  url: string;
  text?: string;
  rel?: string;
}

/** The response record read back: its WARC header fields, HTTP status line and headers, and where it sits. */
export interface ResponseSource {
  filename: string;
  offset: number;
  /** WARC header fields in order */
  warcHeaders: Array<[string, string]>;
  warcHeaderLength: number;
  blockDigest: string | null;
  blockLength: number;
  httpVersion: string;
  status: string;
  reason: string;
  httpHeaders: Array<[string, string]>;
  httpHeadersLength: number;
  entityLength: number;
  entityDigest: string | null;
}

export interface HtmlMeta {
  title: string;
  metas: Array<Record<string, string>>;
  headLinks: WatLink[];
  links: WatLink[];
}

/** Header fields as an object; a repeated name keeps its values joined, as CC's JSON has one key a name. */
function fieldObject(fields: Array<[string, string]>): Record<string, string> {
  const o: Record<string, string> = {};
  for (const [k, v] of fields) o[k] = o[k] === undefined ? v : `${o[k]}, ${v}`;
  return o;
}

/** CC's WAT envelope of a response record. */
export function watEnvelope(r: ResponseSource, html: HtmlMeta | null): object {
  const httpMeta: Record<string, unknown> = {
    'Response-Message': { Version: r.httpVersion, Status: r.status, Reason: r.reason },
    'Headers-Length': String(r.httpHeadersLength),
    Headers: fieldObject(r.httpHeaders),
    'Entity-Length': String(r.entityLength),
    ...(r.entityDigest ? { 'Entity-Digest': r.entityDigest } : {}),
    'Entity-Trailing-Slop-Length': '0',
  };
  if (html) {
    const head: Record<string, unknown> = { Title: html.title };
    if (html.metas.length) head.Metas = html.metas;
    if (html.headLinks.length) head.Link = html.headLinks;
    httpMeta['HTML-Metadata'] = { Head: head, Links: html.links };
  }
  return {
    Container: { Filename: r.filename, Compressed: true, Offset: String(r.offset) },
    Envelope: {
      Format: 'WARC',
      'WARC-Header-Length': String(r.warcHeaderLength),
      ...(r.blockDigest ? { 'Block-Digest': r.blockDigest } : {}),
      'Actual-Content-Length': String(r.blockLength),
      'WARC-Header-Metadata': fieldObject(r.warcHeaders),
      'Payload-Metadata': {
        'Actual-Content-Type': 'application/http; msgtype=response',
        'HTTP-Response-Metadata': httpMeta,
      },
    },
  };
}

export function watRecord(url: string, fetchTime: number, responseRecordId: string, envelope: object): Buffer {
  const block = Buffer.from(JSON.stringify(envelope), 'utf8');
  return record(
    [
      ['WARC-Type', 'metadata'],
      ['WARC-Target-URI', url],
      ['WARC-Date', warcDateSeconds(fetchTime)],
      ['WARC-Record-ID', newRecordId()],
      ['WARC-Refers-To', responseRecordId],
      ['Content-Type', 'application/json'],
      ['WARC-Block-Digest', contentDigest(block)],
    ],
    block,
  );
}
