import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { openOutputDatabase, type OutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { formatResult, type ResultFormat } from './table-format.js';
import { sqlString } from '../pipeline/adapters/sql-quote.js';
import { isRemoteOutput } from '../pipeline/adapters/output-layout.js';
import { s3SetupStatements } from '../pipeline/adapters/s3-settings.js';
import { TABLE_NAMES } from '../schemas/output-tables.js';
import { UsageError } from './usage-error.js';
import { resolveOut } from './output-location.js';

const FORMATS = ['table', 'csv', 'json', 'parquet'] as const;

export interface SqlFlags {
  out: string;
  format: string;
  /** with --format parquet: the file to write */
  output?: string;
  /** show the output as of this version (older replays) */
  version?: number;
  /** for an s3:// output: download DuckDB's httpfs extension first (from DuckDB's extension repository) */
  installHttpfs?: boolean;
}

/** The views, for the prompt's greeting: driven by the table list, so a new table shows up by itself. */
export function viewNames(): string {
  return [...TABLE_NAMES, 'hosts', 'urls'].join(', ') + ` (every version: ${TABLE_NAMES.map((t) => t + '_all').join(', ')})`;
}

/**
 * What to do when DuckDB cannot load httpfs: download it (`--install-httpfs`, where DuckDB's
 * extension repository can be reached), copy it from a machine that has it, or read a local
 * copy of the output.
 */
export function httpfsMissing(outDir: string, message: string): string {
  const m = /\/(v\d+\.\d+\.\d+)\/([a-z0-9_]+)\/httpfs/i.exec(message);
  const where = m ? `~/.duckdb/extensions/${m[1]}/${m[2]}/httpfs.duckdb_extension` : "DuckDB's extension directory (~/.duckdb/extensions/<version>/<platform>/)";
  return (
    `crawl: reading ${outDir} needs DuckDB's httpfs extension, which is not installed here (${message}).\n` +
    `  Install it once: crawl sql --install-httpfs --out ${outDir} ... (downloads it from DuckDB's extension repository);\n` +
    `  without internet access, copy ${where} from a machine that has it to the same path here;\n` +
    `  or query a local copy: aws s3 sync ${outDir} DIR, then crawl sql --out DIR\n`
  );
}

/** Runs one statement; with --format parquet its result goes to a Parquet file through COPY ... TO. */
async function runOne(db: OutputDatabase, sql: string, o: SqlFlags): Promise<string> {
  if (o.format === 'parquet') {
    const body = sql.trim().replace(/;\s*$/, '');
    const res = await db.run(`COPY (${body}) TO ${sqlString(path.resolve(o.output!))} (FORMAT PARQUET, COMPRESSION ZSTD)`);
    const rows = res.rows[0]?.[0] ?? 0;
    return `wrote ${String(rows)} rows to ${path.resolve(o.output!)}\n`;
  }
  return formatResult(await db.run(sql), o.format as ResultFormat) + '\n';
}

/** `crawl sql [--out DIR|s3://…] [--format F] [--version N] "SQL"`: DuckDB with the views over the crawl's Parquet files; a prompt without SQL. */
export async function runSql(sql: string | undefined, o: SqlFlags): Promise<number> {
  if (!(FORMATS as readonly string[]).includes(o.format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got "${o.format}"`);
  if (o.format === 'parquet' && !o.output) throw new UsageError('--format parquet writes a file: give --output FILE');
  if (o.output && o.format !== 'parquet') throw new UsageError('--output FILE goes with --format parquet');
  if (o.format === 'parquet' && sql === undefined) throw new UsageError('--format parquet needs the SQL as an argument');
  const outDir = resolveOut(o.out, 'sql', true);
  const remote = isRemoteOutput(outDir);
  if (!remote && !existsSync(outDir)) throw new UsageError(`no crawl output at ${outDir} (use --out DIR)`);
  let db: OutputDatabase;
  try {
    db = await openOutputDatabase(outDir, { version: o.version, setup: remote ? s3SetupStatements(process.env, { install: o.installHttpfs === true }) : [] });
  } catch (err) {
    const message = (err as Error).message.split('\n')[0]!;
    process.stderr.write(remote && /httpfs/i.test(message) ? httpfsMissing(outDir, message) : `crawl: reading ${outDir}: ${message}\n`);
    return 1;
  }
  try {
    if (sql !== undefined) {
      try {
        process.stdout.write(await runOne(db, sql, o));
      } catch (err) {
        process.stderr.write(`sql error: ${(err as Error).message.split('\n')[0]}\n`);
        return 1;
      }
      return 0;
    }
    const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'crawl> ' });
    process.stdout.write(`views: ${viewNames()}. End a statement with ";", quit with .quit or Ctrl-D.\n`);
    rl.prompt();
    let buffer = '';
    for await (const line of rl) {
      if (line.trim() === '.quit' || line.trim() === '.exit') break;
      buffer += line + '\n';
      if (buffer.trim().endsWith(';')) {
        try {
          process.stdout.write(await runOne(db, buffer, o));
        } catch (err) {
          process.stdout.write(`sql error: ${(err as Error).message.split('\n')[0]}\n`);
        }
        buffer = '';
      }
      rl.prompt();
    }
    rl.close();
    return 0;
  } finally {
    await db.close();
  }
}
