/**
 * The crawler as a library (`import { defineStage, startCrawl, query } from 'jetstream-crawler'`):
 * define a stage of your own, start a crawl with it, query the output. This file is the
 * package's only entry point (package.json `exports`); everything else is internal and may
 * change. docs/extending.md is the guide.
 */
import type { CustomStage } from '../pipeline/custom-stage.js';
import type { RunOptions } from '../cli/run.js';
import type { ExtractedPage, FetchedPage, FinalPage, UrlOutcome, PageLink } from '../schemas/index.js';

export {
  defineStage,
  emit,
  retry,
  fail,
  stageTestContext,
  StageDefinitionError,
  CUSTOM_INPUTS,
  COLUMN_TYPES,
  type CustomStage,
  type CustomStageSpec,
  type CustomStageContext,
  type CustomStageInput,
  type CustomInputs,
  type CustomInputName,
  type CustomOutcome,
  type CustomColumnType,
  type QueuedUrl,
} from '../pipeline/custom-stage.js';

/** The messages of the edges a stage may read (docs/extending.md#edges). */
export type { FetchedPage, ExtractedPage, FinalPage, UrlOutcome, PageLink };

/**
 * `crawl run`'s options, by their flag names in camelCase (`maxPages` for `--max-pages`,
 * `resolve` for `--resolve`, `minDelayMs`...), besides seeds, the output and your stages.
 */
export type CrawlOptions = Partial<Omit<RunOptions, 'seed' | 'out' | 'untilIdle' | 'customStages' | 'stageModule' | 'report'>>;

export interface StartCrawlOptions extends CrawlOptions {
  seeds: string[];
  /** the output directory (Parquet tables, WARC files, the embedded JetStream store) */
  out: string;
  /** stages of your own (defineStage), run in this process beside the built-in ones */
  stages?: CustomStage[];
}

/**
 * Runs a crawl as `crawl run --until-idle` does (an embedded nats-server unless NATS_URL is
 * set) and resolves once it is idle and its output flushed. A bad option or stage rejects
 * before anything is crawled.
 */
export async function startCrawl(o: StartCrawlOptions): Promise<{ out: string }> {
  const { runCrawl, runFlagDefaults } = await import('../cli/run.js');
  const { seeds, out, stages, ...rest } = o;
  await runCrawl({
    ...runFlagDefaults(),
    ...rest,
    seed: seeds,
    out,
    untilIdle: true,
    report: false,
    customStages: (stages ?? []).map((stage) => ({ module: `stage ${stage.name}`, stage })),
  } as RunOptions);
  return { out };
}

/** One SQL statement over a crawl's output, with the views `crawl sql` has (your stages' tables among them); rows as objects. */
export async function query(outDir: string, sql: string): Promise<Array<Record<string, unknown>>> {
  const { openOutputDatabase } = await import('../pipeline/adapters/duckdb-views.js');
  const db = await openOutputDatabase(outDir);
  try {
    const result = await db.run(sql);
    return result.rows.map((row) => Object.fromEntries(result.columns.map((c, i) => [c, row[i]])));
  } finally {
    await db.close();
  }
}
