import { EDGES, FETCH_DURABLE } from '../../ops/nats/edges.js';
import type { StageInputSpec } from '../../ops/nats/consumer-spec.js';

/** fetch: grants in; fetched HTML pages, redirect targets and failure outcomes out. */
export const fetchInput: StageInputSpec = {
  stream: EDGES.ready.stream,
  durable: FETCH_DURABLE,
  filterSubject: 'crawl.ready.*',
  ackWaitMs: 30_000,
  maxAckPending: 2_000,
};
export const fetchEmits = ['fetched', 'discovered', 'results', 'frontier', 'revisits'] as const;
