/**
 * Parquet output writer: each `write(batch)` produces, for every non-empty
 * table and every crawl_id in it, exactly one file
 * `${outDir}/${table}/crawl=<id>/date=<today, UTC>/version=<n>/part-<utc time>-<random>.parquet`
 * (the layout is explained in output-layout.ts).
 *
 * Files appear atomically: DuckDB writes `<final>.parquet.tmp` in the same
 * directory, the file is fsynced, renamed to its final name, and the directory
 * is fsynced. A crash leaves at most `.tmp` files, which readers never match
 * (they glob `*.parquet`) and which the next `open()` deletes.
 *
 * One connection per ParquetOutput, on the process's shared writer instance
 * (duckdb-writer-instance.ts); rows are
 * sorted in JS (by url, see FILE_SORT_KEYS), staged in a plain table through
 * the Appender, then `COPY stage TO '…tmp' (FORMAT PARQUET, COMPRESSION ZSTD)`.
 *
 * For an `s3://bucket/prefix` output (`store` given) the file is written the same way into
 * a local staging directory and then uploaded as one object under the same relative key:
 * an object appears only once its upload completes, so a reader never sees part of one.
 *
 * Stages write Parquet only through this module.
 */
import { sqlIdent, sqlString } from './sql-quote.js';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { DuckDBTimestampValue } from '@duckdb/node-api';
import { acquireWriterInstance } from './duckdb-writer-instance.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { makeStagingDir } from './staging-dir.js';
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import {
  FILE_SORT_KEYS,
  TABLE_NAMES,
  TABLES,
  type ColumnDef,
  type OutputBatch,
  type TableName,
} from '../../schemas/output-tables.js';
import { partitionDir, utcDate } from './output-layout.js';

export type { OutputBatch } from '../../schemas/output-tables.js';

export interface WrittenFile {
  /** absolute (or outDir-relative, as given) path of the final .parquet file */
  path: string;
  rows: number;
  bytes: number;
}

/**
 * Files written by one `write` call; tables with no rows are absent. A batch holding rows
 * of several crawl ids writes one file per crawl id: `more` lists the files after the first.
 */
export type WrittenFiles = Partial<Record<TableName, WrittenFile & { more?: WrittenFile[] }>>;

export interface ParquetOutputOptions {
  /**
   * `open()` deletes leftover `*.tmp` files in the table directories. By
   * default every one is deleted (one writer per output directory). When
   * several processes share an output directory set this to only delete tmp
   * files older than this many ms, so a live writer's tmp file survives.
   */
  staleTmpAgeMs?: number;
  /** DuckDB `threads` setting for the writer instance (default: DuckDB's). */
  threads?: number;
  /** DuckDB `memory_limit` of the writer instance, e.g. '256MB' (default: DuckDB's, 80% of RAM). */
  memoryLimit?: string;
  /** output version the files go to: 0 for the crawl, n for the n-th replay */
  version?: number;
  /** write to this object store (outDir is then its URL) instead of the local directory */
  store?: ObjectStore;
}

export interface ParquetOutput {
  readonly outDir: string;
  write(batch: Partial<OutputBatch>): Promise<WrittenFiles>;
  close(): Promise<void>;
}

/** A row had a value that does not fit its column. Nothing of the batch was written. */
export class OutputRowError extends Error {
  constructor(
    readonly table: TableName,
    readonly rowIndex: number,
    readonly column: string,
    message: string,
  ) {
    super(`${table}[${rowIndex}].${column}: ${message}`);
    this.name = 'OutputRowError';
  }
}

/**
 * DuckDB's allocator keeps what a batch used (while DuckDB itself reports 0 bytes in use)
 * unless its background threads purge it: with these settings an instance is back to its
 * starting size within seconds (docs/performance.md#one-duckdb-instance-per-process).
 */
export const RETURN_FREED_MEMORY: Readonly<Record<string, string>> = { allocator_background_threads: 'true', allocator_flush_threshold: '32MB' };

/** Writers share their DuckDB instance, so each stages its rows in tables of its own. */
let writerSerial = 0;
const stagingTable = (t: TableName, writer: number): string => `_stage_${t}_${writer}`;

function createTableSql(name: string, cols: readonly ColumnDef[]): string {
  return `CREATE OR REPLACE TABLE ${sqlIdent(name)} (${cols.map((c) => `${sqlIdent(c.name)} ${c.type}`).join(', ')})`;
}

/** UTC time as 20240131T235959123Z: sortable, filename-safe. */
export function fileTimestamp(d = new Date()): string {
  return d.toISOString().replace(/[-:.]/g, '');
}

const INT_RANGE: Record<'SMALLINT' | 'INTEGER', [number, number]> = {
  SMALLINT: [-32768, 32767],
  INTEGER: [-2147483648, 2147483647],
};

type Appendable = null | string | boolean | number | bigint | DuckDBTimestampValue;

/** Validates and converts one value; throws a message string on bad input. */
function convertValue(c: ColumnDef, v: unknown): Appendable {
  if (v === null || v === undefined) {
    if (!c.nullable) throw new Error('is required (got ' + String(v) + ')');
    return null;
  }
  switch (c.type) {
    case 'VARCHAR':
      if (typeof v !== 'string') throw new Error(`expected string, got ${typeof v}`);
      return v;
    case 'BOOLEAN':
      if (typeof v !== 'boolean') throw new Error(`expected boolean, got ${typeof v}`);
      return v;
    case 'SMALLINT':
    case 'INTEGER': {
      const [lo, hi] = INT_RANGE[c.type];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) {
        throw new Error(`expected ${c.type} integer in [${lo}, ${hi}], got ${String(v)}`);
      }
      return v;
    }
    case 'BIGINT':
      if (typeof v === 'bigint') return v;
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new Error(`expected safe integer, got ${String(v)}`);
      return BigInt(v);
    case 'TIMESTAMP':
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`expected epoch ms number, got ${String(v)}`);
      return new DuckDBTimestampValue(BigInt(Math.trunc(v)) * 1000n);
  }
}

function appendValue(a: DuckDBAppender, c: ColumnDef, v: Appendable): void {
  if (v === null) return a.appendNull();
  switch (c.type) {
    case 'VARCHAR':
      return a.appendVarchar(v as string);
    case 'BOOLEAN':
      return a.appendBoolean(v as boolean);
    case 'SMALLINT':
      return a.appendSmallInt(v as number);
    case 'INTEGER':
      return a.appendInteger(v as number);
    case 'BIGINT':
      return a.appendBigInt(v as bigint);
    case 'TIMESTAMP':
      return a.appendTimestamp(v as DuckDBTimestampValue);
  }
}

/** Total order used inside a file: VARCHAR by UTF-8 bytes (= code points, as DuckDB orders), numbers numerically, NULLs last. */
function compareValues(a: Appendable, b: Appendable): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
  if (a instanceof DuckDBTimestampValue && b instanceof DuckDBTimestampValue) return a.micros < b.micros ? -1 : a.micros > b.micros ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return 0;
}

function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 code-unit order differs from code-point order only when a surrogate meets U+E000..U+FFFF.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Sorts rows in JS (cheap) instead of `ORDER BY` in the COPY (a DuckDB sort
 * materializes every 20 KB text payload); DuckDB keeps insertion order when
 * writing (preserve_insertion_order, on by default and set explicitly).
 */
function sortForFile(table: TableName, values: Appendable[][]): void {
  const cols: readonly ColumnDef[] = TABLES[table];
  const idx = FILE_SORT_KEYS[table].map((k) => cols.findIndex((c) => c.name === k));
  values.sort((r1, r2) => {
    for (const i of idx) {
      const c = compareValues(r1[i]!, r2[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
}

/**
 * zstd level of the files a writer makes per batch. They are small and meant to be merged
 * (`crawl compact`, and `crawl run --until-idle` at its end, write at DuckDB's default 3), so
 * they trade size for CPU: on the text of the real pages of the public article benchmark,
 * level 1 takes clearly less CPU than 3 for a slightly larger file
 * (docs/performance.md#warc-gzip-inline-at-level-3).
 */
export const BATCH_ZSTD_LEVEL = 1;

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

/** A table without a crawl_id column (none today) goes to the partition `crawl=unknown`. */
const NO_CRAWL = 'unknown';

/** Rows grouped by their crawl_id, keeping the sorted order within each group. */
function byCrawl(table: TableName, values: Appendable[][]): Map<string, Appendable[][]> {
  const i = (TABLES[table] as readonly ColumnDef[]).findIndex((c) => c.name === 'crawl_id');
  const groups = new Map<string, Appendable[][]>();
  for (const row of values) {
    const crawl = i >= 0 && typeof row[i] === 'string' ? (row[i] as string) : NO_CRAWL;
    let g = groups.get(crawl);
    if (!g) groups.set(crawl, (g = []));
    g.push(row);
  }
  return groups;
}

class ParquetOutputImpl implements ParquetOutput {
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly serial = ++writerSerial;

  constructor(
    readonly outDir: string,
    private readonly releaseInstance: () => void,
    private readonly conn: DuckDBConnection,
    private readonly version: number,
    private readonly remote: { store: ObjectStore; staging: string } | null,
  ) {}

  write(batch: Partial<OutputBatch>): Promise<WrittenFiles> {
    if (this.closed) return Promise.reject(new Error('ParquetOutput is closed'));
    const run = this.chain.then(() => this.writeNow(batch));
    this.chain = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    if (this.closed) return this.chain.then(() => undefined);
    this.closed = true;
    await this.chain;
    this.conn.closeSync();
    this.releaseInstance();
    if (this.remote) await fsp.rm(this.remote.staging, { recursive: true, force: true });
  }

  private async writeNow(batch: Partial<OutputBatch>): Promise<WrittenFiles> {
    // Validate/convert everything first so a bad row writes nothing at all.
    const prepared: Array<{ table: TableName; values: Appendable[][] }> = [];
    for (const table of TABLE_NAMES) {
      const rows = (batch[table] ?? []) as unknown as ReadonlyArray<Record<string, unknown>>;
      if (rows.length === 0) continue;
      const cols: readonly ColumnDef[] = TABLES[table];
      const values: Appendable[][] = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const out: Appendable[] = new Array(cols.length);
        for (let j = 0; j < cols.length; j++) {
          const c = cols[j]!;
          try {
            out[j] = convertValue(c, row[c.name]);
          } catch (err) {
            throw new OutputRowError(table, i, c.name, (err as Error).message);
          }
        }
        values[i] = out;
      }
      sortForFile(table, values);
      prepared.push({ table, values });
    }

    const written: WrittenFiles = {};
    const date = utcDate();
    for (const { table, values } of prepared) {
      const files: WrittenFile[] = [];
      for (const [crawl, rows] of byCrawl(table, values)) {
        const key = { crawl, date, version: this.version };
        files.push(await this.writeTable(table, rows, partitionDir(this.remote ? this.remote.staging : this.outDir, table, key)));
      }
      written[table] = files.length > 1 ? { ...files[0]!, more: files.slice(1) } : files[0]!;
    }
    return written;
  }

  private async writeTable(table: TableName, values: Appendable[][], dir: string): Promise<WrittenFile> {
    const cols: readonly ColumnDef[] = TABLES[table];
    const stage = stagingTable(table, this.serial);
    await fsp.mkdir(dir, { recursive: true });
    const finalPath = path.join(dir, `part-${fileTimestamp()}-${randomBytes(6).toString('hex')}.parquet`);

    // A fresh staging table per file: dropping it returns its memory (DELETE
    // would leave deleted row groups around in an in-memory database).
    await this.conn.run(createTableSql(stage, cols));
    const appender = await this.conn.createAppender(stage);
    try {
      for (const row of values) {
        for (let j = 0; j < cols.length; j++) appendValue(appender, cols[j]!, row[j]!);
        appender.endRow();
      }
    } catch (err) {
      try {
        appender.clear();
        appender.closeSync();
      } catch {
        /* keep the original error */
      }
      throw err;
    }
    appender.closeSync(); // flushes

    try {
      // Rows were appended already sorted (sortForFile); insertion order is preserved.
      await copyToParquetAtomically(this.conn, sqlIdent(stage), finalPath, { zstdLevel: BATCH_ZSTD_LEVEL });
    } finally {
      await this.conn.run(`DROP TABLE IF EXISTS ${sqlIdent(stage)}`).catch(() => undefined);
    }
    const st = await fsp.stat(finalPath);
    if (!this.remote) return { path: finalPath, rows: values.length, bytes: st.size };
    const key = path.relative(this.remote.staging, finalPath).split(path.sep).join('/');
    try {
      await this.remote.store.putFile(key, finalPath);
    } finally {
      await fsp.rm(finalPath, { force: true });
    }
    return { path: this.remote.store.urlOf(key), rows: values.length, bytes: st.size };
  }
}

export class ParquetTableWriter {
  /**
   * Creates `${outDir}/<table>/` directories, deletes leftover `*.tmp` files
   * there (and in their partition directories), and opens an in-memory DuckDB used for writing.
   */
  static async open(outDir: string, options: ParquetOutputOptions = {}): Promise<ParquetOutput> {
    // a remote output's files are staged here, one writer each, and removed once uploaded
    const remote = options.store ? { store: options.store, staging: await makeStagingDir('parquet') } : null;
    for (const table of remote ? [] : TABLE_NAMES) {
      const dir = path.join(outDir, table);
      await fsp.mkdir(dir, { recursive: true });
      await removeTmpFiles(dir, options.staleTmpAgeMs ?? 0);
    }
    const dbOptions: Record<string, string> = { ...RETURN_FREED_MEMORY };
    if (options.threads !== undefined) dbOptions['threads'] = String(options.threads);
    if (options.memoryLimit !== undefined) dbOptions['memory_limit'] = options.memoryLimit;
    const { instance, release } = await acquireWriterInstance(dbOptions);
    let conn: DuckDBConnection | undefined;
    try {
      conn = await instance.connect();
      await conn.run('SET preserve_insertion_order = true');
    } catch (err) {
      conn?.closeSync();
      release();
      throw err;
    }
    return new ParquetOutputImpl(outDir, release, conn, options.version ?? 0, remote);
  }
}

/** Same as `ParquetTableWriter.open`. */
export function openParquetOutput(outDir: string, options?: ParquetOutputOptions): Promise<ParquetOutput> {
  return ParquetTableWriter.open(outDir, options);
}
