import { EDGES } from '../../ops/nats/edges.js';
import type { StageInputSpec } from '../../pipeline/stage.js';

/** seen-filter: candidates in; URLs never admitted before out to the politeness gate. */
export const seenFilterInput: StageInputSpec = {
  stream: EDGES.normalized.stream,
  durable: 'seen-filter',
  filterSubject: 'crawl.normalized.*',
  ackWaitMs: 30_000,
  maxAckPending: 4_000,
};
export const seenFilterEmits = ['frontier', 'results'] as const;
