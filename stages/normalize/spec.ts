import { EDGES } from '../../ops/nats/edges.js';
import type { StageInputSpec } from '../../ops/nats/consumer-spec.js';

/** normalize: seeds and discovered links in; canonical in-scope candidates and filtered outcomes out. */
export const normalizeInput: StageInputSpec = {
  stream: EDGES.discovered.stream,
  durable: 'normalize',
  filterSubject: '', // the whole stream: seeds and links
  ackWaitMs: 30_000,
  maxAckPending: 2_000,
};
export const normalizeEmits = ['normalized', 'results'] as const;
