import type { StageMetrics } from '../pipeline/metrics.js';
import type { Logger } from '../pipeline/logger.js';
import { refreshedInBackground } from '../pipeline/background-refresh.js';
import type { StageName } from '../pipeline/stage.js';
import type { HostWaitSources, WaitReason } from '../stages/politeness-gate/index.js';
import { listHostWaits, summarizeWaits } from '../stages/politeness-gate/index.js';
import { STAGE_INPUTS, type StageInputSpec } from '../topology/index.js';

/** Wait reasons as label values (bounded: the gate's own words, in snake case). */
const REASON_LABELS: Record<WaitReason, string> = {
  'robots.txt unavailable': 'robots_unavailable',
  paused: 'paused',
  backoff: 'backoff',
  'crawl delay': 'crawl_delay',
  'request in flight': 'request_in_flight',
  'held by the first pass': 'first_pass',
  due: 'due',
};

/**
 * The scan behind the waiting-hosts gauge reads a few KV entries per busy host, one after
 * another: seconds for a few hundred hosts on a loaded server, minutes for tens of thousands.
 * It runs in the background, started by a scrape at least this long after the last one ended,
 * and a scrape answers with the last scan's figures at once (none before the first scan ends):
 * a scrape that waited for it would pass Prometheus's timeout on a large crawl, and so would
 * every other metric.
 */
const HOST_WAITS_MAX_AGE_MS = 10_000;
/** The share of the time the scan may run: a scan of D seconds rests 9 × D before the next. */
const HOST_WAITS_BUSY_SHARE = 0.1;

/** `crawler_politeness_hosts_waiting{reason}`: every host with queued URLs, by why it is not fetched now. */
function registerHostWaits(metrics: StageMetrics, sources: HostWaitSources, log: Logger): void {
  const byReason = refreshedInBackground(async () => summarizeWaits(await listHostWaits(sources, Date.now())).byReason, {
    maxAgeMs: HOST_WAITS_MAX_AGE_MS,
    maxBusyShare: HOST_WAITS_BUSY_SHARE,
    onError: (err) => log.warn({ err: err.message }, 'scanning the waiting hosts failed; the gauge keeps the last figures'),
  });
  metrics.collectedGauge(
    'crawler_politeness_hosts_waiting',
    'hosts with queued URLs or a request in flight, by why they are not fetched now (the same figure in every gate process)',
    ['reason'],
    async () => {
      const counts = byReason();
      if (!counts) return [];
      return (Object.keys(REASON_LABELS) as WaitReason[]).map((r) => ({ labels: { reason: REASON_LABELS[r] }, value: counts[r] ?? 0 }));
    },
  );
}

/** What a node reads of its server: whether its connection is up, and gauges of its consumers' lag. */
export interface NodeServer {
  connected(): boolean;
  /** registers the lag gauges of the consumers `specs` gives, read at each scrape */
  gaugeConsumerLag(specs: () => readonly StageInputSpec[]): void;
}

/**
 * What a node adds to its metrics beyond the stages' own counts: the lag of the consumers
 * of the stages it runs, the waiting hosts where it runs a gate, and the connection's state.
 * Returns the node's readiness check.
 */
export function observeNode(
  server: NodeServer,
  metrics: StageMetrics,
  stages: readonly StageName[],
  hostWaits: HostWaitSources | null,
  log: Logger,
): { notReady: () => string | null } {
  const mine = STAGE_INPUTS.filter((spec) => stages.some((s) => spec.durable === s));
  server.gaugeConsumerLag(() => mine);
  if (hostWaits) registerHostWaits(metrics, hostWaits, log);
  return { notReady: () => (server.connected() ? null : 'not connected to NATS (reconnecting)') };
}
