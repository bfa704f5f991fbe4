import { EDGES } from '../../ops/nats/edges.js';
import type { StageInputSpec } from '../../ops/nats/consumer-spec.js';

/**
 * politeness-gate: admitted URLs in (queued per host at once); fetch grants (holding the
 * host's lease) and robots blocks out, from the host scheduler.
 */
export const gateInput: StageInputSpec = {
  stream: EDGES.frontier.stream,
  durable: 'politeness-gate',
  filterSubject: 'crawl.frontier.*',
  ackWaitMs: 30_000,
  // intake acks at once (waiting URLs sit in the host queues), so this only bounds a burst
  maxAckPending: 2_000,
};
export const gateEmits = ['hostq', 'ready', 'results', 'discovered'] as const;

/** Hosts one gate process serves at once (a turn may fetch a robots.txt). */
export const GATE_SCHEDULER_CONCURRENCY = 64;

/** How long a grant holds its host before the fetch stage must confirm it. */
export const GRANT_LEASE_MS = 60_000;
