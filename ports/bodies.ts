/**
 * The body store port: a response body too large to travel inside its message (a page of a
 * few MB on a server whose max_payload is 1 MB) is stored beside it, and the message carries
 * a reference instead. Backed by chunks on the `CRAWL_BODIES` stream
 * (pipeline/adapters/body-stream.ts), kept as long as the messages that refer to them.
 */

/** Where a stored body is: its chunks' stream sequences in order, its length and its SHA-256 (hex). */
export interface BodyRef {
  seqs: number[];
  length: number;
  sha256: string;
}

export interface BodyStore {
  /**
   * Stores `body` (not empty) under `subject` and returns where it is. The same body stored
   * again within the stream's duplicate window (a fetch redelivered after it stored it) gets
   * the first copy back rather than a second one.
   */
  put(subject: string, body: Uint8Array): Promise<BodyRef>;
  /** The body, checked against its length and digest; BodyMissingError when it is no longer whole. */
  get(ref: BodyRef): Promise<Uint8Array>;
}

/** A stored body that cannot be read back whole: retention removed (some of) its chunks, or they do not match. */
export class BodyMissingError extends Error {
  override name = 'BodyMissingError';
}
