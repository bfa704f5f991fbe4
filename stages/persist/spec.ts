import { EDGES } from '../../ops/nats/edges.js';
import type { StageInputSpec } from '../../ops/nats/consumer-spec.js';

/** persist: pages and outcomes in; Parquet files out. Nothing is emitted to streams. */
export const persistInput: StageInputSpec = {
  stream: EDGES.results.stream,
  durable: 'persist',
  filterSubject: '', // the whole stream: pages and outcomes
  ackWaitMs: 30_000,
  // a message is acked only once the file holding its rows is written: the batch size bounds this
  maxAckPending: 5_000,
};
export const persistEmits = [] as const;
