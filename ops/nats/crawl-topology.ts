import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { applyPartitionConsumers, applyTopology, type RetentionPolicyFor } from './topology.js';
import { STAGE_INPUTS } from '../../topology/index.js';

export interface TopologyOptions {
  /** declare the per-partition consumers of partitioned stages for this many partitions */
  partitions?: number;
  /** stream limits (age, bytes) to apply; streams it does not mention keep theirs */
  retention?: RetentionPolicyFor;
  /** copies of every stream, consumer and bucket; unset keeps what exists (1 for new ones) */
  replicas?: number;
}

/** Every stream, consumer and bucket of the crawl, from the topology: idempotent. */
export async function applyCrawlTopology(nc: NatsConnection, opts: TopologyOptions = {}): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  await applyTopology(nc, jsm, STAGE_INPUTS, opts.retention, { replicas: opts.replicas });
  if (opts.partitions !== undefined) await applyPartitionConsumers(jsm, STAGE_INPUTS, opts.partitions);
  return jsm;
}

/** The per-partition consumers (seen-filter), once the crawl's partition count is known. */
export async function applyCrawlPartitions(jsm: JetStreamManager, partitions: number): Promise<void> {
  await applyPartitionConsumers(jsm, STAGE_INPUTS, partitions);
}
