import { edgesPublishedBy, stageInput } from '../../topology/index.js';

/**
 * politeness-gate: admitted URLs in (queued per host at once); fetch grants (holding the
 * host's lease) and robots blocks out, from the host scheduler.
 */
export const gateInput = stageInput('politeness-gate');
export const gateEmits = edgesPublishedBy('politeness-gate');

/** Hosts one gate process serves at once (a turn may fetch a robots.txt). */
export const GATE_SCHEDULER_CONCURRENCY = 64;

/** How long a grant holds its host before the fetch stage must confirm it. */
export const GRANT_LEASE_MS = 60_000;
