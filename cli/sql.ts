import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { formatResult, openOutputDatabase, type ResultFormat } from '../pipeline/adapters/duckdb-views.js';
import { UsageError } from './usage-error.js';

const FORMATS = ['table', 'csv', 'json'] as const;

/** `crawl sql [--out DIR] [--format F] "SQL"`: DuckDB with the views over the crawl's Parquet files; a prompt without SQL. */
export async function runSql(sql: string | undefined, o: { out: string; format: string }): Promise<number> {
  if (!(FORMATS as readonly string[]).includes(o.format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got "${o.format}"`);
  const outDir = path.resolve(o.out);
  if (!existsSync(outDir)) throw new UsageError(`no crawl output at ${outDir} (use --out DIR)`);
  const db = await openOutputDatabase(outDir);
  try {
    if (sql !== undefined) {
      try {
        process.stdout.write(formatResult(await db.run(sql), o.format as ResultFormat) + '\n');
      } catch (err) {
        process.stderr.write(`sql error: ${(err as Error).message.split('\n')[0]}\n`);
        return 1;
      }
      return 0;
    }
    const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'crawl> ' });
    process.stdout.write('views: pages, links, fetch_log. End a statement with ";", quit with .quit or Ctrl-D.\n');
    rl.prompt();
    let buffer = '';
    for await (const line of rl) {
      if (line.trim() === '.quit' || line.trim() === '.exit') break;
      buffer += line + '\n';
      if (buffer.trim().endsWith(';')) {
        try {
          process.stdout.write(formatResult(await db.run(buffer), o.format as ResultFormat) + '\n');
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
