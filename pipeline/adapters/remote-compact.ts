/**
 * Compaction of an output in an object store: the same merges as for a local directory
 * (duckdb-compact.ts), on local copies. Per partition, the small objects old enough are
 * downloaded, merged into one file, which is uploaded (whole, like every output object)
 * before the merged objects are deleted: a reader sees the rows twice for a moment, which
 * the deduplicating views hide, and never misses one.
 */
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ObjectStore, StoredObject } from '../../ports/object-store.js';
import { TABLE_NAMES } from '../../schemas/output-tables.js';
import { DEFAULT_COMPACT_MEMORY_BYTES } from './compact-budget.js';
import { DEFAULT_MIN_AGE_MS, DEFAULT_TARGET_BYTES, emptySummary, summarize, withMergeDatabase, type CompactOptions, type CompactSummary } from './duckdb-compact.js';

/** `pages/crawl=x/date=y/version=0/part-….parquet` -> its partition, `pages/crawl=x/date=y/version=0` */
const PARTITIONED = /^([^/]+\/crawl=[^/]+\/date=[^/]+\/version=\d+)\/([^/]+\.parquet)$/;

export async function compactRemoteOutput(store: ObjectStore, options: CompactOptions = {}): Promise<CompactSummary> {
  const target = options.targetBytes ?? DEFAULT_TARGET_BYTES;
  const minAge = options.minAgeMs ?? DEFAULT_MIN_AGE_MS;
  const summary = emptySummary();
  const local = await fsp.mkdtemp(path.join(os.tmpdir(), 'crawl-compact-'));
  try {
    await withMergeDatabase(local, options.memoryLimitBytes ?? DEFAULT_COMPACT_MEMORY_BYTES, async (merger) => {
      const now = Date.now();
      for (const table of TABLE_NAMES) {
        const partitions = new Map<string, StoredObject[]>();
        for await (const o of store.list(`${table}/`)) {
          const m = PARTITIONED.exec(o.key);
          if (!m || now - o.lastModified < minAge || o.size >= target) continue;
          partitions.set(m[1]!, [...(partitions.get(m[1]!) ?? []), o]);
        }
        for (const [partition, objects] of partitions) {
          if (objects.length < 2) continue;
          const dir = path.join(local, ...partition.split('/'));
          await fsp.mkdir(dir, { recursive: true });
          const files: Array<{ path: string; bytes: number }> = [];
          for (const o of objects.sort((a, b) => a.key.localeCompare(b.key))) {
            const p = path.join(dir, path.posix.basename(o.key));
            await store.downloadFile(o.key, p);
            files.push({ path: p, bytes: o.size });
          }
          const keyOf = (p: string) => `${partition}/${path.basename(p)}`;
          const merges = await merger.merge(table, files, dir, target, async (merged, inputs) => {
            await store.putFile(keyOf(merged), merged);
            await store.delete(inputs.map(keyOf));
          });
          summarize(summary, merges);
          await fsp.rm(dir, { recursive: true, force: true });
        }
      }
    });
  } finally {
    await fsp.rm(local, { recursive: true, force: true });
  }
  return summary;
}
