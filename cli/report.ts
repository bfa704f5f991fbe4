import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { crawlReport } from '../app/report/index.js';
import { isRemoteOutput } from '../pipeline/adapters/output-layout.js';
import { s3SetupStatements } from '../pipeline/adapters/s3-settings.js';
import { formatBytes, formatDuration } from '../app/report/format.js';
import { httpfsMissing } from './sql.js';
import { resolveOut } from './output-location.js';
import { UsageError } from './usage-error.js';

const counted = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

export interface ReportFlags {
  out: string;
  /** the HTML file to write (default: report.html in --out) */
  file?: string;
  crawlId?: string;
  installHttpfs?: boolean;
}

/** `crawl report [--out DIR|s3://…] [--file PATH] [--crawl-id ID]`: the crawl's report as one HTML file. */
export async function runReport(o: ReportFlags): Promise<number> {
  const outDir = resolveOut(o.out, 'report', true);
  const remote = isRemoteOutput(outDir);
  if (!remote && !existsSync(outDir)) throw new UsageError(`no crawl output at ${outDir} (use --out DIR)`);
  // the report of a bucket is written here, not into the bucket
  if (remote && !o.file) throw new UsageError(`--out ${outDir} is in object storage: give --file PATH for the report`);
  const file = path.resolve(o.file ?? path.join(outDir, 'report.html'));
  if (!existsSync(path.dirname(file))) throw new UsageError(`--file ${file}: no directory ${path.dirname(file)}`);

  let report: Awaited<ReturnType<typeof crawlReport>>;
  try {
    report = await crawlReport(outDir, { crawlId: o.crawlId, setup: remote ? s3SetupStatements(process.env, { install: o.installHttpfs === true }) : [] });
  } catch (err) {
    const message = (err as Error).message.split('\n')[0]!;
    process.stderr.write(remote && /httpfs/i.test(message) ? httpfsMissing(outDir, message).replaceAll('crawl sql', 'crawl report') : `crawl: reading ${outDir}: ${message}\n`);
    return 1;
  }
  if (o.crawlId !== undefined && report.figures.crawlIds.length === 0) throw new UsageError(`no rows of crawl id "${o.crawlId}" in ${outDir}`);
  // whole or not at all: a reader (or the console) never opens half a report
  const tmp = `${file}.${process.pid}.tmp`;
  await fsp.writeFile(tmp, report.html);
  await fsp.rename(tmp, file);
  const f = report.figures;
  process.stdout.write(
    `wrote ${file} (${formatBytes(Buffer.byteLength(report.html))}): ${counted(f.pages, 'page')}, ${counted(f.hostsWithPages, 'host')}, ${counted(f.domains, 'registrable domain')}, ${counted(f.errors, 'error')} in ${formatDuration(f.durationMs)}\n`,
  );
  return 0;
}
