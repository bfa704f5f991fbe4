/**
 * The WARC records of a rendered page: a `conversion` record holding the DOM headless
 * Chromium made of the page (WARC 1.1: "an alternative version of another record's
 * content"), pointing at the response it was rendered from, and a metadata record with what
 * the page asked for and what became of each request. A replay or a reader re-extracts the
 * page from the DOM without a browser; a replay tool that plays back responses ignores it.
 */
import type { ArchivedExchange } from '../../schemas/index.js';
import { cdxjEntryOf } from '../../pipeline/cdxj.js';
import { gzipMember, WARC_GZIP_LEVEL } from './gzip-member.js';
import type { BuiltRecords } from './exchange-records.js';
import { baseHeaders, blockDigestHeader, fieldLines, newRecordId, warcDigest, warcRecordBytes, type WarcHeaders } from './warc-record.js';

/** `refersTo`: the record id of the response the DOM was rendered from, when the digests bucket knows it. */
export function renderedRecords(e: ArchivedExchange, warcinfoId: string, refersTo: string | null, gzipLevel = WARC_GZIP_LEVEL): BuiltRecords {
  const id = newRecordId();
  const payloadDigest = warcDigest(e.body);
  const refers: WarcHeaders = refersTo ? [['WARC-Refers-To', refersTo]] : [];
  const truncated: WarcHeaders = e.truncated ? [['WARC-Truncated', 'length']] : [];
  const conversion = warcRecordBytes(
    [...baseHeaders('conversion', id, e.fetch_time, e.url, warcinfoId), ...refers, ...truncated, ['Content-Type', 'text/html; charset=utf-8'], ['WARC-Payload-Digest', payloadDigest], blockDigestHeader(e.body)],
    e.body,
  );
  const fields: WarcHeaders = [['renderedFrom', e.exchange?.refers_to_digest ?? ''], ['fetchId', e.fetch_id]];
  if (e.render_note) fields.push(['render', e.render_note]);
  for (const line of e.exchange?.render_log ?? []) fields.push(['request', line]);
  const metaBlock = Buffer.from(fieldLines(fields), 'utf8');
  const metadata = warcRecordBytes(
    [...baseHeaders('metadata', newRecordId(), e.fetch_time, e.url, warcinfoId), ['WARC-Concurrent-To', id], ['Content-Type', 'application/warc-fields'], blockDigestHeader(metaBlock)],
    metaBlock,
  );
  const members = [conversion, metadata].map((r) => gzipMember(r, gzipLevel));
  return { members, main: 0, mainRecordId: id, kind: 'conversion', payloadDigest, index: [conversion, metadata].map(cdxjEntryOf) };
}
