/**
 * The WARC records of one exchange, in Common Crawl's order: request, then the response
 * (or a revisit), then a metadata record. A network failure has no response: its metadata
 * record is the capture. Which record a `captures` row points to is `main`.
 */
import type { ArchivedExchange } from '../../schemas/index.js';
import { cdxjEntryOf } from '../../pipeline/cdxj.js';
import type { CdxjEntry } from '../../ports/warc-sink.js';
import { gzipMember, WARC_GZIP_LEVEL } from './gzip-member.js';
import { baseHeaders, blockDigestHeader, fieldLines, newRecordId, warcDate, warcDigest, warcRecordBytes, type WarcHeaders } from './warc-record.js';

/** The first capture of a payload, as the digests bucket keeps it. */
export interface FirstCapture {
  url: string;
  date: number;
  record_id: string;
  capture_id: string;
}

export type CaptureKind = 'response' | 'revisit-not-modified' | 'revisit-identical' | 'metadata' | 'conversion';

export interface BuiltRecords {
  /** gzip members, in file order */
  members: Buffer[];
  /** index in `members` of the record the captures row points to */
  main: number;
  mainRecordId: string;
  kind: CaptureKind;
  payloadDigest: string | null;
  /** each member's CDXJ entry (null: not looked up by replay), read from the record it compresses */
  index: (CdxjEntry | null)[];
}

export const PROFILE_NOT_MODIFIED = 'http://netpreserve.org/warc/1.1/revisit/server-not-modified';
export const PROFILE_IDENTICAL = 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest';

/**
 * The client hands over the body decoded; so that a WARC reader does not decode it twice, the
 * transfer headers are kept under Common Crawl's `X-Crawler-` names and Content-Length is the
 * stored length. A field sent more than once is written a line each, as sent (`lines`).
 */
export function storedResponseHeaders(headers: Record<string, string>, bodyLength: number, lines?: Record<string, string[]>): WarcHeaders {
  const out: WarcHeaders = [];
  for (const [k, v] of Object.entries(headers)) {
    if (k === 'content-encoding' || k === 'transfer-encoding' || k === 'content-length') out.push([`x-crawler-${k}`, v]);
    else for (const line of lines?.[k] ?? [v]) out.push([k, line]);
  }
  out.push(['content-length', String(bodyLength)]);
  return out;
}

/**
 * WARC-Truncated (WARC 1.1 §5.13) of a response record: `length` for a body cut at the size
 * cap; `unspecified` (the spec's token for any other reason) for a body not downloaded at all
 * because its type is not stored, the metadata record's `bodyNotRead` saying why. Null: whole.
 */
export function truncation(e: ArchivedExchange): 'length' | 'unspecified' | null {
  if (e.exchange?.body_not_read) return 'unspecified';
  return e.truncated ? 'length' : null;
}

/**
 * The protocols an exchange went over, as the WARC-Protocol field proposal (iipc
 * warc-specifications issue 42) writes them, one field a protocol (`h2`, then `tls/1.3`), and
 * the TLS cipher suite as WARC-Cipher-Suite (issue 86); warcio, Browsertrix and StormCrawler
 * write them so. The HTTP message in the record stays in HTTP/1.1 form whatever the version
 * (an `HTTP/2 200` status line is not one that WARC readers and replay tools parse): these
 * fields are where HTTP/2 shows.
 */
function protocolFields(e: ArchivedExchange): WarcHeaders {
  const x = e.exchange;
  const fields: WarcHeaders = (x?.protocols ?? []).map((p) => ['WARC-Protocol', p]);
  if (x?.cipher_suite) fields.push(['WARC-Cipher-Suite', x.cipher_suite]);
  return fields;
}

function requestBlock(e: ArchivedExchange): Buffer {
  const u = new URL(e.url);
  const line = `${e.exchange!.method} ${u.pathname}${u.search} HTTP/1.1\r\n`;
  return Buffer.from(line + fieldLines(e.exchange!.request_headers) + '\r\n', 'utf8');
}

function responseHead(e: ArchivedExchange, bodyLength: number): Buffer {
  const text = e.exchange?.status_text ?? '';
  return Buffer.from(`HTTP/1.1 ${e.fetch_status}${text ? ' ' + text : ''}\r\n` + fieldLines(storedResponseHeaders(e.headers, bodyLength, e.header_lines)) + '\r\n', 'utf8');
}

/** `name: value` lines of the metadata record: what the crawler knew at fetch time (outlinks come later, from extract). */
function metadataFields(e: ArchivedExchange): WarcHeaders {
  const x = e.exchange;
  const f: WarcHeaders = [
    ['fetchTimeMs', String(e.duration_ms)],
    ['fetchAttempt', String(x?.attempt ?? 0)],
  ];
  if (x?.robots) f.push(['robots', x.robots]);
  if (x?.tls_unverified) f.push(['tlsCertificate', x.tls_unverified]);
  if (x?.redirect) f.push(['redirect', x.redirect]);
  if (x?.failure) f.push(['fetchFailure', x.failure]);
  if (x?.body_not_read) f.push(['bodyNotRead', x.body_not_read]);
  if (e.redirect_chain?.length) f.push(['redirectedFrom', e.redirect_chain.join(' ')]);
  if (x?.capture_id) f.push(['captureId', x.capture_id]);
  f.push(['fetchId', e.fetch_id]);
  return f;
}

/**
 * `firstCapture`: the first capture with this payload digest, when it is another one
 * (then the response becomes an identical-payload-digest revisit). `bodyDigest`: the
 * body's digest when the caller has it already (a sha1 pass less). The records are built
 * here and compressed together (each its own gzip member, see gzip-member.ts).
 */
export function exchangeRecords(
  e: ArchivedExchange,
  warcinfoId: string,
  firstCapture: FirstCapture | null,
  responseRecordId = newRecordId(),
  bodyDigest?: string,
  gzipLevel = WARC_GZIP_LEVEL,
): BuiltRecords {
  const x = e.exchange;
  /** uncompressed records, in file order */
  const records: Buffer[] = [];
  const date = e.fetch_time;
  const concurrent: [string, string] = ['WARC-Concurrent-To', responseRecordId];
  const failed = x?.kind === 'failure' || e.fetch_status === 0;

  if (x) {
    const block = requestBlock(e);
    records.push(
      warcRecordBytes(
        [...baseHeaders('request', newRecordId(), date, e.url, warcinfoId), ...(failed ? [] : [concurrent]), ...protocolFields(e), ['Content-Type', 'application/http;msgtype=request'], blockDigestHeader(block)],
        block,
      ),
    );
  }

  let main = -1;
  let kind: CaptureKind = 'metadata';
  let payloadDigest: string | null = null;
  if (!failed) {
    // where the response came from and over what
    const transport: WarcHeaders = [...(x?.remote_ip ? [['WARC-IP-Address', x.remote_ip] as [string, string]] : []), ...protocolFields(e)];
    const cut = truncation(e);
    const truncated: WarcHeaders = cut ? [['WARC-Truncated', cut]] : [];
    const httpType: [string, string] = ['Content-Type', 'application/http;msgtype=response'];
    if (e.fetch_status === 304) {
      // server-not-modified: the headers only; the copy it confirms is the URL's earlier capture
      const block = responseHead(e, 0);
      const refers: WarcHeaders = [['WARC-Refers-To-Target-URI', e.url]];
      if (x?.refers_to_date != null) refers.push(['WARC-Refers-To-Date', warcDate(x.refers_to_date)]);
      records.push(warcRecordBytes([...baseHeaders('revisit', responseRecordId, date, e.url, warcinfoId), ...transport, ['WARC-Profile', PROFILE_NOT_MODIFIED], ...refers, httpType, blockDigestHeader(block)], block));
      kind = 'revisit-not-modified';
    } else if (firstCapture) {
      payloadDigest = bodyDigest ?? warcDigest(e.body);
      const block = responseHead(e, e.body.length);
      records.push(
        warcRecordBytes(
          [
            ...baseHeaders('revisit', responseRecordId, date, e.url, warcinfoId),
            ...transport,
            ['WARC-Profile', PROFILE_IDENTICAL],
            ['WARC-Refers-To', firstCapture.record_id],
            ['WARC-Refers-To-Target-URI', firstCapture.url],
            ['WARC-Refers-To-Date', warcDate(firstCapture.date)],
            ['WARC-Payload-Digest', payloadDigest],
            // the payload is not repeated here: the record is cut to its headers on purpose
            ['WARC-Truncated', 'length'],
            httpType,
            blockDigestHeader(block),
          ],
          block,
        ),
      );
      kind = 'revisit-identical';
    } else {
      payloadDigest = bodyDigest ?? warcDigest(e.body);
      const block = [responseHead(e, e.body.length), e.body]; // in parts: the body is copied once, into the record
      records.push(
        warcRecordBytes(
          [...baseHeaders('response', responseRecordId, date, e.url, warcinfoId), ...transport, ...truncated, httpType, ['WARC-Payload-Digest', payloadDigest], blockDigestHeader(block)],
          block,
        ),
      );
      kind = 'response';
    }
    main = records.length - 1;
  }

  const metaBlock = Buffer.from(fieldLines(metadataFields(e)), 'utf8');
  const metaId = failed ? responseRecordId : newRecordId();
  records.push(
    warcRecordBytes(
      [...baseHeaders('metadata', metaId, date, e.url, warcinfoId), ...(failed ? [] : [concurrent]), ['Content-Type', 'application/warc-fields'], blockDigestHeader(metaBlock)],
      metaBlock,
    ),
  );
  if (main < 0) main = records.length - 1;
  const members = records.map((r) => gzipMember(r, gzipLevel));
  return { members, main, mainRecordId: responseRecordId, kind, payloadDigest, index: records.map(cdxjEntryOf) };
}
