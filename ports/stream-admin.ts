/**
 * The admin port: what commands and the jobs service read and tidy on the crawl's streams and
 * consumers, beside the dataflow (a stage never needs it). How much a stream holds, how far
 * behind a stage's consumers are, how many messages wait on a subject, a stored message, and
 * removing what was handed out. Backed by JetStream (pipeline/adapters/stream-admin.ts).
 */

/** What a stream holds now, and the limits it keeps. */
export interface StreamState {
  stream: string;
  messages: number;
  bytes: number;
  firstSeq: number;
  lastSeq: number;
  /** messages older than this are removed; 0: no age limit */
  maxAgeMs: number;
  /** the oldest messages are removed past this; 0 or less: no size limit */
  maxBytes: number;
}

/** A durable consumer to read the lag of; `partitioned`: the stage has one consumer per partition, `<durable>-p<N>`. */
export interface ConsumerOf {
  stream: string;
  durable: string;
  partitioned?: boolean;
}

export interface ConsumerLag {
  stream: string;
  consumer: string;
  /** messages in the stream the consumer has not been given yet */
  pending: number;
  /** messages given out and not acknowledged yet (in a handler, or waiting on a delayed nak) */
  ackPending: number;
}

/** A message as the stream stored it. */
export interface StreamMessage {
  seq: number;
  subject: string;
  data: Uint8Array;
  /** when the server stored it */
  time: Date;
  /** the id it was published with (Nats-Msg-Id), or null */
  msgId: string | null;
}

export class StreamNotFoundError extends Error {
  override name = 'StreamNotFoundError';
}

export interface StreamAdmin {
  /** Throws StreamNotFoundError when the stream does not exist. */
  streamState(stream: string): Promise<StreamState>;
  /** Messages per subject of `stream` matching `filter` (wildcards allowed); throws StreamNotFoundError. */
  subjectCounts(stream: string, filter: string): Promise<Record<string, number>>;
  /**
   * The lag of each consumer, a partitioned one's per partition (those declared so far).
   * Throws when a consumer cannot be read (not there, or a cluster electing a leader): a
   * missing figure is not a zero.
   */
  consumerLag(consumers: readonly ConsumerOf[]): Promise<ConsumerLag[]>;
  /** Messages on `subject` from `fromSeq` on. */
  countFrom(stream: string, subject: string, fromSeq: number): Promise<number>;
  /** The sequence of the last message on `subject`, or null when it has none. */
  lastSeq(stream: string, subject: string): Promise<number | null>;
  /** The first message on `filter` with a sequence ≥ `fromSeq`, or null. */
  readFrom(stream: string, filter: string, fromSeq: number): Promise<StreamMessage | null>;
  /** Removes the messages on `subject` with a sequence up to `throughSeq`. */
  purgeSubject(stream: string, subject: string, throughSeq: number): Promise<void>;
  /** Deletes the message at `seq`; false when it was gone already. */
  deleteMessage(stream: string, seq: number): Promise<boolean>;
}
