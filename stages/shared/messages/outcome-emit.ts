import { encodeOutcome, type UrlOutcome } from '../../../schemas/index.js';
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

/** The longest reason a fetch_log row keeps. */
const MAX_RECORDED_BYTES = 8192;
