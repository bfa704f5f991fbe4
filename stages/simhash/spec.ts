import { EDGES } from '../../ops/nats/edges.js';
import type { StageInputSpec } from '../../ops/nats/consumer-spec.js';

/** simhash: extracted pages in; pages with their fingerprint and near-duplicate verdict out. */
export const simhashInput: StageInputSpec = {
  stream: EDGES.extracted.stream,
  durable: 'simhash',
  filterSubject: 'crawl.extracted.*',
  ackWaitMs: 30_000,
  maxAckPending: 2_000,
};
export const simhashEmits = ['results', 'revisits'] as const;

/** Entries kept per index key; past it the oldest go (bounded growth for hot keys). */
export const MAX_ENTRIES_PER_KEY = 256;
