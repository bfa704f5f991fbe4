import { KvConflictError, type KvEntry, type KvStore, type KvWatch, type KvWatchEvent } from '../ports/kv.js';

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
    for (const listener of this.listeners) listener({ key, value: null });
  }
  async *keys(): AsyncIterable<string> {
    yield* [...this.entries.keys()];
  }
  async watch(): Promise<KvWatch> {
    const queue: KvWatchEvent[] = [...this.entries].map(([key, e]) => ({ key, value: e.value }));
    let wake: (() => void) | null = null;
    let stopped = false;
    const listener = (event: KvWatchEvent) => {
      queue.push(event);
      wake?.();
    };
    this.listeners.add(listener);
    const listeners = this.listeners;
    return {
      stop() {
        stopped = true;
        listeners.delete(listener);
        wake?.();
      },
      async *[Symbol.asyncIterator]() {
        while (!stopped) {
          const next = queue.shift();
          if (next) {
            yield next;
            continue;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
        }
      },
    };
  }
  private readonly listeners = new Set<(event: KvWatchEvent) => void>();
  private set(key: string, value: Uint8Array): number {
    this.revision += 1;
    this.entries.set(key, { value, revision: this.revision });
    for (const listener of this.listeners) listener({ key, value });
    return this.revision;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const jsonValue = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));
export const parseJsonValue = <T>(bytes: Uint8Array): T => JSON.parse(decoder.decode(bytes)) as T;

/**
 * Per-process state of casUpdate: a queue per key, so that the many handlers of one process
 * never race each other on a key (the server's compare-and-set still arbitrates between
 * processes). Forgotten when idle, so memory stays bounded by the keys in use right now.
 */
interface KeyState {
  tail: Promise<unknown>;
  users: number;
}
const keyStates = new WeakMap<KvStore, Map<string, KeyState>>();

function keyState(store: KvStore, key: string): KeyState {
  let states = keyStates.get(store);
  if (!states) {
    states = new Map();
    keyStates.set(store, states);
  }
  let state = states.get(key);
  if (!state) {
    state = { tail: Promise.resolve(), users: 0 };
    states.set(key, state);
  }
  return state;
}

function releaseKeyState(store: KvStore, key: string, state: KeyState): void {
  state.users -= 1;
  if (state.users === 0) keyStates.get(store)?.delete(key);
}

/** Bytes of entry values casUpdate remembers per store (least recently used dropped first). */
export const CAS_CACHE_BYTES = 8 * 1024 * 1024;

/**
 * The last entry casUpdate read or wrote per key, so the next update of a key this process
 * owns in practice (a host's slot, queue tail and trap tally are updated several times per
 * URL) skips its read: the compare-and-set is tried on the remembered revision, and a key
 * another process changed meanwhile just fails it once and is read afresh.
 */
class EntryCache {
  private readonly entries = new Map<string, KvEntry | null>();
  private bytes = 0;

  get(key: string): KvEntry | null | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // re-insert: Map order is the recency order
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  set(key: string, entry: KvEntry | null): void {
    this.forget(key);
    this.entries.set(key, entry);
    this.bytes += sizeOf(key, entry);
    for (const [oldest, e] of this.entries) {
      if (this.bytes <= CAS_CACHE_BYTES) break;
      this.entries.delete(oldest);
      this.bytes -= sizeOf(oldest, e);
    }
  }

  forget(key: string): void {
    const old = this.entries.get(key);
    if (old === undefined) return;
    this.entries.delete(key);
    this.bytes -= sizeOf(key, old);
  }
}

const sizeOf = (key: string, entry: KvEntry | null) => key.length + (entry?.value.length ?? 0) + 64;
const entryCaches = new WeakMap<KvStore, EntryCache>();

function entryCache(store: KvStore): EntryCache {
  let cache = entryCaches.get(store);
  if (!cache) {
    cache = new EntryCache();
    entryCaches.set(store, cache);
  }
  return cache;
}

/**
 * Read-modify-write with compare-and-set, retried on conflict.
 * `change` gets the current value (or null) and returns the new value, or `undefined` to leave it.
 * A decision to leave the value is always made on a fresh read, never on the cached entry.
 */
export async function casUpdate<T, R>(
  store: KvStore,
  key: string,
  change: (current: T | null) => { value?: T; result: R },
  attempts = 20,
): Promise<R> {
  const state = keyState(store, key);
  const cache = entryCache(store);
  state.users += 1;
  const run = state.tail.then(async () => {
    for (let attempt = 0; attempt < attempts; attempt++) {
      const remembered = attempt === 0 ? cache.get(key) : undefined;
      const cached = remembered !== undefined;
      const entry = cached ? remembered : await store.get(key);
      if (!cached) cache.set(key, entry); // a remembered entry was already made the most recent by get
      const current = entry ? parseJsonValue<T>(entry.value) : null;
      const { value, result } = change(current);
      if (value === undefined) {
        if (cached) continue; // decided on a fresh read only
        return result;
      }
      try {
        const bytes = jsonValue(value);
        const revision = entry ? await store.update(key, bytes, entry.revision) : await store.create(key, bytes);
        cache.set(key, { value: bytes, revision });
        return result;
      } catch (err) {
        cache.forget(key);
        if (!(err instanceof KvConflictError)) throw err;
      }
    }
    throw new Error(`updating ${key}: too many concurrent writers (${attempts} compare-and-set conflicts)`);
  });
  state.tail = run.catch(() => undefined);
  try {
    return await run;
  } finally {
    releaseKeyState(store, key, state);
  }
}
