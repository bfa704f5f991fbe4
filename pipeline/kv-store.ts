import { KvConflictError, type KvEntry, type KvStore } from '../ports/kv.js';
import { KeyPresence } from './key-presence.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const jsonValue = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));
export const parseJsonValue = <T>(bytes: Uint8Array): T => JSON.parse(decoder.decode(bytes)) as T;

/** A casUpdate call waiting for its key. */
interface PendingChange {
  change: (current: unknown) => { value?: unknown; result: unknown };
  attempts: number;
  resolve: (result: unknown) => void;
  reject: (err: unknown) => void;
}
/**
 * Per-process state of casUpdate: a queue per key, so that the many handlers of one process
 * never race each other on a key (the server's compare-and-set still arbitrates between
 * processes). Forgotten when idle, so memory stays bounded by the keys in use right now.
 */
interface KeyState {
  queue: PendingChange[];
  running: boolean;
}
const keyStates = new WeakMap<KvStore, Map<string, KeyState>>();

function keyState(store: KvStore, key: string): { states: Map<string, KeyState>; state: KeyState } {
  let states = keyStates.get(store);
  if (!states) {
    states = new Map();
    keyStates.set(store, states);
  }
  let state = states.get(key);
  if (!state) {
    state = { queue: [], running: false };
    states.set(key, state);
  }
  return { states, state };
}

/** Bytes of memory casUpdate's remembered entries take per store (those unused for longest dropped first). */
export const CAS_CACHE_BYTES = 8 * 1024 * 1024;

/**
 * An entry as casUpdate remembers it: the value as the JSON text it parses, not the bytes the
 * server sent (a typed array and its buffer cost ten times a short string's header, and the
 * text is decoded once instead of at every update).
 */
interface RememberedEntry {
  json: string;
  revision: number;
}
/**
 * What a remembered entry costs beyond its key's and value's characters: the Map's slot, the
 * entry object and two string headers. Counted so that CAS_CACHE_BYTES bounds the memory, not
 * only the payload.
 */
const ENTRY_OVERHEAD_BYTES = 128;

/**
 * The last entry casUpdate read or wrote per key, so the next update of a key this process
 * owns in practice (a host's slot, queue tail and trap tally are updated several times per
 * URL) skips its read: the compare-and-set is tried on the remembered revision, and a key
 * another process changed meanwhile just fails it once and is read afresh.
 *
 * Two generations instead of an exact LRU: entries go into `young`; when it holds half the
 * budget it becomes `old` and the one before is dropped, and an entry found in `old` moves
 * back to `young`. So an entry used within the last two generations is kept, and every
 * operation is a lookup or two. (A Map kept in recency order by delete-and-reinsert, evicting
 * from its front, costs a visible share of the main thread once full: each eviction's iterator
 * first steps over the deleted slots the reinsertions leave at the front of V8's table;
 * docs/performance.md#kv-updates-and-the-entry-cache.)
 */
class EntryCache {
  private young = new Map<string, RememberedEntry | null>();
  private old = new Map<string, RememberedEntry | null>();
  private youngBytes = 0;
  /** keys seen to exist, remembered after their entries are forgotten */
  readonly presence = new KeyPresence();

  get(key: string): RememberedEntry | null | undefined {
    const entry = this.young.get(key);
    if (entry !== undefined) return entry;
    const older = this.old.get(key);
    if (older === undefined) return undefined;
    this.old.delete(key);
    this.keep(key, older);
    return older;
  }

  set(key: string, entry: RememberedEntry | null): void {
    if (entry) this.presence.seen(key);
    this.forget(key);
    this.keep(key, entry);
  }

  forget(key: string): void {
    const young = this.young.get(key);
    if (young !== undefined) {
      this.young.delete(key);
      this.youngBytes -= sizeOf(key, young);
    }
    this.old.delete(key);
  }

  private keep(key: string, entry: RememberedEntry | null): void {
    this.young.set(key, entry);
    this.youngBytes += sizeOf(key, entry);
    if (this.youngBytes > CAS_CACHE_BYTES / 2) {
      this.old = this.young;
      this.young = new Map();
      this.youngBytes = 0;
    }
  }
}

const sizeOf = (key: string, entry: RememberedEntry | null) => key.length + (entry?.json.length ?? 0) + ENTRY_OVERHEAD_BYTES;
const entryCaches = new WeakMap<KvStore, EntryCache>();

function entryCache(store: KvStore): EntryCache {
  let cache = entryCaches.get(store);
  if (!cache) {
    cache = new EntryCache();
    entryCaches.set(store, cache);
  }
  return cache;
}

/** `store` with its reads done by `get` and `getLatest`, and everything else by the store itself. */
export function withReads(store: KvStore, get: KvStore['get'], getLatest: KvStore['get']): KvStore {
  return {
    get,
    getLatest,
    create: (key, value) => store.create(key, value),
    update: (key, value, revision) => store.update(key, value, revision),
    put: (key, value) => store.put(key, value),
    delete: (key) => store.delete(key),
    keys: () => store.keys(),
    watch: () => store.watch(),
  };
}

const leaderViews = new WeakMap<KvStore, KvStore>();

/**
 * `store` with its reads answered by the bucket's leader (KvStore.getLatest): for a decision
 * that ends something and writes nothing, which no compare-and-set would catch being made on
 * a replica that lags. The store itself where reads never lag. One view per store, so that
 * casUpdate keeps its per-key state for it.
 */
export function readingFromLeader(store: KvStore): KvStore {
  const latest = store.getLatest?.bind(store);
  if (!latest) return store;
  let view = leaderViews.get(store);
  if (!view) {
    view = withReads(store, latest, latest);
    leaderViews.set(store, view);
  }
  return view;
}

/**
 * Read-modify-write with compare-and-set, retried on conflict.
 * `change` gets the current value (or null) and returns the new value, or `undefined` to leave it.
 * A decision to leave the value is always made on a fresh read, never on the cached entry.
 *
 * Updates of one key in one process run one at a time, in call order; those that queued
 * while a write of the key was in flight are applied together, each on the value the one
 * before it left, and written at once (a host's queue tail and trap tally are updated by
 * many URLs at the same moment, so many of those updates fold into another's write:
 * docs/performance.md#kv-updates-and-the-entry-cache). All of them land or none: a conflict
 * re-runs them all on a fresh read.
 * A change that throws rejects its own call only, and leaves the value as it found it.
 */
export function casUpdate<T, R>(
  store: KvStore,
  key: string,
  change: (current: T | null) => { value?: T; result: R },
  attempts = 20,
): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const { states, state } = keyState(store, key);
    state.queue.push({ change: change as PendingChange['change'], attempts, resolve: resolve as PendingChange['resolve'], reject });
    if (!state.running) void drain(store, key, states, state);
  });
}

async function drain(store: KvStore, key: string, states: Map<string, KeyState>, state: KeyState): Promise<void> {
  state.running = true;
  while (state.queue.length > 0) await applyTogether(store, key, state.queue.splice(0));
  state.running = false;
  if (states.get(key) === state) states.delete(key);
}

/** What one change in a batch returned, or threw: each change's promise settles with its own. */
type ChangeResult = { ok: true; result: unknown } | { ok: false; err: unknown };

/** Runs `batch`'s changes in order on one value and writes the last one, retried on conflict. */
async function applyTogether(store: KvStore, key: string, batch: PendingChange[]): Promise<void> {
  const cache = entryCache(store);
  const attempts = Math.max(...batch.map((c) => c.attempts));
  try {
    for (let attempt = 0; attempt < attempts; attempt++) {
      let remembered = attempt === 0 ? cache.get(key) : undefined;
      // a key this process never saw is most likely new: created without a read (key-presence.ts)
      const guessedAbsent = remembered === undefined && attempt === 0 && cache.presence.guessAbsent(key);
      if (guessedAbsent) remembered = null;
      const cached = remembered !== undefined;
      const entry = cached ? (remembered as RememberedEntry | null) : remembering(await store.get(key));
      if (!cached) cache.set(key, entry); // a remembered entry was already made the most recent by get
      let current: unknown = entry ? JSON.parse(entry.json) : null;
      let changed = false;
      const results: ChangeResult[] = batch.map((c) => {
        try {
          const { value, result } = c.change(current);
          if (value !== undefined) {
            current = value;
            changed = true;
          }
          return { ok: true, result };
        } catch (err) {
          return { ok: false, err };
        }
      });
      if (!changed) {
        if (cached) continue; // decided on a fresh read only
        return settle(batch, results);
      }
      try {
        const json = JSON.stringify(current);
        const bytes = encoder.encode(json);
        const revision = entry ? await store.update(key, bytes, entry.revision) : await store.create(key, bytes);
        if (guessedAbsent) cache.presence.guessed(true);
        cache.set(key, { json, revision });
        return settle(batch, results);
      } catch (err) {
        cache.forget(key);
        if (!(err instanceof KvConflictError)) throw err;
        if (guessedAbsent) {
          cache.presence.guessed(false);
          cache.presence.seen(key);
          attempt -= 1; // a wrong guess is a read skipped, not a lost race: it costs no attempt
        }
      }
    }
    throw new Error(`updating ${key}: too many concurrent writers (${attempts} compare-and-set conflicts)`);
  } catch (err) {
    for (const c of batch) c.reject(err);
  }
}

const remembering = (entry: KvEntry | null): RememberedEntry | null => (entry ? { json: decoder.decode(entry.value), revision: entry.revision } : null);

function settle(batch: PendingChange[], results: ChangeResult[]): void {
  batch.forEach((c, i) => {
    const o = results[i]!;
    if (o.ok) c.resolve(o.result);
    else c.reject(o.err);
  });
}
