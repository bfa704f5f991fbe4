/**
 * The row sink on Parquet files (ports/row-sink.ts): each `write(batch)` produces, for every non-empty
 * table and every crawl_id in it, exactly one file
 * `${outDir}/${table}/crawl=<id>/date=<today, UTC>/version=<n>/part-<utc time>-<random>.parquet`
 * (the layout is explained in output-layout.ts).
 *
 * Files appear atomically (atomic-write.ts); a crash leaves at most `.tmp` files, which
 * the next `open()` deletes.
 *
 * One connection per ParquetOutput, on the process's shared writer instance
 * (duckdb-writer-instance.ts); rows are
 * checked and sorted in JS (row-values.ts), staged in a plain table through
 * the Appender, then `COPY stage TO '…tmp' (FORMAT PARQUET, COMPRESSION ZSTD)`.
 *
 * For an `s3://bucket/prefix` output (`store` given) the file is written the same way into
 * a local staging directory and then uploaded as one object under the same relative key:
 * an object appears only once its upload completes, so a reader never sees part of one.
 *
 * Stages write rows only through the row sink port; this is its adapter.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ObjectStore } from '../../../ports/object-store.js';
import type { RowSink } from '../../../ports/row-sink.js';
import { TABLE_NAMES, TABLES, type ColumnDef, type OutputBatch, type TableName } from '../../../schemas/output-tables.js';
import { acquireWriterInstance, RETURN_FREED_MEMORY } from '../duckdb-writer-instance.js';
import { partitionDir, utcDate } from '../output-layout.js';
import { sqlIdent } from '../sql-quote.js';
import { makeStagingDir } from '../staging-dir.js';
import { copyToParquetAtomically, removeTmpFiles } from './atomic-write.js';
import { appendValue, byCrawl, fileValues, type Appendable } from './row-values.js';

export type { OutputBatch } from '../../../schemas/output-tables.js';
export { OutputRowError } from './row-values.js';

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

export interface ParquetOutput extends RowSink<Partial<OutputBatch>> {
  readonly outDir: string;
  write(batch: Partial<OutputBatch>): Promise<WrittenFiles>;
  close(): Promise<void>;
}

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

/**
 * zstd level of the files a writer makes per batch. They are small and meant to be merged
 * (`crawl compact`, and `crawl run --until-idle` at its end, write at DuckDB's default 3), so
 * they trade size for CPU: on the text of the real pages of the public article benchmark,
 * level 1 takes clearly less CPU than 3 for a slightly larger file
 * (docs/performance.md#warc-gzip-inline-at-level-3).
 */
export const BATCH_ZSTD_LEVEL = 1;

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
      const values = fileValues(table, rows);
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
