import { EDGES } from '../../ops/nats/edges.js';
import type { StageInputSpec } from '../../ops/nats/consumer-spec.js';

/** extract: fetched pages in; extracted pages (to simhash), discovered links (to normalize) and pages to render out. */
export const extractInput: StageInputSpec = {
  stream: EDGES.fetched.stream,
  durable: 'extract',
  filterSubject: 'crawl.fetched.*',
  ackWaitMs: 30_000,
  maxAckPending: 1_000,
};
export const extractEmits = ['extracted', 'discovered', 'results', 'render'] as const;
