import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { BUCKETS, EDGES } from './edges.js';
import { partitionInput, type StageInputSpec } from './consumer-spec.js';

export interface RetentionOptions {
  /** how long each stream keeps its messages (replay window) */
  maxAgeMs: number;
  /** bytes per stream; -1 = no limit */
  maxBytes: number;
}

/** Two weeks of messages: enough to replay a stage after a bug fix found in a week. */
export const DEFAULT_RETENTION: RetentionOptions = { maxAgeMs: 14 * 24 * 3600 * 1000, maxBytes: -1 };
/** A schedule (the revisits) keeps its messages until they are taken and purged. */
const SCHEDULE_RETENTION: RetentionOptions = { maxAgeMs: 0, maxBytes: -1 };

/**
 * Retention per stream name. `undefined` for a stream: a new stream gets DEFAULT_RETENTION,
 * an existing one keeps the limits it has (so a `crawl run` without retention flags does
 * not undo what `crawl topology apply --stream-max-age …` set).
 */
export type RetentionPolicyFor = (stream: string) => RetentionOptions | undefined;

const nanos = (ms: number) => ms * 1_000_000;

function streamConfig(name: string, subjects: readonly string[], retention: RetentionOptions): Partial<StreamConfig> & { name: string } {
  return {
    name,
    subjects: [...subjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(retention.maxAgeMs),
    max_bytes: retention.maxBytes,
    // the window in which a re-published message (same Nats-Msg-Id) is dropped by the server
    duplicate_window: nanos(2 * 60 * 1000),
    num_replicas: 1,
    // the gate reads its per-host queues by subject and sequence (direct get, next_by_subj)
    allow_direct: true,
  };
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }, keepLimits = false): Promise<void> {
  try {
    const current = await jsm.streams.info(config.name);
    if (keepLimits) {
      config.max_age = current.config.max_age;
      config.max_bytes = current.config.max_bytes;
    }
    await jsm.streams.update(config.name, config);
  } catch (err) {
    if ((err as Error).name !== 'StreamNotFoundError' && !/not found/i.test((err as Error).message)) throw err;
    await jsm.streams.add(config);
  }
}

async function ensureConsumer(jsm: JetStreamManager, spec: StageInputSpec): Promise<void> {
  const config = {
    durable_name: spec.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ...(spec.filterSubject ? { filter_subject: spec.filterSubject } : {}),
    ack_wait: nanos(spec.ackWaitMs),
    // never let the server give up on a message: the runner dead-letters it itself,
    // with a reason, so nothing disappears silently
    max_deliver: -1,
    max_ack_pending: spec.maxAckPending,
  };
  try {
    await jsm.consumers.info(spec.stream, spec.durable);
    await jsm.consumers.update(spec.stream, spec.durable, {
      ack_wait: config.ack_wait,
      max_ack_pending: config.max_ack_pending,
      max_deliver: config.max_deliver,
    });
  } catch (err) {
    if (!/not found/i.test((err as Error).message)) throw err;
    await jsm.consumers.add(spec.stream, config);
  }
}

/**
 * Applies streams, consumers and KV buckets idempotently: safe to run at every start,
 * from any number of processes. Stages bind to what this creates and never create it.
 */
export async function applyTopology(
  nc: NatsConnection,
  jsm: JetStreamManager,
  consumers: readonly StageInputSpec[],
  retention: RetentionOptions | RetentionPolicyFor = DEFAULT_RETENTION,
): Promise<void> {
  for (const edge of Object.values(EDGES)) {
    if ('schedule' in edge) {
      await ensureStream(jsm, streamConfig(edge.stream, edge.subjects, SCHEDULE_RETENTION));
      continue;
    }
    const limits = typeof retention === 'function' ? retention(edge.stream) : retention;
    await ensureStream(jsm, streamConfig(edge.stream, edge.subjects, limits ?? DEFAULT_RETENTION), limits === undefined);
  }
  for (const spec of consumers) if (!spec.partitioned) await ensureConsumer(jsm, spec);
  const kvm = new Kvm(nc);
  for (const bucket of Object.values(BUCKETS)) {
    await kvm.create(bucket, { history: 1, storage: StorageType.File, allow_direct: true });
  }
}

/**
 * The per-partition consumers of partitioned stages (`seen-filter-p<N>` on
 * `crawl.normalized.<N>`): nats-server 2.9 gives a consumer one filter subject, so a process
 * that holds some partitions reads them through one durable each. Declared once the crawl's
 * partition count is known (the settings), idempotently.
 */
export async function applyPartitionConsumers(jsm: JetStreamManager, consumers: readonly StageInputSpec[], partitions: number): Promise<void> {
  for (const spec of consumers) {
    if (!spec.partitioned) continue;
    for (let p = 0; p < partitions; p++) await ensureConsumer(jsm, partitionInput(spec, p));
  }
}
