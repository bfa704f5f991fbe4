import path from 'node:path';
import { publishSeeds } from '../app/seeding.js';
import { openKvStores } from '../pipeline/adapters/nats-kv.js';
import { startNode, type CrawlNode } from '../app/node.js';
import { PAGE_STAGES, startStageThread, type StageThread } from '../app/stage-thread.js';
import { defaultExtractThreads } from '../stages/extract/index.js';
import { waitUntilIdle } from '../app/backlog.js';
import { readStoredSettings, storeSettings } from '../app/settings-store.js';
import { applyCrawlTopology } from '../ops/nats/crawl-topology.js';
import { createLogger } from '../pipeline/logger.js';
import type { LogOptions } from './log-options.js';
import { STAGE_NAMES } from '../pipeline/stage.js';
import { compactAnyOutput, compactSummaryLine } from './compact.js';
import { hasEmbeddedStore, natsUrlFromEnv, openCrawlConnection } from './connection.js';
import { startProgress } from './progress.js';
import { stopOnSignal } from './stop-signal.js';
import { hostWaitSources, listHostWaits, summarizeWaits } from '../stages/politeness-gate/index.js';
import { connectionPublisher, streamAccess } from '../pipeline/adapters/stream-access.js';
import { streamAdmin } from '../pipeline/adapters/stream-admin.js';
import { readSeeds } from './seeds-input.js';
import { mergeSettings, type SettingsFlags } from './settings-flags.js';
import { proxyCredentialsFor } from './proxy-options.js';
import { UsageError } from './usage-error.js';
import { requireBrowserIfRendering } from './render-check.js';
import { retentionPolicy, type RetentionFlags } from './retention-flags.js';
import { checkMetricsOptions, serveMetrics, servedMetrics, type MetricsOptions } from './metrics-options.js';
import type { MetricsServer } from '../pipeline/metrics-server.js';
import { resolveOut } from './output-location.js';
import { collectGarbage } from './collect-garbage.js';
import { tightenHeapForStageThreads } from './node-flags.js';
import { customStageInput, loadStageModules, type LoadedStage } from '../app/custom-stages.js';
import { Command } from 'commander';
import { addSettingsOptions } from './settings-flags.js';
import { addRetentionOptions } from './retention-flags.js';
import { addMetricsOptions } from './metrics-options.js';

/** What `crawl run` would take with no flags given: the base a programmatic start (api/) lays its options over. */
export function runFlagDefaults(): Partial<RunOptions> {
  const cmd = addMetricsOptions(addRetentionOptions(addSettingsOptions(new Command('run'))))
    .exitOverride()
    .option('--seed <url>', '', (v: string, p: string[]) => [...p, v], [])
    .option('--stage-module <file>', '', (v: string, p: string[]) => [...p, v], []);
  cmd.parse([], { from: 'user' });
  return cmd.opts() as Partial<RunOptions>;
}

/**
 * The merge at the end of an --until-idle crawl runs in the crawl's own process, which still
 * holds most of what the crawl used once the stages have stopped (less after the full
 * collection run before the merge), so it gets a quarter of `crawl compact`'s default limit:
 * that keeps the merge's peak under the crawl's own for about the same time and CPU, at the
 * price of leaving twice as many files (a later `crawl compact` merges them further;
 * docs/performance.md#the-end-of-crawl-merge).
 */
const END_OF_CRAWL_COMPACT_MEMORY_BYTES = 128_000_000;

export interface RunOptions extends SettingsFlags, RetentionFlags, LogOptions, MetricsOptions {
  seed: string[];
  seedsFile?: string;
  out: string;
  untilIdle: boolean;
  /** merge small output files when an --until-idle crawl ends (commander's --no-compact sets false) */
  compact?: boolean;
  /** test aid (hidden --no-titles): extract drops titles, so a replay can fix it */
  titles?: boolean;
  /** worker threads for extract; default: cores - 1 */
  extractThreads?: number;
  /** 2: the stages that handle fetched pages run on a second thread (app/stage-thread.ts) */
  stageThreads?: number;
  /** the render stage's browser contexts and a page's JavaScript heap, in this process */
  renderConcurrency?: number;
  renderMemoryMb?: number;
  /** this process's proxy credentials (USER:PASSWORD), never stored */
  proxyCredentialsFile?: string;
  /** modules whose stage runs in this process beside the built-in ones (--stage-module, repeatable) */
  stageModule?: string[];
  /** stages already loaded (the programmatic startCrawl), run like --stage-module's */
  customStages?: readonly LoadedStage[];
  /** false: no closing lines on stdout (a program's stdout is its own: api/ startCrawl) */
  report?: boolean;
}

export async function runCrawl(o: RunOptions): Promise<number> {
  const seeds = readSeeds(o.seed, o.seedsFile);
  for (const r of seeds.rejected) process.stderr.write(`seeds file line ${r.line}: skipped "${r.text}": ${r.reason}\n`);
  const outDir = resolveOut(o.out, 'run', true);
  // bad flags and a new crawl without seeds stop here, before a server is started
  const checked = requireBrowserIfRendering(mergeSettings(null, o));
  if (o.proxyCredentialsFile !== undefined && (checked.httpProxy || checked.httpsProxy)) proxyCredentialsFor(checked, o.proxyCredentialsFile, process.env);
  const retention = retentionPolicy(o);
  checkMetricsOptions(o);
  // a module that is missing or exports no stage stops here too, before a server is started
  const customStages = [...(o.customStages ?? []), ...(await loadStageModules(o.stageModule ?? []))];
  if (seeds.urls.length === 0 && !natsUrlFromEnv() && !hasEmbeddedStore(outDir)) {
    throw new UsageError(`no seeds: give --seed URL or --seeds-file FILE (or resume a crawl with --out DIR; none in ${outDir})`);
  }
  const log = createLogger('crawl', { level: o.logLevel, file: o.logFile });
  const conn = await openCrawlConnection(outDir, 'crawl run');
  let node: CrawlNode | undefined;
  let thread: StageThread | undefined;
  let threadFailure: Error | undefined;
  let progress: ReturnType<typeof startProgress> | undefined;
  const stop = stopOnSignal();
  const metrics = servedMetrics();
  let server: MetricsServer | null = null;
  try {
    server = await serveMetrics(o, metrics, () => (node ? (node.notReady() ?? thread?.notReady() ?? null) : 'starting'), log);
    await applyCrawlTopology(conn.nc, { retention });
    const kv = await openKvStores(conn.nc);
    const stored = await readStoredSettings(kv);
    if (!stored && seeds.urls.length === 0) throw new UsageError('no seeds: give --seed URL or --seeds-file FILE (or resume a crawl with --out DIR)');
    const settings = requireBrowserIfRendering(mergeSettings(stored, o));
    await storeSettings(kv, settings);
    const proxyCredentials = proxyCredentialsFor(settings, o.proxyCredentialsFile, process.env);
    const threaded = (o.stageThreads ?? 1) > 1;
    // with a stage thread of its own, extract parses there unless cores are left beyond the two threads
    const extract = { titles: o.titles !== false, threads: o.extractThreads ?? (threaded ? Math.max(0, defaultExtractThreads() - 1) : undefined) };
    if (threaded) {
      tightenHeapForStageThreads();
      thread = await startStageThread(
        { ...conn.reconnect, settings, stages: [...PAGE_STAGES], outDir, log: { name: 'crawl', level: o.logLevel, file: o.logFile, terminal: process.stderr.isTTY === true }, extract, proxyCredentials },
        metrics,
        log,
      );
      thread.failed.catch((err: Error) => {
        threadFailure = err;
        stop.request();
      });
    }
    node = await startNode(conn.nc, settings, threaded ? STAGE_NAMES.filter((s) => !PAGE_STAGES.includes(s)) : STAGE_NAMES, {
      log,
      outDir,
      metrics,
      proxyCredentials,
      extract,
      render: { concurrency: o.renderConcurrency, memoryMb: o.renderMemoryMb },
      customStages,
    });
    const seeded = await publishSeeds(connectionPublisher(conn.nc), seeds.urls);
    if (seeded.scopeNotPut) log.warn({ err: seeded.scopeNotPut.message }, "the seeds' scope could not be put before the seeds; each seeds message puts its own");
    log.info({ seeds: seeds.urls.length, out: outDir, crawlId: settings.crawlId, resumed: stored !== null }, 'crawl started');
    if (process.stderr.isTTY) {
      // the JSON record above is for log files; a person at a terminal gets one line
      const what = stored ? `resuming crawl ${settings.crawlId}` : `crawl ${settings.crawlId}`;
      process.stderr.write(`${what}: ${seeds.urls.length} seeds, output in ${outDir} (Ctrl-C stops; the same command resumes)\n`);
    }
    const waitSources = hostWaitSources(kv, streamAccess(conn.nc), settings);
    const admin = streamAdmin(conn.nc);
    progress = startProgress(admin, node.metrics, process.stderr, async () => summarizeWaits(await listHostWaits(waitSources, Date.now())));
    if (o.untilIdle) {
      const onUnanswered = (err: Error) => log.warn({ err: err.message }, 'the servers did not answer a check of the backlog; still waiting for idle');
      const extraInputs = customStages.map((c) => customStageInput(c.stage));
      await waitUntilIdle(admin, kv.hosts, { stopped: () => stop.requested, onUnanswered, extraInputs });
    } else await stop.stopped();
  } finally {
    progress?.stop();
    // the stages up to fetch first: what they send on, the page stages still handle
    await node?.stop();
    await thread?.stop();
    await server?.close();
    await conn.close();
    stop.dispose();
  }
  if (threadFailure) throw new Error(`the crawl stopped: ${threadFailure.message}; run the same command again to resume`);
  // persist has flushed and closed: every file of this process is complete, so none need a grace period
  if (o.untilIdle && o.compact !== false && !stop.requested) {
    // the stopped crawl's heap is garbage now, but V8 would keep it until the merge's own
    // allocations made it collect: collected first, the merge no longer sets the run's peak RSS
    collectGarbage();
    try {
      process.stderr.write(compactSummaryLine(await compactAnyOutput(outDir, { minAgeMs: 0, memoryLimitBytes: END_OF_CRAWL_COMPACT_MEMORY_BYTES })) + '\n');
    } catch (err) {
      // the crawl's output is complete either way: only the merge is missing
      process.stderr.write(`compact failed (the output is complete; run \`crawl compact --out ${outDir}\` later): ${(err as Error).message}\n`);
    }
  }
  if (o.report === false) return 0;
  process.stdout.write(
    `crawl output: ${outDir}\n` +
      `try: crawl sql --out ${JSON.stringify(outDir)} "SELECT url_host_name, count(*) AS pages FROM pages GROUP BY 1 ORDER BY 2 DESC LIMIT 10"\n`,
  );
  return 0;
}
