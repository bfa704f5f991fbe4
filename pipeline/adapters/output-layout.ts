/**
 * Where output files live: hive-partitioned directories per table,
 *
 *   <out>/<table>/crawl=<crawl_id>/date=<yyyy-mm-dd>/version=<n>/part-<utc time>-<random>.parquet
 *
 * - `crawl` is the rows' crawl_id, so one crawl's files can be read, copied or deleted alone;
 * - `date` is the UTC day the file was written (not the fetch time: a batch then stays one
 *   file, and a day's partition stops growing once the day is over, which is what lets
 *   compaction treat older days as finished);
 * - `version` is 0 for the crawl itself and n+1 for the n+1-th `crawl replay` of it.
 *
 * The version directory is always written (also for 0), because DuckDB's hive partitioning
 * wants every file at the same depth. Files of the first release's flat layout
 * (`<out>/<table>/part-*.parquet`) are still read, as version 0 (see duckdb-views.ts).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

/** A path or URL prefix of the output: a local directory or `s3://bucket/prefix`. */
export function isRemoteOutput(out: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(out);
}

/** Joins path parts for a local directory or a URL (`s3://…` keeps its forward slashes). */
export function outputPath(out: string, ...parts: string[]): string {
  if (isRemoteOutput(out)) return [out.replace(/\/+$/, ''), ...parts].join('/');
  return path.join(out, ...parts);
}

export interface PartitionKey {
  crawl: string;
  /** yyyy-mm-dd, UTC */
  date: string;
  version: number;
}

/** Hive partition values must not contain a path separator; crawl ids are already restricted to [A-Za-z0-9_.-]. */
function safeValue(v: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(v) || v === '.' || v === '..') throw new Error(`not a valid partition value: "${v}"`);
  return v;
}

export function partitionDir(out: string, table: string, key: PartitionKey): string {
  return outputPath(out, table, `crawl=${safeValue(key.crawl)}`, `date=${safeValue(key.date)}`, `version=${key.version}`);
}

export const utcDate = (d = new Date()): string => d.toISOString().slice(0, 10);

/** The glob of every partitioned file of a table. */
export const partitionedGlob = (out: string, table: string): string => outputPath(out, table, 'crawl=*', 'date=*', 'version=*', '*.parquet');
/** The glob of files in the old flat layout. */
export const legacyGlob = (out: string, table: string): string => outputPath(out, table, '*.parquet');

/** DuckDB's types for the partition columns (otherwise a crawl id like "2024" would become a number). */
export const HIVE_TYPES = "{'crawl': VARCHAR, 'date': DATE, 'version': INTEGER}";

export interface PartitionFiles {
  table: string;
  key: PartitionKey;
  dir: string;
  /** file names (not paths) of complete `.parquet` files, sorted */
  files: string[];
}

async function subdirs(dir: string, prefix: string): Promise<string[]> {
  try {
    const entries = await fsp.readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && e.name.startsWith(prefix)).map((e) => e.name.slice(prefix.length)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** Every partition directory of a table in a local output directory, with its files. */
export async function listPartitions(out: string, table: string): Promise<PartitionFiles[]> {
  const result: PartitionFiles[] = [];
  const tableDir = path.join(out, table);
  for (const crawl of await subdirs(tableDir, 'crawl=')) {
    for (const date of await subdirs(path.join(tableDir, `crawl=${crawl}`), 'date=')) {
      for (const v of await subdirs(path.join(tableDir, `crawl=${crawl}`, `date=${date}`), 'version=')) {
        if (!/^\d+$/.test(v)) continue;
        const key = { crawl, date, version: Number(v) };
        const dir = partitionDir(out, table, key);
        const files = (await fsp.readdir(dir)).filter((n) => n.endsWith('.parquet')).sort();
        result.push({ table, key, dir, files });
      }
    }
  }
  return result;
}

/** The highest output version (of one crawl, or of any) in any table, or -1 when there is no output. */
export async function newestVersion(out: string, tables: readonly string[], crawl?: string): Promise<number> {
  let newest = -1;
  for (const table of tables) {
    for (const p of await listPartitions(out, table)) {
      if ((crawl === undefined || p.key.crawl === crawl) && p.files.length > 0) newest = Math.max(newest, p.key.version);
    }
  }
  // files of the old flat layout count as version 0
  if (newest < 0) {
    for (const table of tables) {
      const names = await fsp.readdir(path.join(out, table)).catch(() => [] as string[]);
      if (names.some((n) => n.endsWith('.parquet'))) return 0;
    }
  }
  return newest;
}
