/**
 * An in-memory KvStore with the bucket's compare-and-set semantics (create fails on an existing
 * key, update on a changed revision) and its watch: the KV of unit tests, and of benches and
 * scripts that measure code above the store without a server.
 */
import { KvConflictError, type KvEntry, type KvStore, type KvWatch, type KvWatchEvent } from '../../ports/kv.js';

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
