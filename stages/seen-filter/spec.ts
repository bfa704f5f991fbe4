import { EDGES } from '../../ops/nats/edges.js';
import type { StageInputSpec } from '../../ops/nats/consumer-spec.js';

/**
 * seen-filter: candidates in; URLs never admitted before out to the politeness gate.
 * Partitioned: one durable per partition (`seen-filter-p<N>` on `crawl.normalized.<N>`),
 * consumed only by the process holding that partition's lease.
 */
export const seenFilterInput: StageInputSpec = {
  stream: EDGES.normalized.stream,
  durable: 'seen-filter',
  filterSubject: 'crawl.normalized.*',
  ackWaitMs: 30_000,
  // per partition: also bounds the messages a takeover must treat as possibly in flight
  maxAckPending: 1_000,
  partitioned: true,
};
export const seenFilterEmits = ['frontier', 'results'] as const;

/** A partition's seen set is saved after this many new URLs... */
export const SNAPSHOT_EVERY_URLS = 100_000;
/** ...or this long after the last save if anything changed: bounds the replay after a crash. */
export const SNAPSHOT_EVERY_MS = 30_000;
