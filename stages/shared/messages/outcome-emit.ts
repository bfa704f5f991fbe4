import { decodeOutcome, encodeOutcome, type OutcomeKind, type RevisitSchedule, type UrlOutcome } from '../../../schemas/index.js';
import { isSubjectOf } from '../../../topology/index.js';
import { jobFieldsOf, type JobFields } from '../jobs/job-fields.js';
import { subjectFor } from '../../../pipeline/partition.js';
import type { Emit, StageContext } from '../../../pipeline/stage.js';
import { cutToBytes } from './message-budget.js';

/**
 * A terminal outcome of a URL (one `fetch_log` row), on `crawl.outcomes.<p>` of its host.
 * `event_id` (the view's dedup key) and `msgId` (the server's) must be derived from the event,
 * so that the same event redelivered is published and shown once.
 */
export function outcomeEmit(ctx: StageContext, msgId: string, outcome: Omit<UrlOutcome, 'v'>): Emit {
  return outcomeEmitFor(ctx.settings.partitions, msgId, outcome);
}

/** The same, where there is no stage context (extract's worker threads). */
export function outcomeEmitFor(partitions: number, msgId: string, outcome: Omit<UrlOutcome, 'v'>): Emit {
  return {
    subject: subjectFor('outcomes', outcome.host || 'invalid', partitions),
    msgId,
    // a reason quoting hostile input is recorded, but not whole
    data: encodeOutcome({ v: 1, ...outcome, reason: cutToBytes(outcome.reason, MAX_RECORDED_BYTES) }),
  };
}

/**
 * The outcome rows among `emits` with the revisit schedule decided after them (the fetch stage
 * knows whether a URL is revisited only once it knows what the attempt ended in); the other
 * messages as they are.
 */
export function withSchedule(emits: readonly Emit[], schedule: RevisitSchedule | undefined): Emit[] {
  if (!schedule) return [...emits];
  return emits.map((e) => (isSubjectOf('outcomes', e.subject) ? { ...e, data: encodeOutcome({ ...decodeOutcome(e.data), ...schedule }) } : e));
}

/** The longest reason a fetch_log row keeps. */
const MAX_RECORDED_BYTES = 8192;

/** The URL an outcome row is about, as its message carries it (fetch_id: absent or null before one was given). */
export interface OutcomeUrl extends JobFields {
  url: string;
  host: string;
  depth: number | null;
  fetch_id?: string | null;
}

/** What happened to the URL; a fetch's status and duration are null where nothing was fetched. */
export interface OutcomeEvent {
  /** derived from the event (stableId), so that the view shows a redelivered one once */
  event_id: string;
  outcome: OutcomeKind;
  reason: string;
  fetch_time: number;
  fetch_status?: number | null;
  duration_ms?: number | null;
  fetch_redirect?: string | null;
}

/** The outcome row of `url`: its message's fields, its job's, and the event. */
export function urlOutcome(url: OutcomeUrl, event: OutcomeEvent): Omit<UrlOutcome, 'v'> {
  return {
    ...jobFieldsOf(url),
    event_id: event.event_id,
    fetch_id: url.fetch_id ?? null,
    url: url.url,
    host: url.host,
    outcome: event.outcome,
    reason: event.reason,
    fetch_status: event.fetch_status ?? null,
    fetch_time: event.fetch_time,
    duration_ms: event.duration_ms ?? null,
    depth: url.depth,
    ...(event.fetch_redirect !== undefined ? { fetch_redirect: event.fetch_redirect } : {}),
  };
}
