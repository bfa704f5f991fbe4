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
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { FILE_SORT_KEYS, TABLE_NAMES, TABLES, type ColumnDef, type TableName } from '../../schemas/output-tables.js';
import { copyToParquetAtomically, fsyncPath, sqlIdent, sqlString } from './duckdb-output.js';
import { DEDUP_KEYS } from './duckdb-views.js';
import { listPartitions } from './output-layout.js';

export interface CompactOptions {
  /** merged files grow up to about this size (default 128 MiB, a common row-group-friendly size) */
  targetBytes?: number;
  /** files modified less than this long ago are left for a later run (default 60 s) */
  minAgeMs?: number;
  /** DuckDB memory limit; sorting spills to a temp directory beyond it */
  memoryLimit?: string;
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

interface Candidate {
  path: string;
  bytes: number;
}

/** Groups small files, in name (= write time) order, into runs of at most `target` bytes. */
export function groupForMerge(files: readonly Candidate[], target: number): Candidate[][] {
  const groups: Candidate[][] = [];
  let current: Candidate[] = [];
  let size = 0;
  for (const f of files) {
    if (current.length > 0 && size + f.bytes > target) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(f);
    size += f.bytes;
  }
  if (current.length > 0) groups.push(current);
  return groups.filter((g) => g.length > 1);
}

async function count(conn: DuckDBConnection, from: string): Promise<number> {
  const r = await conn.runAndReadAll(`SELECT count(*) FROM ${from}`);
  return Number(r.getRows()[0]![0]);
}

async function mergeFiles(conn: DuckDBConnection, table: TableName, inputs: Candidate[], dir: string): Promise<{ path: string; rows: number; rowsIn: number; bytes: number }> {
  const list = `[${inputs.map((f) => sqlString(f.path)).join(', ')}]`;
  const src = `read_parquet(${list}, union_by_name = true, hive_partitioning = false, filename = '_file')`;
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
  await copyToParquetAtomically(
    conn,
    `(SELECT ${select.join(', ')} FROM ${src} QUALIFY row_number() OVER (PARTITION BY ${keys} ORDER BY _file) = 1 ORDER BY ${order})`,
    finalPath,
  );
  const rows = await count(conn, `read_parquet(${sqlString(finalPath)})`);
  return { path: finalPath, rows, rowsIn, bytes: (await fsp.stat(finalPath)).size };
}

/** Merges the small files of every partition of a local output directory. */
export async function compactOutput(outDir: string, options: CompactOptions = {}): Promise<CompactSummary> {
  const target = options.targetBytes ?? DEFAULT_TARGET_BYTES;
  const minAge = options.minAgeMs ?? DEFAULT_MIN_AGE_MS;
  const summary: CompactSummary = { partitions: 0, filesBefore: 0, filesAfter: 0, rowsBefore: 0, rowsAfter: 0, bytesBefore: 0, bytesAfter: 0 };
  const instance = await DuckDBInstance.create(':memory:', {
    threads: '1',
    memory_limit: options.memoryLimit ?? '512MB',
    preserve_insertion_order: 'true',
  });
  const conn = await instance.connect();
  try {
    const now = Date.now();
    for (const table of TABLE_NAMES) {
      for (const part of await listPartitions(outDir, table)) {
        const candidates: Candidate[] = [];
        for (const name of part.files) {
          const p = path.join(part.dir, name);
          const st = await fsp.stat(p).catch(() => null);
          if (!st || now - st.mtimeMs < minAge || st.size >= target) continue;
          candidates.push({ path: p, bytes: st.size });
        }
        const groups = groupForMerge(candidates, target);
        if (groups.length > 0) summary.partitions += 1;
        for (const group of groups) {
          const merged = await mergeFiles(conn, table, group, part.dir);
          await options.beforeRemove?.(merged.path, group.map((f) => f.path));
          for (const f of group) await fsp.rm(f.path, { force: true });
          await fsyncPath(part.dir, true);
          summary.filesBefore += group.length;
          summary.filesAfter += 1;
          summary.rowsBefore += merged.rowsIn;
          summary.rowsAfter += merged.rows;
          summary.bytesBefore += group.reduce((n, f) => n + f.bytes, 0);
          summary.bytesAfter += merged.bytes;
        }
      }
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  return summary;
}
