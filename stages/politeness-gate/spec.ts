import { EDGES } from '../../ops/nats/edges.js';
import type { StageInputSpec } from '../../pipeline/stage.js';

/** politeness-gate: admitted URLs in; fetch grants (holding the host's lease) and robots blocks out. */
export const gateInput: StageInputSpec = {
  stream: EDGES.frontier.stream,
  durable: 'politeness-gate',
  filterSubject: 'crawl.frontier.*',
  // a robots.txt fetch happens inside the handler; the runner heartbeats while it runs
  ackWaitMs: 30_000,
  // waiting URLs (delayed naks) count here, so this bounds the frontier held by the server
  // for this consumer at once; the rest stays in the stream, undelivered, costing no memory
  maxAckPending: 20_000,
};
export const gateEmits = ['ready', 'results'] as const;

/** How long a grant holds its host before the fetch stage must confirm it. */
export const GRANT_LEASE_MS = 60_000;
/** How long a robots.txt fetch holds its host. */
export const ROBOTS_LEASE_MS = 60_000;
/** A disallow-all verdict caused by an error (5xx, network) is re-fetched after this. */
export const ROBOTS_ERROR_RETRY_MS = 60_000;
