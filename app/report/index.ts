/**
 * `crawl report`: one self-contained HTML file about a crawl's output (seed 003's post-run
 * figures as charts), made from the output's views. The console serves the same page.
 */
import path from 'node:path';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { isRemoteOutput } from '../../pipeline/adapters/output-layout.js';
import { readReportFigures, type ReportFigures } from './figures.js';
import { reportHtml } from './report-html.js';

export { readReportFigures, bucketWidthMs, ERROR_OUTCOMES, FAILED_REQUEST_OUTCOMES, REQUEST_OUTCOMES } from './figures.js';
export type { ReportFigures, Timeline, Count, ErrorHost, ErrorReason } from './figures.js';
export { reportHtml } from './report-html.js';

export interface CrawlReportOptions {
  /** only this crawl id (default: every crawl in the output) */
  crawlId?: string;
  /** DuckDB statements run before the views are built: httpfs and its S3 secret for an s3:// output (s3SetupStatements) */
  setup?: readonly string[];
  /** the time the report says it was made (default: now) */
  now?: Date;
}

/** The report of the crawl output at `out` (a directory, or s3://bucket/prefix with `setup`), as an HTML document. */
export async function renderCrawlReport(out: string, options: CrawlReportOptions = {}): Promise<string> {
  return (await crawlReport(out, options)).html;
}

/** The report and the figures it shows. */
export async function crawlReport(out: string, options: CrawlReportOptions = {}): Promise<{ html: string; figures: ReportFigures }> {
  const db = await openOutputDatabase(out, { setup: options.setup });
  let figures: ReportFigures;
  try {
    figures = await readReportFigures(db, { crawlId: options.crawlId });
  } finally {
    await db.close();
  }
  return { html: reportHtml(figures, { out: isRemoteOutput(out) ? out : path.resolve(out), generatedAt: options.now ?? new Date() }), figures };
}
