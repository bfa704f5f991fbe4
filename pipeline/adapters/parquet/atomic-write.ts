/**
 * Parquet files that appear whole or not at all, for the row sink and for compaction: written
 * under a `.tmp` name in their final directory, fsynced, renamed, the directory fsynced. A
 * crash leaves at most `.tmp` files, which readers never match (they glob `*.parquet`) and
 * which a writer's start removes.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlString } from '../sql-quote.js';

/**
 * `COPY source TO finalPath` so that the file appears whole or not at all: written as
 * `<finalPath>.tmp`, fsynced, renamed, and its directory fsynced. A failure removes the tmp file.
 * `source` is a table name or a parenthesised query. `rowGroupBytes` caps the uncompressed
 * size of a row group, which DuckDB buffers whole (it applies only with
 * preserve_insertion_order off, and a row group still holds at least 2,048 rows).
 */
export async function copyToParquetAtomically(
  conn: DuckDBConnection,
  source: string,
  finalPath: string,
  opts: { rowGroupBytes?: number; zstdLevel?: number } = {},
): Promise<void> {
  const tmpPath = `${finalPath}.tmp`;
  const rowGroup = opts.rowGroupBytes !== undefined ? `, ROW_GROUP_SIZE_BYTES ${Math.floor(opts.rowGroupBytes)}` : '';
  const level = opts.zstdLevel !== undefined ? `, COMPRESSION_LEVEL ${Math.floor(opts.zstdLevel)}` : '';
  try {
    await conn.run(`COPY ${source} TO ${sqlString(tmpPath)} (FORMAT PARQUET, COMPRESSION ZSTD${rowGroup}${level})`);
    await fsyncPath(tmpPath, false);
    await fsp.rename(tmpPath, finalPath);
    await fsyncPath(path.dirname(finalPath), true);
  } catch (err) {
    await fsp.rm(tmpPath, { force: true }).catch(() => undefined);
    throw err;
  }
}

export async function fsyncPath(p: string, isDir: boolean): Promise<void> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(p, 'r');
    await fh.sync();
  } catch (err) {
    // Some platforms/filesystems refuse fsync on directories; the rename is still atomic.
    const code = (err as NodeJS.ErrnoException).code;
    if (!(isDir && (code === 'EISDIR' || code === 'EINVAL' || code === 'EPERM' || code === 'EBADF'))) throw err;
  } finally {
    await fh?.close();
  }
}

/** Deletes leftover `*.tmp` files in `dir` and its partition directories; returns how many were removed. */
export async function removeTmpFiles(dir: string, minAgeMs: number): Promise<number> {
  let removed = 0;
  const now = Date.now();
  for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
    const name = entry.name;
    if (entry.isDirectory()) {
      removed += await removeTmpFiles(path.join(dir, name), minAgeMs);
      continue;
    }
    if (!name.endsWith('.tmp')) continue;
    const p = path.join(dir, name);
    try {
      if (minAgeMs > 0) {
        const st = await fsp.stat(p);
        if (now - st.mtimeMs < minAgeMs) continue;
      }
      await fsp.rm(p, { force: true });
      removed++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return removed;
}

