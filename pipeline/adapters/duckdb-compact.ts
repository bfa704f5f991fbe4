/**
 * Compaction: a persist process writes one small file per table per batch (every second
 * while a crawl runs), so a day of crawling is thousands of files, and readers pay per
 * file. This merges the small files of each partition directory into files of up to
 * `targetBytes`, deduplicating on the way (the views' keys, earliest copy kept) and sorted
 * like the writer sorts.
 *
 * Crash-safe, and safe beside running writers:
 * - the merged file is written as `.tmp`, fsynced and renamed (like every output file),
 *   and only then are the merged inputs deleted: a crash in between leaves rows twice,
 *   which the deduplicating views hide, and the next compaction merges them again;
 * - only the files listed before merging are deleted, and files appear atomically, so a
 *   file a persist process writes meanwhile is never touched;
 * - files younger than `minAgeMs` are left alone, so a partition being written to is not
 *   rewritten every few seconds (they are merged by a later run).
 *
 * In bounded memory, for any crawl size: a merge's input is capped by its uncompressed size
 * (read from the Parquet footers) at a share of the memory limit, since DuckDB's sort of
 * pages does not spill to disk reliably; compact-budget.ts has the measurements.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { FILE_SORT_KEYS, TABLE_NAMES, TABLES, type ColumnDef, type TableName } from '../../schemas/output-tables.js';
import { compactSettings, DEFAULT_COMPACT_MEMORY_BYTES, makeSpillDir, mergeBudget, uncompressedSizes, type MergeBudget } from './compact-budget.js';
import { copyToParquetAtomically, fsyncPath } from './parquet/atomic-write.js';
import { sqlIdent, sqlString } from './sql-quote.js';
import { DEDUP_KEYS } from './duckdb-views.js';
import { listPartitions } from './output-layout.js';

export interface CompactOptions {
  /** merged files grow up to about this size (default 128 MiB, a common row-group-friendly size) */
  targetBytes?: number;
  /** files modified less than this long ago are left for a later run (default 60 s) */
  minAgeMs?: number;
  /** DuckDB memory limit in bytes (default 512 MB); each merge's input is bounded by a share of it */
  memoryLimitBytes?: number;
  /** test hook: runs after the merged file is in place and before its inputs are deleted */
  beforeRemove?: (merged: string, inputs: string[]) => Promise<void>;
}

export interface CompactSummary {
  /** partitions where files were merged */
  partitions: number;
  filesBefore: number;
  filesAfter: number;
  rowsBefore: number;
  rowsAfter: number;
  bytesBefore: number;
  bytesAfter: number;
}

export const DEFAULT_TARGET_BYTES = 128 * 1024 * 1024;
export const DEFAULT_MIN_AGE_MS = 60_000;

export interface Candidate {
  path: string;
  /** file size */
  bytes: number;
  /** uncompressed size of its rows (Parquet footer): what a merge holds in memory */
  rawBytes: number;
}

/**
 * Groups small files, in name (= write time) order, into runs of at most `limits.bytes` on
 * disk and `limits.rawBytes` uncompressed; a run of one file is no merge and is left out.
 */
export function groupForMerge(files: readonly Candidate[], limits: { bytes: number; rawBytes: number }): Candidate[][] {
  const groups: Candidate[][] = [];
  let current: Candidate[] = [];
  let size = 0;
  let raw = 0;
  for (const f of files) {
    if (current.length > 0 && (size + f.bytes > limits.bytes || raw + f.rawBytes > limits.rawBytes)) {
      groups.push(current);
      current = [];
      size = 0;
      raw = 0;
    }
    current.push(f);
    size += f.bytes;
    raw += f.rawBytes;
  }
  if (current.length > 0) groups.push(current);
  return groups.filter((g) => g.length > 1);
}

async function count(conn: DuckDBConnection, from: string): Promise<number> {
  const r = await conn.runAndReadAll(`SELECT count(*) FROM ${from}`);
  return Number(r.getRows()[0]![0]);
}

async function mergeFiles(
  conn: DuckDBConnection,
  table: TableName,
  inputs: Candidate[],
  dir: string,
  budget: MergeBudget,
): Promise<{ path: string; rows: number; rowsIn: number; bytes: number }> {
  const list = `[${inputs.map((f) => sqlString(f.path)).join(', ')}]`;
  const src = `read_parquet(${list}, union_by_name = true, hive_partitioning = false, filename = '_file', file_row_number = true)`;
  const desc = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`);
  const present = new Set(desc.getRows().map((r) => String(r[0])));
  const cols: readonly ColumnDef[] = TABLES[table];
  // every column of today's schema; one an older file lacks becomes a typed NULL
  const select = cols.map((c) => (present.has(c.name) ? `CAST(${sqlIdent(c.name)} AS ${c.type}) AS ${sqlIdent(c.name)}` : `CAST(NULL AS ${c.type}) AS ${sqlIdent(c.name)}`));
  const keys = DEDUP_KEYS[table].map(sqlIdent).join(', ');
  const order = FILE_SORT_KEYS[table].map(sqlIdent).join(', ');
  // named after its first input, so "earliest file first" (the views' tie-break) still holds
  const first = path.basename(inputs[0]!.path).replace(/-[0-9a-f]+\.parquet$/, '');
  const finalPath = path.join(dir, `${first}-${randomBytes(6).toString('hex')}.parquet`);
  const rowsIn = await count(conn, src);
  // Which copy of each key stays (the earliest file's) is decided on the keys and the rows'
  // places alone; the rows themselves are read again and semi-joined to that list, so the
  // sort is the one operator that holds whole rows (a window over them held them twice).
  const kept = `SELECT _file, file_row_number FROM ${src} QUALIFY row_number() OVER (PARTITION BY ${keys} ORDER BY _file, file_row_number) = 1`;
  await copyToParquetAtomically(
    conn,
    `(SELECT ${select.join(', ')} FROM ${src} SEMI JOIN (${kept}) AS kept USING (_file, file_row_number) ORDER BY ${order})`,
    finalPath,
    { rowGroupBytes: budget.rowGroupBytes },
  );
  const rows = await count(conn, `read_parquet(${sqlString(finalPath)})`);
  return { path: finalPath, rows, rowsIn, bytes: (await fsp.stat(finalPath)).size };
}

/** What the merges of one partition did, added to the summary. */
function addMerge(summary: CompactSummary, group: readonly Candidate[], merged: { rows: number; rowsIn: number; bytes: number }): void {
  summary.filesBefore += group.length;
  summary.filesAfter += 1;
  summary.rowsBefore += merged.rowsIn;
  summary.rowsAfter += merged.rows;
  summary.bytesBefore += group.reduce((n, f) => n + f.bytes, 0);
  summary.bytesAfter += merged.bytes;
}

/** A DuckDB for merging, within the memory limit, spilling under `spillParent`; closed after `run`. */
export async function withMergeDatabase<T>(
  spillParent: string,
  memoryLimitBytes: number,
  run: (merger: PartitionMerger) => Promise<T>,
): Promise<T> {
  const budget = mergeBudget(memoryLimitBytes);
  const spillDir = await makeSpillDir(spillParent);
  const instance = await DuckDBInstance.create(':memory:', compactSettings(memoryLimitBytes, spillDir));
  const conn = await instance.connect();
  try {
    return await run({
      async merge(table, files, dir, target, commit) {
        const raw = await uncompressedSizes(conn, files.map((f) => f.path));
        const candidates: Candidate[] = files
          .map((f) => ({ ...f, rawBytes: raw.get(f.path) ?? Number.POSITIVE_INFINITY }))
          .filter((c) => c.rawBytes < budget.inputBytes);
        const groups = groupForMerge(candidates, { bytes: target, rawBytes: budget.inputBytes });
        const merges: Array<{ group: Candidate[]; merged: { rows: number; rowsIn: number; bytes: number } }> = [];
        for (const group of groups) {
          const merged = await mergeFiles(conn, table, group, dir, budget);
          await commit(merged.path, group.map((f) => f.path));
          merges.push({ group, merged });
        }
        return merges;
      },
    });
  } finally {
    conn.closeSync();
    instance.closeSync();
    await fsp.rm(spillDir, { recursive: true, force: true });
  }
}

/**
 * Merges a partition's small files (local paths, in name order, already filtered by age and
 * size) into the local directory `dir`; `commit` makes each merged file the partition's and
 * removes its inputs.
 */
export interface PartitionMerger {
  merge(
    table: TableName,
    files: ReadonlyArray<{ path: string; bytes: number }>,
    dir: string,
    targetBytes: number,
    commit: (merged: string, inputs: string[]) => Promise<void>,
  ): Promise<Array<{ group: Candidate[]; merged: { rows: number; rowsIn: number; bytes: number } }>>;
}

/** Counts a partition's merges into the summary. */
export function summarize(summary: CompactSummary, merges: Awaited<ReturnType<PartitionMerger['merge']>>): void {
  if (merges.length > 0) summary.partitions += 1;
  for (const m of merges) addMerge(summary, m.group, m.merged);
}

export const emptySummary = (): CompactSummary => ({ partitions: 0, filesBefore: 0, filesAfter: 0, rowsBefore: 0, rowsAfter: 0, bytesBefore: 0, bytesAfter: 0 });

/** Merges the small files of every partition of a local output directory. */
export async function compactOutput(outDir: string, options: CompactOptions = {}): Promise<CompactSummary> {
  const target = options.targetBytes ?? DEFAULT_TARGET_BYTES;
  const minAge = options.minAgeMs ?? DEFAULT_MIN_AGE_MS;
  const summary = emptySummary();
  await withMergeDatabase(outDir, options.memoryLimitBytes ?? DEFAULT_COMPACT_MEMORY_BYTES, async (merger) => {
    const now = Date.now();
    for (const table of TABLE_NAMES) {
      for (const part of await listPartitions(outDir, table)) {
        const eligible: Array<{ path: string; bytes: number }> = [];
        for (const name of part.files) {
          const p = path.join(part.dir, name);
          const st = await fsp.stat(p).catch(() => null);
          if (!st || now - st.mtimeMs < minAge || st.size >= target) continue;
          eligible.push({ path: p, bytes: st.size });
        }
        const merges = await merger.merge(table, eligible, part.dir, target, async (merged, inputs) => {
          await options.beforeRemove?.(merged, inputs);
          for (const f of inputs) await fsp.rm(f, { force: true });
          await fsyncPath(part.dir, true);
        });
        summarize(summary, merges);
      }
    }
  });
  return summary;
}
