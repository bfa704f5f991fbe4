import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import { encodeSeed } from '../schemas/index.js';
import { SUBJECTS } from '../ops/nats/edges.js';
import { openKvStores } from '../pipeline/adapters/nats-kv.js';
import { parseResolveRule } from '../pipeline/adapters/resolve-map.js';
import { applyCrawlTopology, pipelineBacklog, readStoredSettings, startStages, storeSettings } from '../pipeline/crawl-node.js';
import { createLogger } from '../pipeline/logger.js';
import { defaultCrawlId, parseSettings, SettingsError, type CrawlSettingsInput } from '../pipeline/settings.js';
import { STAGE_NAMES } from '../pipeline/stage.js';
import { openParquetOutput } from './output.js';
import { openCrawlConnection } from './connection.js';
import { startProgress } from './progress.js';
import { readSeeds } from './seeds-input.js';
import { UsageError } from './usage-error.js';

export interface RunOptions {
  seed: string[];
  seedsFile?: string;
  out: string;
  resolve: string[];
  maxDepth?: number;
  maxPages?: number;
  partitions?: number;
  minDelayMs?: number;
  userAgent?: string;
  include: string[];
  exclude: string[];
  crawlId?: string;
  untilIdle: boolean;
}

/** Settings given on this command line; the rest keep what the crawl was started with. */
function settingsFromFlags(o: RunOptions): Partial<CrawlSettingsInput> {
  const s: Partial<CrawlSettingsInput> = {};
  if (o.maxDepth !== undefined) s.maxDepth = o.maxDepth;
  if (o.maxPages !== undefined) s.maxPages = o.maxPages;
  if (o.partitions !== undefined) s.partitions = o.partitions;
  if (o.minDelayMs !== undefined) s.minDelayMs = o.minDelayMs;
  if (o.userAgent !== undefined) s.userAgent = o.userAgent;
  if (o.resolve.length > 0) s.resolve = o.resolve;
  if (o.include.length > 0) s.include = o.include;
  if (o.exclude.length > 0) s.exclude = o.exclude;
  return s;
}

/** Idle = every stage's consumer has nothing undelivered and nothing unacked, seen three times in a row. */
async function waitUntilIdle(jsm: Awaited<ReturnType<typeof applyCrawlTopology>>, stopped: () => boolean): Promise<void> {
  let quiet = 0;
  while (!stopped()) {
    const backlog = await pipelineBacklog(jsm);
    quiet = backlog.total === 0 ? quiet + 1 : 0;
    if (quiet >= 3) return;
    await sleep(400);
  }
}

export async function runCrawl(o: RunOptions): Promise<number> {
  for (const r of o.resolve) {
    try {
      parseResolveRule(r);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const seeds = readSeeds(o.seed, o.seedsFile);
  for (const r of seeds.rejected) process.stderr.write(`seeds file line ${r.line}: skipped "${r.text}": ${r.reason}\n`);
  const outDir = path.resolve(o.out);
  const log = createLogger('crawl');
  const conn = await openCrawlConnection(outDir, 'crawl run');
  let node: Awaited<ReturnType<typeof startStages>> | undefined;
  let progress: ReturnType<typeof startProgress> | undefined;
  let stopRequested = false;
  const onSignal = () => {
    stopRequested = true;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const jsm = await applyCrawlTopology(conn.nc);
    const kv = await openKvStores(conn.nc);
    const stored = await readStoredSettings(kv);
    if (!stored && seeds.urls.length === 0) throw new UsageError('no seeds: give --seed URL or --seeds-file FILE (or resume a crawl with --out DIR)');
    let settings;
    try {
      settings = parseSettings({ ...(stored ?? { crawlId: o.crawlId ?? defaultCrawlId() }), ...settingsFromFlags(o) });
    } catch (err) {
      if (err instanceof SettingsError) throw new UsageError(err.message);
      throw err;
    }
    await storeSettings(kv, settings);
    node = await startStages(conn.nc, settings, STAGE_NAMES, {
      log,
      openOutput: () => openParquetOutput(outDir),
      persist: { maxRows: settings.persistBatchRows, maxDelayMs: settings.persistFlushMs },
    });
    const js = jetstream(conn.nc);
    for (const url of seeds.urls) await js.publish(SUBJECTS.seeds, encodeSeed({ url }));
    log.info({ seeds: seeds.urls.length, out: outDir, crawlId: settings.crawlId, resumed: stored !== null }, 'crawl started');
    progress = startProgress(jsm, node.metrics);
    if (o.untilIdle) await waitUntilIdle(jsm, () => stopRequested);
    else while (!stopRequested) await sleep(250);
  } finally {
    progress?.stop();
    await node?.stop();
    await conn.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  process.stdout.write(
    `crawl output: ${outDir}\n` +
      `try: crawl sql --out ${JSON.stringify(outDir)} "SELECT url_host_name, count(*) AS pages FROM pages GROUP BY 1 ORDER BY 2 DESC LIMIT 10"\n`,
  );
  return 0;
}
