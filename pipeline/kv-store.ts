/** The key-value operations stages need; backed by a JetStream KV bucket, or by memory in unit tests. */
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
  /** writes only if the key does not exist; throws KvConflictError otherwise */
  create(key: string, value: Uint8Array): Promise<number>;
  /** compare-and-set: writes only if the key's revision is still `revision`; throws KvConflictError otherwise */
  update(key: string, value: Uint8Array, revision: number): Promise<number>;
  put(key: string, value: Uint8Array): Promise<number>;
  delete(key: string): Promise<void>;
  keys(): AsyncIterable<string>;
}

/** An in-memory KvStore with the same compare-and-set semantics, for unit tests. */
export class MemoryKvStore implements KvStore {
  private readonly entries = new Map<string, KvEntry>();
  private revision = 0;

  async get(key: string): Promise<KvEntry | null> {
    return this.entries.get(key) ?? null;
  }
  async create(key: string, value: Uint8Array): Promise<number> {
    if (this.entries.has(key)) throw new KvConflictError(`key ${key} exists`);
    return this.set(key, value);
  }
  async update(key: string, value: Uint8Array, revision: number): Promise<number> {
    const current = this.entries.get(key);
    if (!current || current.revision !== revision) throw new KvConflictError(`key ${key} changed`);
    return this.set(key, value);
  }
  async put(key: string, value: Uint8Array): Promise<number> {
    return this.set(key, value);
  }
  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }
  async *keys(): AsyncIterable<string> {
    yield* [...this.entries.keys()];
  }
  private set(key: string, value: Uint8Array): number {
    this.revision += 1;
    this.entries.set(key, { value, revision: this.revision });
    return this.revision;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const jsonValue = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));
export const parseJsonValue = <T>(bytes: Uint8Array): T => JSON.parse(decoder.decode(bytes)) as T;

/**
 * Read-modify-write with compare-and-set, retried on conflict.
 * `change` gets the current value (or null) and returns the new value, or `undefined` to leave it.
 */
export async function casUpdate<T, R>(
  store: KvStore,
  key: string,
  change: (current: T | null) => { value?: T; result: R },
  attempts = 20,
): Promise<R> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const entry = await store.get(key);
    const current = entry ? parseJsonValue<T>(entry.value) : null;
    const { value, result } = change(current);
    if (value === undefined) return result;
    try {
      if (entry) await store.update(key, jsonValue(value), entry.revision);
      else await store.create(key, jsonValue(value));
      return result;
    } catch (err) {
      if (!(err instanceof KvConflictError)) throw err;
    }
  }
  throw new Error(`updating ${key}: too many concurrent writers (${attempts} compare-and-set conflicts)`);
}
