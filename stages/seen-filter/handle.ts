import { createHash } from 'node:crypto';
import { encodeAdmitted, type AdmittedUrl, type CandidateUrl } from '../../schemas/index.js';
import { KvConflictError, casUpdate, jsonValue, parseJsonValue } from '../../pipeline/kv-store.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { stableId } from '../stage-ids.js';
import { outcomeEmit } from '../outcome-emit.js';

/** What the seen set stores per URL: enough to re-emit the same admission on redelivery. */
interface SeenRecord {
  fetch_id: string;
  admitted_at: number;
  /** stream sequence of the candidate that admitted the URL */
  seq: number;
  /** the URL came after the crawl's page limit: seen, but never fetched */
  over_limit?: boolean;
}

/**
 * The seen set is per crawl: resuming a crawl (same crawl id) never admits a URL twice, and
 * a new crawl over the same store (a recrawl) admits every URL again, each then fetched with
 * the validators of its previous fetch (conditional GET).
 */
export const seenKey = (crawlId: string, url: string) => createHash('sha256').update(`${crawlId}\u0000${url}`).digest('hex').slice(0, 40);
const admittedCounter = (crawlId: string) => `admitted-count.${crawlId}`;

function admitted(ctx: StageContext, c: CandidateUrl, record: SeenRecord) {
  const message: AdmittedUrl = { ...c, fetch_id: record.fetch_id, admitted_at: record.admitted_at };
  return {
    subject: subjectFor('frontier', c.host, ctx.settings.partitions),
    data: encodeAdmitted(message),
    msgId: `admit:${record.fetch_id}`,
  };
}

function overLimit(ctx: StageContext, c: CandidateUrl, record: SeenRecord): Outcome {
  ctx.metrics.count('seen-filter', 'urls', 'max_pages');
  return emit(
    outcomeEmit(ctx, `maxpages:${record.fetch_id}`, {
      event_id: stableId('max_pages', c.url),
      fetch_id: null,
      url: c.url,
      host: c.host,
      outcome: 'filtered',
      reason: `max_pages: the crawl's limit of ${ctx.settings.maxPages} pages is reached`,
      fetch_status: null,
      fetch_time: record.admitted_at,
      duration_ms: null,
      depth: c.depth,
    }),
  );
}

/**
 * Admits a URL the first time any instance sees it. The seen set is a KV bucket written
 * with create-if-absent, so all instances share it and it survives restarts. A candidate
 * redelivered after it was admitted (the process died before acking) is admitted again
 * with the same fetch id; JetStream's duplicate window drops the second publish.
 */
export async function handleSeenFilter(input: StageInput<CandidateUrl>, ctx: StageContext): Promise<Outcome> {
  const c = input.message;
  const key = seenKey(ctx.settings.crawlId, c.url);
  const now = ctx.clock.now();
  const record: SeenRecord = { fetch_id: stableId(ctx.settings.crawlId, c.url, now), admitted_at: now, seq: input.streamSeq };
  try {
    await ctx.kv.seen.create(key, jsonValue(record));
  } catch (err) {
    if (!(err instanceof KvConflictError)) throw err;
    const existing = await ctx.kv.seen.get(key);
    const stored = existing ? parseJsonValue<SeenRecord>(existing.value) : null;
    if (stored && stored.seq === input.streamSeq) return stored.over_limit ? overLimit(ctx, c, stored) : emit(admitted(ctx, c, stored));
    ctx.metrics.count('seen-filter', 'urls', 'seen');
    return emit();
  }
  if (ctx.settings.maxPages > 0) {
    const count = await casUpdate<number, number>(ctx.kv.seen, admittedCounter(ctx.settings.crawlId), (n) => ({ value: (n ?? 0) + 1, result: (n ?? 0) + 1 }));
    if (count > ctx.settings.maxPages) {
      // remembered, so a redelivery of this message is refused again rather than admitted
      await ctx.kv.seen.put(key, jsonValue({ ...record, over_limit: true }));
      return overLimit(ctx, c, record);
    }
  }
  ctx.metrics.count('seen-filter', 'urls', 'admitted');
  return emit(admitted(ctx, c, record));
}
