import { EDGES } from '../../ops/nats/edges.js';
import type { StageInputSpec } from '../../ops/nats/consumer-spec.js';

/** archive: every HTTP exchange in (pages on crawl.fetched, the rest on crawl.exchanges); WARC files and `captures` rows out. */
export const archiveInput: StageInputSpec = {
  stream: EDGES.fetched.stream,
  durable: 'archive',
  filterSubject: '', // the whole stream: pages and the other exchanges
  ackWaitMs: 30_000,
  // a message is acked only once its batch is durable; bodies wait in memory until then
  maxAckPending: 2_000,
};
export const archiveEmits = [] as const;
