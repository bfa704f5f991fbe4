/**
 * WARC 1.1 records, written by hand: a record is a few header lines and a block, and doing
 * it here keeps the digests in the crawl's own format (sha1 in base32, as Common Crawl
 * writes them and as `pages.content_digest` holds them) and every byte offset under our
 * control. Each record is its own gzip member, so a reader can start at any record's offset.
 *
 * A block may be given in parts (a response is its HTTP head and the body): it is digested
 * part by part and copied once, into the record, instead of being concatenated first.
 */
import { hash, randomUUID } from 'node:crypto';
import { contentDigest } from '../shared/content-identity/content-digest.js';
import { gzipMember } from './gzip-member.js';

export type WarcHeaders = Array<[string, string]>;

/** A record's block: its bytes, or its parts in order. */
export type Block = Uint8Array | readonly Uint8Array[];

const partsOf = (block: Block): readonly Uint8Array[] => (block instanceof Uint8Array ? [block] : block);

const CRLF2 = Buffer.from('\r\n\r\n');

export const newRecordId = (): string => `<urn:uuid:${randomUUID()}>`;

/** sha1:BASE32, the digest format of WARC-Block-Digest and WARC-Payload-Digest (and pages.content_digest). */
export const warcDigest = (block: Block): string => contentDigest(block);

/** ISO 8601 with milliseconds, as WARC 1.1 allows. */
export const warcDate = (epochMs: number): string => new Date(epochMs).toISOString();

const clean = (v: string): string => v.replace(/[\r\n]+/g, ' ');

/** `name: value` lines, CRLF-terminated (no blank line). */
export function fieldLines(fields: WarcHeaders): string {
  return fields.map(([k, v]) => `${clean(k)}: ${clean(v)}\r\n`).join('');
}

/**
 * One uncompressed record: version line, headers (Content-Length last), blank line, block, two
 * CRLFs. The archive writes WARC/1.1; the WET and WAT exports say 1.0, as Common Crawl's do.
 */
export function warcRecordBytes(headers: WarcHeaders, block: Block, version: '1.0' | '1.1' = '1.1'): Buffer {
  const parts = partsOf(block);
  const length = parts.reduce((n, p) => n + p.length, 0);
  const head = `WARC/${version}\r\n${fieldLines([...headers, ['Content-Length', String(length)]])}\r\n`;
  return Buffer.concat([Buffer.from(head, 'utf8'), ...parts, CRLF2]);
}

/** The record as its own gzip member. */
export function gzipRecord(headers: WarcHeaders, block: Block): Buffer {
  return gzipMember(warcRecordBytes(headers, block));
}

/** The base headers every record has. */
export function baseHeaders(type: string, recordId: string, date: number, targetUri: string | null, warcinfoId: string | null): WarcHeaders {
  const h: WarcHeaders = [
    ['WARC-Type', type],
    ['WARC-Record-ID', recordId],
    ['WARC-Date', warcDate(date)],
  ];
  if (targetUri !== null) h.push(['WARC-Target-URI', targetUri]);
  if (warcinfoId !== null) h.push(['WARC-Warcinfo-ID', warcinfoId]);
  return h;
}

export function blockDigestHeader(block: Block): [string, string] {
  return ['WARC-Block-Digest', warcDigest(block)];
}

/** The `warcinfo` record that opens every file. */
export function warcinfoRecord(recordId: string, filename: string, date: number, info: WarcHeaders): Buffer {
  const block = Buffer.from(fieldLines(info), 'utf8');
  return gzipRecord(
    [...baseHeaders('warcinfo', recordId, date, null, null), ['WARC-Filename', filename], ['Content-Type', 'application/warc-fields'], blockDigestHeader(block)],
    block,
  );
}

/** sha1 of a string, hex: for ids derived from other ids. */
export const sha1Hex = (s: string): string => hash('sha1', s, 'hex');
