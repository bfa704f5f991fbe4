/**
 * The stream port: reads a stage makes of retained streams beside its own consumer (the
 * gate's per-host queues, a partition's replay) and the messages background work publishes.
 * Backed by JetStream (pipeline/adapters/stream-access.ts), or by memory in unit tests.
 */
export interface StoredMessage {
  seq: number;
  data: Uint8Array;
}

export interface StreamAccess {
  /** publishes one message and returns its stream sequence (the original's, for a duplicate msgId) */
  publish(subject: string, data: Uint8Array, msgId?: string): Promise<number>;
  /** the first message on `subject` with a sequence ≥ `fromSeq`, or null */
  readNext(stream: string, subject: string, fromSeq: number): Promise<StoredMessage | null>;
  /** the messages on `subject` with `fromSeq` ≤ seq ≤ `toSeq`, in order (one ordered consumer, not one request each) */
  replay(stream: string, subject: string, fromSeq: number, toSeq: number): AsyncIterable<StoredMessage>;
  /** where a durable consumer is: everything up to `ackFloor` is acked; `delivered` is the last sequence it delivered */
  consumerPosition(stream: string, durable: string): Promise<ConsumerPosition>;
}

export interface ConsumerPosition {
  ackFloor: number;
  delivered: number;
}
