/**
 * What one compaction may hold in memory, and where DuckDB may spill when it needs more.
 *
 * A merge is one `COPY (… ORDER BY …) TO file.parquet`. DuckDB holds the sort's rows, and
 * the writer holds the sorted batches of a row group plus that row group encoded: about
 * three times the merge's input, plus some 30 MB of its own. The sort of rows carrying
 * large strings (pages.text and text_full, ~45 KB a page) does not spill to disk reliably,
 * and a row group is at least 2,048 rows, so the bound has to be on the merge's input: a
 * sixth of the memory limit, which the measurements in docs/performance.md#compaction-memory (from
 * scripts/compact-memory-repro.ts) show keeps clear of failing. The input is measured as the
 * rows take in memory (`uncompressedSizes`), not as file size: zstd shrinks text about
 * threefold and a dictionary far more, so a bound on file size alone lets far more into one sort.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlIdent, sqlString } from './sql-quote.js';
import { processAlive } from '../process-alive.js';
import { RETURN_FREED_MEMORY } from './duckdb-writer-instance.js';

/** 512 MB, as DuckDB counts (488 MiB): the compaction's limit unless told otherwise. */
export const DEFAULT_COMPACT_MEMORY_BYTES = 512_000_000;

export interface MergeBudget {
  /** uncompressed bytes of one merge's input files, together */
  inputBytes: number;
  /** uncompressed bytes of one row group of the merged file (the writer buffers a whole one) */
  rowGroupBytes: number;
}

export function mergeBudget(memoryLimitBytes: number): MergeBudget {
  // the row group cap matters for mid-sized rows (a few KB): large ones hit the 2,048-row floor
  return { inputBytes: Math.floor(memoryLimitBytes / 6), rowGroupBytes: Math.floor(memoryLimitBytes / 16) };
}

/** DuckDB settings of the compaction's instance. */
export function compactSettings(memoryLimitBytes: number, spillDir: string): Record<string, string> {
  return {
    // one thread: each thread holds its own sort run and row group
    threads: '1',
    memory_limit: `${memoryLimitBytes}B`,
    // DuckDB's advice for Parquet exports that run out of memory; the merge's ORDER BY still
    // fixes the order of the rows written, and it makes ROW_GROUP_SIZE_BYTES apply
    preserve_insertion_order: 'false',
    // not DuckDB's default (`.tmp` in the working directory, wherever that is): beside the data
    temp_directory: spillDir,
    // give back what a merge used once it is done, not at exit (see duckdb-writer-instance.ts)
    ...RETURN_FREED_MEMORY,
  };
}

/**
 * What each file's rows take once read: the uncompressed size of its row groups from the
 * Parquet footers, plus, for every string column chunk stored with a dictionary, the bytes of
 * its values. A footer counts such a chunk as its dictionary and the indices into it, but a
 * sort holds each row's own copy of the string: 10,000 pages sharing one 2 KB text are 40 KB
 * in the footer and 20 MB in the sort. Only those columns are read; plain-encoded ones (most
 * page text) are sized by their footer.
 */
export async function uncompressedSizes(conn: DuckDBConnection, files: readonly string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  if (files.length === 0) return sizes;
  const r = await conn.runAndReadAll(
    `SELECT file_name, path_in_schema, type = 'BYTE_ARRAY' AND encodings LIKE '%DICTIONARY%', sum(total_uncompressed_size)
       FROM parquet_metadata([${files.map(sqlString).join(', ')}]) GROUP BY ALL`,
  );
  const dictStrings = new Map<string, Set<string>>();
  for (const [name, column, dictString, bytes] of r.getRows()) {
    const file = String(name);
    sizes.set(file, (sizes.get(file) ?? 0) + Number(bytes));
    // a nested column's path has several parts; none of the output tables has one
    if (dictString === true && !/[.,]/.test(String(column))) {
      if (!dictStrings.has(file)) dictStrings.set(file, new Set());
      dictStrings.get(file)!.add(String(column));
    }
  }
  if (dictStrings.size === 0) return sizes;
  const columns = [...new Set([...dictStrings.values()].flatMap((s) => [...s]))];
  const decoded = await conn.runAndReadAll(
    `SELECT _file, ${columns.map((c) => `coalesce(sum(strlen(CAST(${sqlIdent(c)} AS VARCHAR))), 0)`).join(', ')}
       FROM read_parquet([${[...dictStrings.keys()].map(sqlString).join(', ')}], union_by_name = true, hive_partitioning = false, filename = '_file')
       GROUP BY _file`,
  );
  for (const [name, ...lengths] of decoded.getRows()) {
    const file = String(name);
    // only the columns stored with a dictionary in this file: a plain one is in its footer size already
    // (one plain in some row groups and not in others is counted twice there: smaller merges, still safe)
    const inFile = dictStrings.get(file) ?? new Set<string>();
    const extra = columns.reduce((n, c, i) => n + (inFile.has(c) ? Number(lengths[i]) : 0), 0);
    sizes.set(file, (sizes.get(file) ?? 0) + extra);
  }
  return sizes;
}

const SPILL_PREFIX = '.compact-spill-';

/**
 * A fresh spill directory `<outDir>/.compact-spill-<host>-<pid>-<random>` (readers never
 * look at dot names). Spill directories of compactions that died on this host are removed
 * first: DuckDB removes its files only when it closes.
 */
export async function makeSpillDir(outDir: string): Promise<string> {
  const host = os.hostname().replace(/[^A-Za-z0-9.]/g, '_');
  for (const name of await fsp.readdir(outDir).catch(() => [] as string[])) {
    const m = name.startsWith(SPILL_PREFIX) ? /^(.*)-(\d+)-[0-9a-f]+$/.exec(name.slice(SPILL_PREFIX.length)) : null;
    if (m && m[1] === host && !processAlive(Number(m[2]))) await fsp.rm(path.join(outDir, name), { recursive: true, force: true });
  }
  const dir = path.join(outDir, `${SPILL_PREFIX}${host}-${process.pid}-${randomBytes(4).toString('hex')}`);
  await fsp.mkdir(dir, { recursive: true });
  return dir;
}
