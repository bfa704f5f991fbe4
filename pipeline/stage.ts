import type { KvStore } from '../ports/kv.js';
import type { StreamAccess } from '../ports/streams.js';
import type { StageInputSpec } from '../ops/nats/consumer-spec.js';
import type { HttpClient } from '../ports/http.js';
import type { CrawlSettings } from './settings.js';
import type { Logger } from './logger.js';
import type { StageMetrics } from './metrics.js';

/** The stages of the dataflow, in order. */
export const STAGE_NAMES = [
  'normalize',
  'seen-filter',
  'politeness-gate',
  'fetch',
  'extract',
  'simhash',
  'persist',
  'archive',
] as const;
export type StageName = (typeof STAGE_NAMES)[number];

/** One message published by a stage. `msgId` lets JetStream drop a duplicate publish. */
export interface Emit {
  subject: string;
  data: Uint8Array;
  msgId?: string;
}

/**
 * What a stage decided about one input message. Only the runner acts on it:
 * - emit: publish these (an empty list means "filtered"), run `afterPublish` if given (for
 *   state that may change only once the outputs are safely out), then ack the input;
 * - retry: nak the input so the server redelivers it after `afterMs`;
 * - fail: the message cannot be processed: dead-letter it with the reason, then ack.
 */
export type Outcome =
  | { kind: 'emit'; messages: Emit[]; afterPublish?: () => Promise<void> }
  | { kind: 'retry'; afterMs: number; reason: string }
  | { kind: 'fail'; reason: string };

export const emit = (...messages: Emit[]): Outcome => ({ kind: 'emit', messages });
export const retryAfter = (afterMs: number, reason: string): Outcome => ({ kind: 'retry', afterMs, reason });
export const fail = (reason: string): Outcome => ({ kind: 'fail', reason });

/** Input as a stage sees it: already decoded by the stage's `decode`. */
export interface StageInput<T> {
  subject: string;
  message: T;
  /** 1 on first delivery */
  deliveryCount: number;
  streamSeq: number;
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
    fingerprints: KvStore;
    scope: KvStore;
    validators: KvStore;
    /** WARC-Payload-Digest -> first capture, for the archive's identical-payload revisits */
    digests: KvStore;
  };
  http: HttpClient;
  /** the largest message the server accepts, so a stage can cap what it emits */
  maxPayloadBytes: number;
  /** direct stream access, for the gate's per-host queues (outputs still go through `emit`) */
  streams: StreamAccess;
  /** the address a host's requests would go to (`--resolve` first), or null when it does not resolve */
  resolveHost(host: string): Promise<string | null>;
}

/** Something a stage runs beside its consumer (the gate's host scheduler), stopped with it. */
export interface BackgroundTask {
  stop(): Promise<void>;
}

export interface StageDefinition<T = unknown> {
  name: StageName;
  input: StageInputSpec;
  /** edges this stage publishes to (used to check the topology) */
  emits: readonly string[];
  /** messages one process handles at once unless `--concurrency` says otherwise */
  defaultConcurrency: number;
  decode(subject: string, data: Uint8Array): T;
  handle(input: StageInput<T>, ctx: StageContext): Promise<Outcome>;
  /** optional: started with the consumer, stopped after it */
  background?(ctx: StageContext): Promise<BackgroundTask>;
  /** optional: called once when the runner stops, after in-flight work finished (persist flushes here) */
  close?(ctx: StageContext): Promise<void>;
  /**
   * optional: the stage keeps per-partition state and runs one consumer per partition it holds
   * (`<durable>-p<N>` on `<subject>.<N>`, see `partitionInput`), under a lease
   * (pipeline/partition-owner.ts). Called when this process wins partition N's lease.
   */
  openPartition?(partition: number, ctx: StageContext): Promise<OpenPartition<T>>;
}

/** A partition this process holds: its stage definition (bound to the partition's state) and its state's life cycle. */
export interface OpenPartition<T> {
  def: StageDefinition<T>;
  /** called every few seconds while held: save state if due */
  checkpoint(): Promise<void>;
  /** called once after the partition's consumer stopped and in-flight work finished, while the lease is still held */
  close(): Promise<void>;
}
