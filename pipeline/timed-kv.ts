import { KvConflictError, type KvStore } from '../ports/kv.js';
import type { StageMetrics } from './metrics.js';

/**
 * A KV store whose single-key operations are timed into `crawler_kv_operation_seconds`:
 * every politeness decision is a few compare-and-set round trips, so their latency is the
 * first thing to look at when the crawl slows down (a lost server, an overloaded leader).
 */
export function timedKvStore(store: KvStore, bucket: string, metrics: StageMetrics): KvStore {
  const timed = async <T>(op: string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      const result = await run();
      metrics.kvOperation(bucket, op, 'ok', (performance.now() - started) / 1000);
      return result;
    } catch (err) {
      metrics.kvOperation(bucket, op, err instanceof KvConflictError ? 'conflict' : 'error', (performance.now() - started) / 1000);
      throw err;
    }
  };
  return {
    get: (key) => timed('get', () => store.get(key)),
    ...(store.getLatest ? { getLatest: (key: string) => timed('get_latest', () => store.getLatest!(key)) } : {}),
    create: (key, value) => timed('create', () => store.create(key, value)),
    update: (key, value, revision) => timed('update', () => store.update(key, value, revision)),
    put: (key, value) => timed('put', () => store.put(key, value)),
    delete: (key) => timed('delete', () => store.delete(key)),
    keys: () => store.keys(),
    watch: () => store.watch(),
  };
}
