import path from 'node:path';
import { openKvStores } from '../pipeline/adapters/nats-kv.js';
import { startNode } from '../app/node.js';
import { readStoredSettings } from '../app/settings-store.js';
import { createLogger } from '../pipeline/logger.js';
import type { LogOptions } from './log-options.js';
import { STAGE_NAMES, type StageName } from '../pipeline/stage.js';
import { joinCrawl } from './connection.js';
import { UsageError } from './usage-error.js';
import { proxyCredentialsFor } from './proxy-options.js';
import { stopOnSignal } from './stop-signal.js';
import { requireBrowser } from './render-check.js';
import { checkMetricsOptions, serveMetrics, servedMetrics, type MetricsOptions } from './metrics-options.js';
import type { MetricsServer } from '../pipeline/metrics-server.js';
import { resolveOut } from './output-location.js';
import { JETSTREAM_WAIT_MS, retryWhileElecting } from '../pipeline/adapters/nats-connection.js';
import { loadStageModules } from '../app/custom-stages.js';

/**
 * `crawl worker --stage NAME`: one stage in this process, joined to a running crawl; start as
 * many as needed. `--stage-module FILE` (repeatable) runs a module's stage, with or without a
 * built-in one.
 */
export async function runWorker(
  o: { stage?: string; stageModule?: string[]; concurrency?: number; extractThreads?: number; renderConcurrency?: number; renderMemoryMb?: number; proxyCredentialsFile?: string; out: string } & LogOptions & MetricsOptions,
): Promise<number> {
  checkMetricsOptions(o);
  if (o.stage === undefined && !o.stageModule?.length) throw new UsageError('give --stage NAME (one of ' + STAGE_NAMES.join(', ') + ') or --stage-module FILE');
  if (o.stage !== undefined && !(STAGE_NAMES as readonly string[]).includes(o.stage)) {
    throw new UsageError(`unknown stage "${o.stage}": one of ${STAGE_NAMES.join(', ')}`);
  }
  const builtIn = o.stage !== undefined ? [o.stage as StageName] : [];
  if (o.stage === 'render') requireBrowser();
  const customStages = await loadStageModules(o.stageModule ?? []);
  const stage = [...builtIn, ...customStages.map((c) => c.stage.name)].join('+');
  const outDir = resolveOut(o.out, 'worker', true);
  const nc = await joinCrawl(outDir, `crawl worker ${stage}`);
  const log = createLogger(`worker-${stage}`, { level: o.logLevel, file: o.logFile });
  const stop = stopOnSignal();
  const metrics = servedMetrics();
  let node: Awaited<ReturnType<typeof startNode>> | undefined;
  let server: MetricsServer | null = null;
  try {
    server = await serveMetrics(o, metrics, () => (node ? node.notReady() : 'starting'), log);
    // joined while a cluster is still electing leaders, a request may time out: tried again
    node = await retryWhileElecting(
      async () => {
        const settings = await readStoredSettings(await openKvStores(nc));
        if (!settings) throw new UsageError('the crawl has no settings yet: start it with `crawl run` or `crawl topology apply` first');
        return startNode(nc, settings, builtIn, {
          log,
          metrics,
          outDir,
          // the crawl's proxy (its settings) with this process's own credentials
          proxyCredentials: proxyCredentialsFor(settings, o.proxyCredentialsFile, process.env),
          concurrency: o.concurrency && o.stage ? { [o.stage]: o.concurrency } : undefined,
          customStages,
          extract: { threads: o.extractThreads },
          render: { concurrency: o.renderConcurrency ?? o.concurrency, memoryMb: o.renderMemoryMb },
        });
      },
      JETSTREAM_WAIT_MS,
      (why) => log.warn({ err: why }, 'starting the worker failed while the cluster elects its leaders; trying again'),
    );
    log.info({ stage, concurrency: o.concurrency ?? 'default' }, 'worker started');
    await stop.stopped();
    await node.stop();
  } finally {
    await server?.close();
    stop.dispose();
    await nc.drain().catch(() => undefined);
  }
  return 0;
}
