import type { KvStore } from '../ports/kv.js';
import type { Emit, Published, Publisher, StreamAccess } from '../ports/streams.js';
import type { StageInputSpec, StageName } from '../topology/index.js';
import type { HttpClient } from '../ports/http.js';
import type { BodyStore } from '../ports/bodies.js';
import type { CrawlSettings } from './settings.js';
import type { Logger } from './logger.js';
import type { StageMetrics } from './metrics.js';

// the stages of the dataflow, in order: their entries in the topology
export { STAGE_NAMES, type StageName } from '../topology/index.js';

/**
 * What the runner is to do with one input message, as its stage decided: publish these and
 * ack it, retry it later, or dead-letter it (the word messaging systems use for settling a
 * message; what happened to a URL is its outcome, a `fetch_log` row). Only the runner acts on it:
 * - emit: publish these (an empty list means "filtered") and await their acks; then
 *   `beforeAck`, state the input must not be acked without (the gate's record that its host
 *   queue grew): if it fails the input is redelivered, and publishing again is harmless
 *   (every such message has a msgId); then ack; then `afterPublish`, state that may change
 *   only once the outputs are safely out and may be lost without harm (it expires or is
 *   rebuilt), so its failure is only logged. Both get what the publishes were acked with.
 *   If publishing (or `beforeAck`) fails, `onPublishFailed` (given the error) runs before the input is handed
 *   back for redelivery: what the handling learnt that a redelivery cannot learn again (the
 *   answer a fetch got) is kept there; its own failure is only logged;
 * - retry: nak the input so the server redelivers it after `afterMs`;
 * - fail: the message cannot be processed: dead-letter it with the reason, then ack.
 */
export type Disposition =
  | {
      kind: 'emit';
      messages: Emit[];
      beforeAck?: AfterPublishStep;
      afterPublish?: AfterPublishStep;
      onPublishFailed?: (err: Error) => Promise<void>;
      /** the handler stored something itself (a stage module's rows): counted as emitted though nothing is published */
      stored?: true;
    }
  | { kind: 'retry'; afterMs: number; reason: string }
  | { kind: 'fail'; reason: string };

/** A step the runner takes once the outputs are published, with their acks (in the order of `messages`). */
export type AfterPublishStep = (published: readonly Published[]) => Promise<void>;

export const emit = (...messages: Emit[]): Disposition => ({ kind: 'emit', messages });
export type { Emit, Published };
export const retryAfter = (afterMs: number, reason: string): Disposition => ({ kind: 'retry', afterMs, reason });
export const fail = (reason: string): Disposition => ({ kind: 'fail', reason });

/** Input as a stage sees it: already decoded by the stage's `decode`. */
export interface StageInput<T> {
  subject: string;
  message: T;
  /** 1 on first delivery */
  deliveryCount: number;
  streamSeq: number;
  /** when the message was stored in its stream (ms since the epoch; absent in unit tests that do not say) */
  publishedAt?: number;
}

export interface Clock {
  now(): number;
}

/** Everything a stage may touch: all I/O goes through here, so a fake context tests `handle`. */
export interface StageContext {
  settings: CrawlSettings;
  clock: Clock;
  log: Logger;
  metrics: StageMetrics;
  kv: {
    hosts: KvStore;
    /** crawl-trap tallies (stages/trap-tally.ts) */
    traps: KvStore;
    robots: KvStore;
    seen: KvStore;
    /** the seen set's exact record (stages/seen-filter/exact-key.ts) */
    seenKeys: KvStore;
    fingerprints: KvStore;
    scope: KvStore;
    validators: KvStore;
    /** WARC-Payload-Digest -> first capture, for the archive's identical-payload revisits */
    digests: KvStore;
    /** crawl jobs: their scope, limits, politeness and state (`crawl serve` writes them) */
    jobs: KvStore;
    /** in-link counts per registrable domain: the seen-filters write them, the gates watch them (stages/shared/importance/domain-inlinks.ts) */
    importance: KvStore;
  };
  http: HttpClient;
  /** the largest message the server accepts, so a stage can cap what it emits */
  maxPayloadBytes: number;
  /** direct stream access, for the gate's per-host queues (outputs still go through `emit`) */
  streams: StreamAccess;
  /**
   * bodies too large for their message, stored beside it (stages/shared/messages/page-body.ts
   * decides and reads them): a body is stored before the message that refers to it is emitted
   */
  bodies: BodyStore;
  /** the address a host's requests would go to (`--resolve` first), or null when it does not resolve */
  resolveHost(host: string): Promise<string | null>;
}

/** Something a stage runs beside its consumer (the gate's host scheduler), stopped with it. */
export interface BackgroundTask {
  stop(): Promise<void>;
}

/**
 * A background task's context: the stage's, plus the runner's publisher. Background work
 * (the gate's host scheduler handing out grants) has no input to ack, so it publishes
 * itself, but through the runner, which owns the connection's publishing.
 */
export interface BackgroundContext extends StageContext {
  publisher: Publisher;
}

interface StageBase<T> {
  name: StageName;
  input: StageInputSpec;
  /** edges this stage publishes to (used to check the topology) */
  emits: readonly string[];
  /** messages one process handles at once unless `--concurrency` says otherwise */
  defaultConcurrency: number;
  /** what the stage counts (`crawler_<stage>_<what>_total`): declared at start, so each is in a scrape before its first event */
  counts?: readonly string[];
  decode(subject: string, data: Uint8Array): T;
  /** optional: called once when the runner stops, after in-flight work finished (persist flushes here) */
  close?(ctx: StageContext): Promise<void>;
}

/** A stage with one durable consumer for the whole stage: `handle` decides about each message. */
export interface ConsumerStage<T = unknown> extends StageBase<T> {
  kind?: 'consumer';
  handle(input: StageInput<T>, ctx: StageContext): Promise<Disposition>;
  /** optional: started with the consumer, stopped after it */
  background?(ctx: BackgroundContext): Promise<BackgroundTask>;
}

/**
 * A stage that keeps per-partition state (the seen set) and runs one consumer per partition
 * it holds (`<durable>-p<N>` on `<subject>.<N>`, see `partitionInput`), under a lease
 * (pipeline/partition-owner.ts). It has no stage-wide handler: `openPartition` is called
 * when this process wins partition N's lease and returns a consumer stage bound to that
 * partition's state.
 */
export interface PartitionedStage<T = unknown> extends StageBase<T> {
  kind: 'partitioned';
  openPartition(partition: number, ctx: StageContext): Promise<OpenPartition<T>>;
}

export type StageDefinition<T = unknown> = ConsumerStage<T> | PartitionedStage<T>;

/** A partition this process holds: its stage definition (bound to the partition's state) and its state's life cycle. */
export interface OpenPartition<T> {
  def: ConsumerStage<T>;
  /** called every few seconds while held: save state if due */
  checkpoint(): Promise<void>;
  /** called once after the partition's consumer stopped and in-flight work finished, while the lease is still held */
  close(): Promise<void>;
}
