/**
 * The key-value port: the operations stages need on shared state, with compare-and-set.
 * Backed by a JetStream KV bucket (pipeline/adapters/nats-kv.ts), or by memory in unit tests
 * (pipeline/kv-store.ts), with the same semantics.
 */
export interface KvEntry {
  value: Uint8Array;
  revision: number;
}

/** The key existed (create) or changed since it was read (update): the caller re-reads and decides again. */
export class KvConflictError extends Error {
  override name = 'KvConflictError';
}

export interface KvStore {
  get(key: string): Promise<KvEntry | null>;
  /**
   * Present only where `get` may answer from a replica that lags (a replicated bucket: any
   * of its servers answers a direct get): reads from the bucket's leader, so the value is
   * never older than a change the caller has already seen (in a watch, say). Costs more.
   */
  getLatest?(key: string): Promise<KvEntry | null>;
  /** writes only if the key does not exist; throws KvConflictError otherwise */
  create(key: string, value: Uint8Array): Promise<number>;
  /** compare-and-set: writes only if the key's revision is still `revision`; throws KvConflictError otherwise */
  update(key: string, value: Uint8Array, revision: number): Promise<number>;
  put(key: string, value: Uint8Array): Promise<number>;
  delete(key: string): Promise<void>;
  keys(): AsyncIterable<string>;
  /** every key's current value, then every change as it happens, until `stop()` */
  watch(): Promise<KvWatch>;
}

export interface KvWatchEvent {
  key: string;
  /** null: the key was deleted */
  value: Uint8Array | null;
}

export interface KvWatch extends AsyncIterable<KvWatchEvent> {
  stop(): void;
}
