/**
 * One in-memory DuckDB instance per process for every Parquet writer in it (persist's rows,
 * the archive's captures), each writer on a connection of its own. An instance keeps the
 * memory it has used (docs/performance.md#one-duckdb-instance-per-process), so one instance
 * per writer would cost a crawl process that much again for each. Writers asking for
 * different settings get different instances; the instance closes with its last writer.
 */
import { DuckDBInstance } from '@duckdb/node-api';

/**
 * DuckDB's allocator keeps what a batch used (while DuckDB itself reports 0 bytes in use)
 * unless its background threads purge it: with these settings an instance is back to its
 * starting size within seconds (docs/performance.md#one-duckdb-instance-per-process).
 */
export const RETURN_FREED_MEMORY: Readonly<Record<string, string>> = { allocator_background_threads: 'true', allocator_flush_threshold: '32MB' };

interface Shared {
  instance: Promise<DuckDBInstance>;
  users: number;
}

const instances = new Map<string, Shared>();

export interface WriterInstance {
  instance: DuckDBInstance;
  /** this writer is done with it; the last one to say so closes it */
  release(): void;
}

export async function acquireWriterInstance(settings: Record<string, string>): Promise<WriterInstance> {
  const key = JSON.stringify(Object.entries(settings).sort(([a], [b]) => (a < b ? -1 : 1)));
  let shared = instances.get(key);
  if (!shared) {
    shared = { instance: DuckDBInstance.create(':memory:', settings), users: 0 };
    instances.set(key, shared);
  }
  shared.users += 1;
  const entry = shared;
  let instance: DuckDBInstance;
  try {
    instance = await entry.instance;
  } catch (err) {
    entry.users -= 1;
    if (instances.get(key) === entry) instances.delete(key);
    throw err;
  }
  let released = false;
  return {
    instance,
    release() {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users > 0) return;
      if (instances.get(key) === entry) instances.delete(key);
      instance.closeSync();
    },
  };
}
