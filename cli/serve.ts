import { openKvStores } from '../pipeline/adapters/nats-kv.js';
import { createLogger } from '../pipeline/logger.js';
import { STAGE_NAMES } from '../pipeline/stage.js';
import { startNode } from '../app/node.js';
import { readStoredSettings, storeSettings } from '../app/settings-store.js';
import { applyCrawlTopology } from '../ops/nats/crawl-topology.js';
import { startService } from '../app/service/service.js';
import { API_SUBJECT } from '../app/service/nats-api.js';
import { openCrawlConnection } from './connection.js';
import type { LogOptions } from './log-options.js';
import { retentionPolicy, type RetentionFlags } from './retention-flags.js';
import { mergeSettings, type SettingsFlags } from './settings-flags.js';
import { proxyCredentialsFor } from './proxy-options.js';
import { stopOnSignal } from './stop-signal.js';
import { UsageError } from './usage-error.js';
import { requireBrowserIfRendering } from './render-check.js';
import { apiToken } from './api-access.js';
import { checkMetricsOptions, serveMetrics, servedMetrics, type MetricsOptions } from './metrics-options.js';
import { resolveOut } from './output-location.js';
import type { MetricsServer } from '../pipeline/metrics-server.js';
import { watchConnection } from '../pipeline/adapters/connection-state.js';

export interface ServeOptions extends SettingsFlags, RetentionFlags, LogOptions, MetricsOptions {
  out: string;
  host: string;
  port: number;
  /** a file holding the API token (else CRAWL_API_TOKEN); required when --host is not loopback */
  apiTokenFile?: string;
  /** `all`: run every stage in this process too; `none`: the API and scheduler only (workers run elsewhere) */
  stages: string;
  extractThreads?: number;
  /** the render stage's browser contexts and a page's JavaScript heap, in this process */
  renderConcurrency?: number;
  renderMemoryMb?: number;
  /** this process's proxy credentials (USER:PASSWORD), never stored */
  proxyCredentialsFile?: string;
}

/**
 * `crawl serve`: the crawl-jobs service. Without NATS_URL it starts nats-server on `--out`
 * like `crawl run`, and runs every stage beside the API; with NATS_URL it joins that cluster.
 * Runs until SIGINT or SIGTERM; start it again on the same `--out` and it goes on.
 */
export async function runServe(o: ServeOptions): Promise<number> {
  if (o.stages !== 'all' && o.stages !== 'none') throw new UsageError(`--stages must be all or none, got "${o.stages}"`);
  const checked = mergeSettings(null, o);
  if (o.stages === 'all') requireBrowserIfRendering(checked);
  if (o.proxyCredentialsFile !== undefined && (checked.httpProxy || checked.httpsProxy)) proxyCredentialsFor(checked, o.proxyCredentialsFile, process.env);
  const retention = retentionPolicy(o);
  // before anything starts: a service reachable from elsewhere without a token never runs
  const token = apiToken(o);
  checkMetricsOptions(o);
  // the jobs' status reads the output's files: a local directory only
  const outDir = resolveOut(o.out, 'serve', false);
  const log = createLogger('serve', { level: o.logLevel, file: o.logFile });
  const conn = await openCrawlConnection(outDir, 'crawl serve');
  const stop = stopOnSignal();
  let node: Awaited<ReturnType<typeof startNode>> | undefined;
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  const metrics = servedMetrics();
  let server: MetricsServer | null = null;
  try {
    // ready once the API answers, while NATS is connected (and, with --stages all, the stages consume)
    const connection = watchConnection(conn.nc, o.stages === 'all' ? null : metrics);
    const notReady = () => {
      if (!service) return 'starting';
      if (node) return node.notReady();
      return connection.connected() ? null : 'not connected to NATS (reconnecting)';
    };
    server = await serveMetrics(o, metrics, notReady, log);
    await applyCrawlTopology(conn.nc, { retention });
    const kv = await openKvStores(conn.nc);
    const settings = mergeSettings(await readStoredSettings(kv), o);
    await storeSettings(kv, settings);
    if (o.stages === 'all') {
      requireBrowserIfRendering(settings);
      node = await startNode(conn.nc, settings, STAGE_NAMES, {
        log,
        outDir,
        metrics,
        proxyCredentials: proxyCredentialsFor(settings, o.proxyCredentialsFile, process.env),
        extract: { threads: o.extractThreads },
        render: { concurrency: o.renderConcurrency, memoryMb: o.renderMemoryMb },
      });
    }
    service = await startService(conn.nc, settings, { log, host: o.host, port: o.port, outDir, metrics, ...(token !== undefined ? { apiToken: token } : {}) });
    process.stderr.write(`crawl serve: console on ${service.url}/, jobs API on ${service.url}/api/v1/jobs and NATS ${API_SUBJECT}.<create|list|get|pause|resume|cancel> (${conn.url}); output in ${outDir}; ${token !== undefined ? 'requests need the API token' : 'no API token: loopback only'}\n`);
    log.info({ url: service.url, nats: conn.url, out: outDir, stages: o.stages, apiToken: token !== undefined }, 'service started');
    await stop.stopped();
  } finally {
    await service?.stop();
    await node?.stop();
    await server?.close();
    await conn.close();
    stop.dispose();
  }
  return 0;
}
