import { crawlIdOf } from '../shared/jobs/job-fields.js';
import { jsonValue, parseJsonValue } from '../../pipeline/kv-store.js';
import { KvConflictError, type KvStore } from '../../ports/kv.js';
import { emit, type Disposition, type StageContext, type StageInput } from '../../pipeline/stage.js';
import type { ArchivedExchange } from '../../schemas/index.js';
import type { BuildMembers } from '../../ports/warc-sink.js';
import { captureRow } from './capture-row.js';
import { exchangeRecords, type BuiltRecords, type FirstCapture } from './exchange-records.js';
import { renderedRecords } from './rendered-records.js';
import type { ArchiveSink } from './sink.js';
import { newRecordId, warcDigest } from './warc-record.js';
import { bodyOf } from '../shared/messages/page-body.js';

/**
 * Whether this exchange's payload was captured before (→ an identical-payload-digest revisit
 * pointing there), and the record id its response gets. The first capture of a payload
 * claims the digest in the bucket with its record id; when that capture is redelivered it
 * gets the same id back, so revisits that already point at it stay right. `payloadDigest`
 * is the body's digest when it was computed here (for the records, which need it too).
 */
export async function firstCaptureOf(digests: KvStore, e: ArchivedExchange): Promise<{ other: FirstCapture | null; recordId: string; payloadDigest?: string }> {
  const x = e.exchange;
  const captureId = x?.capture_id ?? `${e.fetch_id}:0`;
  if (x?.kind === 'failure' || e.fetch_status < 200 || e.fetch_status >= 300 || e.body.length === 0) return { other: null, recordId: newRecordId() };
  const digest = warcDigest(e.body);
  // create first: most payloads are new, so one round trip usually settles it
  for (let attempt = 0; attempt < 3; attempt++) {
    const recordId = newRecordId();
    try {
      await digests.create(digest, jsonValue({ url: e.url, date: e.fetch_time, record_id: recordId, capture_id: captureId } satisfies FirstCapture));
      return { other: null, recordId, payloadDigest: digest };
    } catch (err) {
      if (!(err instanceof KvConflictError)) throw err; // claimed before (by this capture or another): read it
    }
    const entry = await digests.get(digest);
    if (entry) {
      const first = parseJsonValue<FirstCapture>(entry.value);
      return first.capture_id === captureId ? { other: null, recordId: first.record_id, payloadDigest: digest } : { other: first, recordId: newRecordId(), payloadDigest: digest };
    }
  }
  throw new Error(`archiving ${e.url}: the digest ${digest} keeps changing in the digests bucket`);
}

/** The record id of the first capture of a payload, when the digests bucket has it (the response a DOM was rendered from). */
async function recordOfDigest(digests: KvStore, digest: string | null | undefined): Promise<string | null> {
  if (!digest) return null;
  const entry = await digests.get(digest);
  return entry ? parseJsonValue<FirstCapture>(entry.value).record_id : null;
}

type Build = BuildMembers<BuiltRecords>;

async function exchangeBuild(digests: KvStore, e: ArchivedExchange, gzipLevel: number): Promise<Build> {
  const { other, recordId, payloadDigest } = await firstCaptureOf(digests, e);
  return (warcinfoId) => exchangeRecords(e, warcinfoId, other, recordId, payloadDigest, gzipLevel);
}

async function renderedBuild(digests: KvStore, e: ArchivedExchange, gzipLevel: number): Promise<Build> {
  const refersTo = await recordOfDigest(digests, e.exchange?.refers_to_digest);
  return (warcinfoId) => renderedRecords(e, warcinfoId, refersTo, gzipLevel);
}

export function createArchiveHandler(sink: ArchiveSink) {
  return async function handleArchive(input: StageInput<ArchivedExchange>, ctx: StageContext): Promise<Disposition> {
    // a page the render stage could not render comes back as fetched: its response is archived already
    if (input.message.rendered === false) return emit();
    // the whole body, also when it is stored beside the message
    const e = input.message.body_ref ? { ...input.message, body: await bodyOf(input.message, ctx) } : input.message;
    const level = ctx.settings.warcGzipLevel;
    const build = e.exchange?.kind === 'rendered' ? await renderedBuild(ctx.kv.digests, e, level) : await exchangeBuild(ctx.kv.digests, e, level);
    const built = await sink.add(build, (placed, b) =>
      captureRow(e, b, { filename: placed.filename, offset: placed.offsets[b.main]!, length: placed.lengths[b.main]! }, crawlIdOf(ctx, e)),
    );
    ctx.metrics.count('archive', 'records', built.kind);
    return emit();
  };
}
