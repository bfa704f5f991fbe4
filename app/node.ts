import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { createHttpClient } from '../pipeline/adapters/http/client.js';
import { parseResolveRule } from '../pipeline/adapters/resolve-map.js';
import { streamAccess } from '../pipeline/adapters/stream-access.js';
import { natsBodyStore } from '../pipeline/adapters/body-stream.js';
import { checkMaxPayload } from '../pipeline/adapters/max-payload.js';
import { hostAddressResolver } from '../pipeline/adapters/host-address.js';
import { DnsCache, dnsCacheOptions } from '../pipeline/adapters/dns-cache.js';
import { AddressHealth } from '../pipeline/adapters/address-health.js';
import type { ProxyCredentials } from '../pipeline/adapters/http/proxy-config.js';
import { openKvStores, type KvStores } from '../pipeline/adapters/nats-kv.js';
import { watchNatsConnection } from '../pipeline/adapters/nats-connection.js';
import { timedKvStore } from '../pipeline/timed-kv.js';
import { BUCKETS } from '../topology/index.js';
import type { Logger } from '../pipeline/logger.js';
import { StageMetrics } from '../pipeline/metrics.js';
import { StageRunner } from '../pipeline/runner.js';
import { PartitionOwner } from '../pipeline/partition-owner.js';
import type { CrawlSettings } from '../pipeline/settings.js';
import type { StageContext, StageDefinition, StageName } from '../pipeline/stage.js';
import type { HttpClient } from '../ports/http.js';
import { applyPartitionConsumers, applyStageConsumers } from '../ops/nats/topology.js';
import { customConsumerStage, customStageInput, type LoadedStage } from './custom-stages.js';
import { defaultExtractThreads, type ExtractStageOptions } from '../stages/extract/index.js';
import { hostWaitSources } from '../stages/politeness-gate/index.js';
import { observeNode, type NodeServer } from './node-metrics.js';
import { registerConsumerLag } from '../pipeline/adapters/consumer-lag.js';
import { watchConnection } from '../pipeline/adapters/connection-state.js';
import { buildStage, type StageFactoryOptions } from './stage-registry.js';
import { ChromiumRenderer } from '../pipeline/adapters/browser/chromium-renderer.js';
import { DEFAULT_RENDER_CONCURRENCY } from '../stages/render/index.js';
import { openArchiveOutput, openParquetOutput } from './outputs.js';

export interface CrawlNode {
  metrics: StageMetrics;
  /** null while the node consumes and is connected; otherwise why not (for /readyz) */
  notReady(): string | null;
  stop(): Promise<void>;
}

/** Every bucket's operations timed into the metrics, under the bucket's name. */
function timedKvStores(kv: KvStores, metrics: StageMetrics): KvStores {
  const timed = {} as KvStores;
  for (const key of Object.keys(kv) as Array<keyof KvStores>) timed[key] = timedKvStore(kv[key], BUCKETS[key], metrics);
  return timed;
}

/**
 * What a process's stages share: KV buckets, metrics, the HTTP client (with `--resolve`, the
 * DNS cache, the proxy) and stream access, on one connection. The caller closes `http`.
 * `proxyCredentials` are this process's own (a file or its environment): never in settings.
 */
export async function createNodeContext(
  nc: NatsConnection,
  settings: CrawlSettings,
  log: Logger,
  metrics = new StageMetrics(),
  proxyCredentials?: ReadonlyMap<string, ProxyCredentials>,
): Promise<{ ctx: StageContext; kv: KvStores; http: HttpClient }> {
  const maxPayloadBytes = nc.info?.max_payload ?? 1024 * 1024;
  checkMaxPayload(maxPayloadBytes);
  const kv = timedKvStores(await openKvStores(nc), metrics);
  reportDeniedPermissions(nc, log);
  const resolveRules = settings.resolve.map(parseResolveRule);
  const dns = new DnsCache(dnsCacheOptions(settings));
  metrics.dnsCache(() => dns.stats());
  // which of a host's addresses failed lately: the client tries them last, the gate charges the first
  const addressHealth = new AddressHealth();
  const http = createHttpClient({
    userAgent: settings.userAgent,
    resolve: resolveRules,
    dns,
    allowNetworks: settings.allowNetworks,
    proxy: { httpProxy: settings.httpProxy, httpsProxy: settings.httpsProxy, noProxy: settings.noProxy },
    ...(proxyCredentials ? { proxyCredentials } : {}),
    addressHealth,
    tls: { caPems: settings.caCerts.map((c) => c.pem), insecureHosts: settings.insecureHosts },
    http2: settings.http2,
  });
  // loud, in every process that fetches: a user must not forget verification is off somewhere
  if (settings.insecureHosts.length > 0) {
    log.warn({ hosts: settings.insecureHosts }, `TLS certificates are NOT verified for hosts matching ${settings.insecureHosts.join(', ')} (--insecure-host); every such exchange is marked in the archive`);
  }
  const ctx: StageContext = {
    settings,
    clock: { now: () => Date.now() },
    log,
    metrics,
    kv,
    http,
    maxPayloadBytes,
    streams: streamAccess(nc),
    bodies: natsBodyStore(nc),
    resolveHost: hostAddressResolver(resolveRules, dns, settings.allowNetworks, addressHealth),
  };
  return { ctx, kv, http };
}

/** A denied subject is said once a minute at most: every redelivery of a message would say it again. */
const DENIAL_REPORT_EVERY_MS = 60_000;

/**
 * Permissions the server denies this process, as error records that name the subject. A
 * denied publish fails the message's publish (it is nakked and redelivered, so nothing is
 * lost), but the publish only times out: this says why.
 */
function reportDeniedPermissions(nc: NatsConnection, log: Logger): void {
  const said = new Map<string, number>();
  watchNatsConnection(nc, {
    denied: (d) => {
      const key = `${d.operation} ${d.subject}`;
      const now = Date.now();
      if ((said.get(key) ?? 0) > now - DENIAL_REPORT_EVERY_MS) return;
      said.set(key, now);
      log.error({ operation: d.operation, subject: d.subject }, `${d.message}: its messages are retried until the user's permissions allow it`);
    },
  });
}

export interface NodeOptions {
  log: Logger;
  /** the output directory persist and archive write to (needed only when they run here) */
  outDir?: string;
  /** extract's options; a node parses in worker threads unless `threads` says otherwise */
  extract?: ExtractStageOptions;
  /** messages each stage handles at once in this process, instead of its default */
  concurrency?: Partial<Record<StageName, number>>;
  /** the render stage's browser: contexts (renders at once) and the JavaScript heap of a page */
  render?: { concurrency?: number; memoryMb?: number };
  /** the metrics to count into (a served registry); a fresh one by default */
  metrics?: StageMetrics;
  /** Proxy-Authorization credentials by proxy origin, from this process's file or environment */
  proxyCredentials?: ReadonlyMap<string, ProxyCredentials>;
  /** stages from stage modules (--stage-module), run after the built-in ones */
  customStages?: readonly LoadedStage[];
}

/** A page's JavaScript heap unless `--render-memory-mb` says otherwise: past it the page's renderer dies and the render fails. */
export const DEFAULT_RENDER_MEMORY_MB = 512;

/**
 * Runs the named stages in this process against one NATS connection: `crawl run` runs them
 * all, `crawl worker --stage X` one. Persist and archive write to `outDir`. Stopping drains:
 * no new messages, in-flight ones finish, persist flushes.
 */
export async function startNode(nc: NatsConnection, settings: CrawlSettings, stages: readonly StageName[], opts: NodeOptions): Promise<CrawlNode> {
  const { ctx, kv, http } = await createNodeContext(nc, settings, opts.log, opts.metrics, opts.proxyCredentials);
  const outDir = opts.outDir;
  const renderConcurrency = opts.render?.concurrency ?? opts.concurrency?.render ?? DEFAULT_RENDER_CONCURRENCY;
  const factory: StageFactoryOptions = {
    // Chromium starts at the first render, so a crawl that renders nothing never starts it
    openRenderer: () => ({
      renderer: new ChromiumRenderer({
        concurrency: renderConcurrency,
        memoryMb: opts.render?.memoryMb ?? DEFAULT_RENDER_MEMORY_MB,
        userAgent: settings.userAgent,
        warn: (message, fields) => opts.log.warn(fields ?? {}, message),
      }),
      concurrency: renderConcurrency,
    }),
    extract: { ...opts.extract, threads: opts.extract?.threads ?? defaultExtractThreads() },
    persist: { maxRows: settings.persistBatchRows, maxDelayMs: settings.persistFlushMs },
    ...(outDir
      ? {
          openOutput: () => openParquetOutput(outDir),
          openArchive: async () => ({ ...(await openArchiveOutput(outDir, settings, opts.log)), concurrency: opts.concurrency?.archive }),
        }
      : {}),
  };
  const runners: Array<{ stop(): Promise<void> }> = [];
  try {
    return await startStages();
  } catch (err) {
    // nothing is left running: the caller may try again (a cluster electing its leaders)
    for (const runner of runners) await runner.stop().catch(() => undefined);
    await http.close().catch(() => undefined);
    throw err;
  }

  async function startStages(): Promise<CrawlNode> {
    for (const name of stages) {
      const def: StageDefinition<any> = await buildStage(name, factory);
      const concurrency = opts.concurrency?.[name] ?? def.defaultConcurrency;
      for (const what of def.counts ?? []) ctx.metrics.declare(name, what);
      if (def.kind === 'partitioned') {
        // a partitioned stage (seen-filter): one consumer per partition held, under a lease
        await applyPartitionConsumers(await jetstreamManager(nc), [def.input], settings.partitions);
        const owner = new PartitionOwner(nc, def, ctx, { concurrency, leases: kv.seen });
        await owner.start();
        runners.push(owner);
        continue;
      }
      const runner = new StageRunner(nc, def, ctx, { concurrency });
      await runner.start();
      runners.push(runner);
    }
    const custom = opts.customStages ?? [];
    if (custom.length > 0) await applyStageConsumers(await jetstreamManager(nc), custom.map((c) => customStageInput(c.stage)));
    for (const loaded of custom) {
      const def = await customConsumerStage(loaded, {
        outDir,
        crawlId: settings.crawlId,
        partitions: settings.partitions,
        batch: { maxRows: settings.persistBatchRows, maxDelayMs: settings.persistFlushMs },
      });
      for (const what of def.counts ?? []) ctx.metrics.declare(loaded.stage.name, what);
      const runner = new StageRunner(nc, def, ctx, { concurrency: def.defaultConcurrency });
      await runner.start();
      runners.push(runner);
    }
    const gateHere = stages.includes('politeness-gate');
    const jsm = await jetstreamManager(nc);
    const connection = watchConnection(nc, ctx.metrics);
    const server: NodeServer = { connected: connection.connected, gaugeConsumerLag: (specs) => registerConsumerLag(ctx.metrics, jsm, specs) };
    const observed = observeNode(server, ctx.metrics, stages, gateHere ? hostWaitSources(kv, ctx.streams, settings) : null, ctx.log);
    let stopping: Promise<void> | undefined;
    return {
      metrics: ctx.metrics,
      notReady: () => (stopping ? 'stopping' : observed.notReady()),
      stop() {
        stopping ??= (async () => {
          // upstream first, so fewer messages are caught between stages
          for (const runner of runners) await runner.stop();
          await http.close();
        })();
        return stopping;
      },
    };
  }
}
