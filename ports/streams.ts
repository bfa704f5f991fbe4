/**
 * The stream port: reads a stage makes of retained streams beside its own consumer (the
 * gate's per-host queues, a partition's replay), and the publisher the runner hands to
 * background work. A stage's outputs are not published through here: its handler returns
 * them, and the runner publishes them before it acks the input.
 * Backed by JetStream (pipeline/adapters/stream-access.ts), or by memory in unit tests.
 */
export interface StoredMessage {
  seq: number;
  data: Uint8Array;
}

export interface StreamAccess {
  /** the first message on `subject` with a sequence ≥ `fromSeq`, or null */
  readNext(stream: string, subject: string, fromSeq: number): Promise<StoredMessage | null>;
  /** the messages on `subject` with `fromSeq` ≤ seq ≤ `toSeq`, in order (one ordered consumer, not one request each) */
  replay(stream: string, subject: string, fromSeq: number, toSeq: number): AsyncIterable<StoredMessage>;
  /**
   * Deletes the message at `seq` (a host queue's URL once it is served: the queue is a frontier,
   * not a log). False when it was gone already.
   */
  deleteMessage(stream: string, seq: number): Promise<boolean>;
  /** where a durable consumer is: everything up to `ackFloor` is acked; `delivered` is the last sequence it delivered */
  consumerPosition(stream: string, durable: string): Promise<ConsumerPosition>;
}

export interface ConsumerPosition {
  ackFloor: number;
  delivered: number;
  /** messages on its subjects not delivered yet: how far behind it is */
  pending: number;
}

/** One message to publish. `msgId` lets JetStream drop a duplicate publish (within its window). */
export interface Emit {
  subject: string;
  data: Uint8Array;
  msgId?: string;
  /** the stream the subject must land in: the publish fails rather than land anywhere else */
  expectStream?: string;
}

/** What a publish was acknowledged with: the stream sequence, the original's for a duplicate msgId. */
export interface Published {
  subject: string;
  seq: number;
  duplicate: boolean;
  /** the stream that stored it, where the publisher knows it */
  stream?: string;
}

/** Publishes and waits for every ack; results in the order of `messages`. */
export interface Publisher {
  publish(messages: readonly Emit[]): Promise<Published[]>;
}
