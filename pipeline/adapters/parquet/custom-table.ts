/**
 * The table of a custom stage (pipeline/custom-stage.ts): Parquet files in the same layout as
 * the crawl's own tables, `<out>/<table>/crawl=<id>/date=<day>/version=<n>/part-*.parquet`,
 * each written whole or not at all (atomic-write.ts), with `<out>/<table>/_table.json` naming
 * its columns, so `crawl sql` builds a typed view for it even before its first file.
 *
 * Every row carries where it came from: the input message's URL (`source_url`), its stream
 * sequence (`_seq`) and its place among that message's rows (`_row`). A redelivered message
 * writes the same keys again, and the views keep one copy; a replay writes a new version,
 * and the views show, for each message, the rows of the newest version that handled it.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { DuckDBTimestampValue, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import type { CustomColumnType } from '../../custom-stage.js';
import { acquireWriterInstance, RETURN_FREED_MEMORY } from '../duckdb-writer-instance.js';
import { partitionDir, utcDate } from '../output-layout.js';
import { sqlIdent } from '../sql-quote.js';
import { copyToParquetAtomically, removeTmpFiles } from './atomic-write.js';
import { BATCH_ZSTD_LEVEL, fileTimestamp } from './row-sink.js';

export const TABLE_FILE = '_table.json';

export interface CustomTableSchema {
  table: string;
  /** the stage that writes it */
  stage: string;
  columns: Record<string, CustomColumnType>;
}

/** One row as the stage made it, with where its message sat. */
export interface CustomRow {
  values: Record<string, unknown>;
  sourceUrl: string | null;
  seq: number;
  row: number;
}

const SYSTEM: ReadonlyArray<[string, CustomColumnType]> = [
  ['source_url', 'VARCHAR'],
  ['_seq', 'BIGINT'],
  ['_row', 'INTEGER'],
];

function append(a: DuckDBAppender, type: CustomColumnType, v: unknown): void {
  if (v === null || v === undefined) return a.appendNull();
  switch (type) {
    case 'VARCHAR':
      return a.appendVarchar(String(v));
    case 'BOOLEAN':
      return a.appendBoolean(Boolean(v));
    case 'DOUBLE':
      return a.appendDouble(Number(v));
    case 'INTEGER':
      return a.appendInteger(Number(v));
    case 'BIGINT':
      return a.appendBigInt(BigInt(Math.trunc(Number(v))));
    case 'TIMESTAMP':
      return a.appendTimestamp(new DuckDBTimestampValue(BigInt(Math.trunc(v instanceof Date ? v.getTime() : Number(v))) * 1000n));
  }
}

export interface CustomTableWriter {
  write(crawlId: string, rows: readonly CustomRow[]): Promise<void>;
  close(): Promise<void>;
}

let serial = 0;

/** Opens the table for writing (version 0 for the crawl, n for a replay), declaring its columns. */
export async function openCustomTable(outDir: string, schema: CustomTableSchema, opts: { version?: number; staleTmpAgeMs?: number } = {}): Promise<CustomTableWriter> {
  const tableDir = path.join(outDir, schema.table);
  await fsp.mkdir(tableDir, { recursive: true });
  await declareTable(tableDir, schema);
  await removeTmpFiles(tableDir, opts.staleTmpAgeMs ?? 10 * 60 * 1000);
  const { instance, release } = await acquireWriterInstance({ ...RETURN_FREED_MEMORY, threads: '1', memory_limit: '256MB' });
  let conn: DuckDBConnection;
  try {
    conn = await instance.connect();
  } catch (err) {
    release();
    throw err;
  }
  const columns: Array<[string, CustomColumnType]> = [...Object.entries(schema.columns), ...SYSTEM];
  const staging = `_custom_${schema.table}_${++serial}`;
  let chain: Promise<unknown> = Promise.resolve();
  let closed = false;

  async function writeNow(crawlId: string, rows: readonly CustomRow[]): Promise<void> {
    if (rows.length === 0) return;
    const dir = partitionDir(outDir, schema.table, { crawl: crawlId, date: utcDate(), version: opts.version ?? 0 });
    await fsp.mkdir(dir, { recursive: true });
    await conn.run(`CREATE OR REPLACE TABLE ${sqlIdent(staging)} (${columns.map(([n, t]) => `${sqlIdent(n)} ${t}`).join(', ')})`);
    try {
      const a = await conn.createAppender(staging);
      try {
        for (const r of rows) {
          for (const [name, type] of Object.entries(schema.columns)) append(a, type, r.values[name]);
          append(a, 'VARCHAR', r.sourceUrl);
          append(a, 'BIGINT', r.seq);
          append(a, 'INTEGER', r.row);
          a.endRow();
        }
      } finally {
        a.closeSync();
      }
      const file = path.join(dir, `part-${fileTimestamp()}-${randomBytes(6).toString('hex')}.parquet`);
      await copyToParquetAtomically(conn, sqlIdent(staging), file, { zstdLevel: BATCH_ZSTD_LEVEL });
    } finally {
      await conn.run(`DROP TABLE IF EXISTS ${sqlIdent(staging)}`).catch(() => undefined);
    }
  }

  return {
    write(crawlId, rows) {
      if (closed) return Promise.reject(new Error(`table ${schema.table} is closed`));
      const run = chain.then(() => writeNow(crawlId, rows));
      chain = run.catch(() => undefined);
      return run;
    },
    async close() {
      if (closed) return;
      closed = true;
      await chain;
      conn.closeSync();
      release();
    },
  };
}

/**
 * Writes `_table.json`; a table declared before with other columns is refused, since its
 * old files could not be read under one view (name the table anew, or move its directory away).
 */
async function declareTable(tableDir: string, schema: CustomTableSchema): Promise<void> {
  const file = path.join(tableDir, TABLE_FILE);
  const existing = await readTableSchema(tableDir);
  if (existing && JSON.stringify(existing.columns) !== JSON.stringify(schema.columns)) {
    throw new Error(
      `table ${schema.table} in ${path.dirname(tableDir)} has columns ${JSON.stringify(existing.columns)}, the stage declares ${JSON.stringify(schema.columns)}: give the table a new name, or move ${tableDir} away`,
    );
  }
  if (existing) return;
  const tmp = `${file}.${process.pid}.tmp`;
  await fsp.writeFile(tmp, JSON.stringify(schema, null, 2) + '\n');
  await fsp.rename(tmp, file);
}

export async function readTableSchema(tableDir: string): Promise<CustomTableSchema | null> {
  try {
    return JSON.parse(await fsp.readFile(path.join(tableDir, TABLE_FILE), 'utf8')) as CustomTableSchema;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`reading ${path.join(tableDir, TABLE_FILE)}: ${(err as Error).message}`);
  }
}

/** The custom tables of a local output directory (every `<table>/_table.json`). */
export async function listCustomTables(outDir: string): Promise<CustomTableSchema[]> {
  const entries = await fsp.readdir(outDir, { withFileTypes: true }).catch(() => []);
  const found: CustomTableSchema[] = [];
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const schema = await readTableSchema(path.join(outDir, e.name));
    if (schema) found.push(schema);
  }
  return found.sort((a, b) => a.table.localeCompare(b.table));
}
