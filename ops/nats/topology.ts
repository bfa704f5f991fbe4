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
import { BUCKETS, EDGES, partitionInput, type StageInputSpec } from '../../topology/index.js';

export interface RetentionOptions {
  /** how long each stream keeps its messages (replay window) */
  maxAgeMs: number;
  /** bytes per stream; -1 = no limit */
  maxBytes: number;
}

/** Two weeks of messages: enough to replay a stage after a bug fix found in a week. */
export const DEFAULT_RETENTION: RetentionOptions = { maxAgeMs: 14 * 24 * 3600 * 1000, maxBytes: -1 };
/** How long a message published again (same msgId) is recognised, on every stream but the bodies. */
const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;
/** How long a large body stored again is recognised as stored (see applyTopology). */
const BODY_DUPLICATE_WINDOW_MS = 60 * 60 * 1000;
/** A schedule (the revisits) keeps its messages until they are taken and purged. */
const SCHEDULE_RETENTION: RetentionOptions = { maxAgeMs: 0, maxBytes: -1 };

/**
 * Retention per stream name. `undefined` for a stream: a new stream gets DEFAULT_RETENTION,
 * an existing one keeps the limits it has (so a `crawl run` without retention flags does
 * not undo what `crawl topology apply --stream-max-age …` set).
 */
export type RetentionPolicyFor = (stream: string) => RetentionOptions | undefined;

const nanos = (ms: number) => ms * 1_000_000;

/** JetStream keeps at most five copies of a stream. */
export const MAX_REPLICAS = 5;

/** The copies asked for, replica placement aside: `undefined` keeps what an existing stream has (1 for a new one). */
export interface ReplicaOptions {
  replicas?: number;
}

export class ReplicasError extends Error {
  override name = 'ReplicasError';
}

function streamConfig(name: string, subjects: readonly string[], retention: RetentionOptions): Partial<StreamConfig> & { name: string } {
  return {
    name,
    subjects: [...subjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(retention.maxAgeMs),
    max_bytes: retention.maxBytes,
    // the window in which a re-published message (same Nats-Msg-Id) is dropped by the server;
    // the server refuses one longer than the stream's age limit (`--stream-max-age 1m`)
    duplicate_window: nanos(retention.maxAgeMs > 0 ? Math.min(DUPLICATE_WINDOW_MS, retention.maxAgeMs) : DUPLICATE_WINDOW_MS),
    num_replicas: 1,
    // the gate reads its per-host queues by subject and sequence (direct get, next_by_subj)
    allow_direct: true,
  };
}

/**
 * A queue (the host queues): messages stay until they are served and deleted, so no age
 * limit, whatever the replay window; a size limit, if one is set, refuses new messages
 * (the gate's intake is then told no and its input waits) instead of dropping waiting ones.
 */
function queueConfig(name: string, subjects: readonly string[], maxBytes: number): Partial<StreamConfig> & { name: string } {
  return { ...streamConfig(name, subjects, { maxAgeMs: 0, maxBytes }), discard: DiscardPolicy.New };
}

const isNotFound = (err: unknown) => (err as Error).name === 'StreamNotFoundError' || /not found/i.test((err as Error).message);

/** Which of an existing stream's limits an update keeps (the ones no flag set). */
type KeptLimits = 'none' | 'age-and-size' | 'size';

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }, keep: KeptLimits, replicas: number | undefined): Promise<void> {
  let current: Awaited<ReturnType<JetStreamManager['streams']['info']>> | null = null;
  try {
    current = await jsm.streams.info(config.name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (!current) {
    await jsm.streams.add({ ...config, num_replicas: replicas ?? 1 });
    return;
  }
  if (keep === 'age-and-size') {
    config.max_age = current.config.max_age;
    if (config.max_age > 0 && (config.duplicate_window ?? 0) > config.max_age) config.duplicate_window = config.max_age;
  }
  if (keep !== 'none') config.max_bytes = current.config.max_bytes;
  // nats-server 2.9 changes limits and the discard policy of a stream in place (a host-queue
  // stream made before it was a queue loses its age limit here, its messages kept)
  await jsm.streams.update(config.name, { ...config, num_replicas: replicas ?? current.config.num_replicas });
}

/**
 * A consumer keeps as many copies as its stream (num_replicas 0 = the stream's), so a
 * stream scaled from 1 to 3 copies takes its consumers along.
 */
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
      // a consumer made when the stage read fewer subjects (extract before rendered pages had
      // their own) reads what the topology says now; nats-server 2.9 changes it in place
      ...(spec.filterSubject ? { filter_subject: spec.filterSubject } : {}),
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
  copies: ReplicaOptions = {},
): Promise<void> {
  if (copies.replicas !== undefined) await checkReplicas(jsm, copies.replicas);
  for (const edge of Object.values(EDGES)) {
    if ('schedule' in edge) {
      await ensureStream(jsm, streamConfig(edge.stream, edge.subjects, SCHEDULE_RETENTION), 'none', copies.replicas);
      continue;
    }
    if ('queue' in edge) {
      // only a size limit applies to a queue; none named: an existing one keeps the one it has
      const limits = typeof retention === 'function' ? retention(edge.stream) : retention;
      await ensureStream(jsm, queueConfig(edge.stream, edge.subjects, limits?.maxBytes ?? -1), limits === undefined ? 'size' : 'none', copies.replicas);
      continue;
    }
    if ('retainedWith' in edge) {
      // the limits the stream whose messages refer to this one has now (applied above: EDGES
      // lists it first), so nothing it still holds refers to what this one dropped for age
      const { config } = await jsm.streams.info(EDGES[edge.retainedWith].stream);
      const limits = { maxAgeMs: config.max_age / 1_000_000, maxBytes: config.max_bytes };
      const stored = streamConfig(edge.stream, edge.subjects, limits);
      // a body stored again by a fetch repeated within this window (regranted after its
      // fetcher died, the host backed off first) gets the first copy back instead of a second;
      // the ids it keeps are a few per large body (it may not exceed the stream's max age)
      stored.duplicate_window = nanos(limits.maxAgeMs > 0 ? Math.min(BODY_DUPLICATE_WINDOW_MS, limits.maxAgeMs) : BODY_DUPLICATE_WINDOW_MS);
      await ensureStream(jsm, stored, 'none', copies.replicas);
      continue;
    }
    const limits = typeof retention === 'function' ? retention(edge.stream) : retention;
    await ensureStream(jsm, streamConfig(edge.stream, edge.subjects, limits ?? DEFAULT_RETENTION), limits === undefined ? 'age-and-size' : 'none', copies.replicas);
  }
  for (const spec of consumers) if (!spec.partitioned) await ensureConsumer(jsm, spec);
  const kvm = new Kvm(nc);
  for (const bucket of Object.values(BUCKETS)) await ensureBucket(kvm, jsm, bucket, copies.replicas);
}

/** A KV bucket is a stream `KV_<bucket>`: an existing one is scaled like the other streams. */
async function ensureBucket(kvm: Kvm, jsm: JetStreamManager, bucket: string, replicas: number | undefined): Promise<void> {
  const stream = `KV_${bucket}`;
  const current = await jsm.streams.info(stream).catch((err: unknown) => {
    if (isNotFound(err)) return null;
    throw err;
  });
  if (!current) {
    await kvm.create(bucket, { history: 1, storage: StorageType.File, allow_direct: true, replicas: replicas ?? 1 });
    return;
  }
  if (replicas !== undefined && current.config.num_replicas !== replicas) {
    await jsm.streams.update(stream, { ...current.config, num_replicas: replicas });
  }
}

/**
 * Refuses a replica count the servers cannot hold before anything is changed: a probe
 * stream in memory with that many copies is created and deleted again. The server's own
 * refusal (not clustered; fewer servers than copies) becomes a sentence that says what to do.
 */
export async function checkReplicas(jsm: JetStreamManager, replicas: number): Promise<void> {
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS) {
    throw new ReplicasError(`replicas must be between 1 and ${MAX_REPLICAS} (JetStream keeps at most ${MAX_REPLICAS} copies), got ${replicas}`);
  }
  if (replicas === 1) return;
  const name = `CRAWL_REPLICAS_PROBE_${Math.random().toString(36).slice(2, 10)}`;
  try {
    await jsm.streams.add({ name, subjects: [`crawl-probe.${name}`], storage: StorageType.Memory, num_replicas: replicas, max_msgs: 1 });
  } catch (err) {
    const message = (err as Error).message;
    if (/non-clustered|not supported in non-clustered/i.test(message)) {
      throw new ReplicasError(`${replicas} replicas need a JetStream cluster of at least ${replicas} servers; this server runs alone (keep 1 replica, or start a cluster: crawl cluster start)`);
    }
    if (/insufficient resources|no suitable peers/i.test(message)) {
      throw new ReplicasError(`${replicas} replicas need ${replicas} JetStream servers up in the cluster; it has fewer now (the server said: ${message})`);
    }
    throw new ReplicasError(`checking that the cluster can keep ${replicas} replicas: ${message}`);
  }
  await jsm.streams.delete(name).catch(() => undefined);
}

/**
 * Durable consumers added to a crawl's streams besides the topology's own: the stages of
 * stage modules (app/custom-stages.ts), declared by the process that runs them. The streams
 * keep their messages by age and size (limits retention, not work-queue or interest), so a
 * new consumer reads every retained message without taking any from the stages already there.
 */
export async function applyStageConsumers(jsm: JetStreamManager, consumers: readonly StageInputSpec[]): Promise<void> {
  for (const spec of consumers) await ensureConsumer(jsm, spec);
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
