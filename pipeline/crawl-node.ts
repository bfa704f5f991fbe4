import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { createHttpClient } from './adapters/http-client.js';
import { type HttpClient } from '../ports/http.js';
import { parseResolveRule } from './adapters/resolve-map.js';
import { streamAccess } from './adapters/stream-access.js';
import { hostAddressResolver } from './adapters/host-address.js';
import { DnsCache } from './adapters/dns-cache.js';
import { openKvStores, type KvStores } from './adapters/nats-kv.js';
import { jsonValue, parseJsonValue } from './kv-store.js';
import { type KvStore } from '../ports/kv.js';
import { hasWork, leaseLive, readSlot, TAIL_PREFIX, type QueueTail } from '../stages/host-slot.js';
import type { Logger } from './logger.js';
import { StageMetrics } from './metrics.js';
import { StageRunner } from './runner.js';
import { parseSettings, type CrawlSettings } from './settings.js';
import type { StageContext, StageInputSpec, StageName } from './stage.js';
import { applyPartitionConsumers, applyTopology, type RetentionPolicyFor } from '../ops/nats/topology.js';
import { PartitionOwner } from './partition-owner.js';
import { buildStage, STAGE_INPUTS, type StageFactoryOptions } from '../stages/index.js';
import { defaultExtractThreads } from '../stages/extract/index.js';

const SETTINGS_KEY = 'settings';

export interface TopologyOptions {
  /** declare the per-partition consumers of partitioned stages for this many partitions */
  partitions?: number;
  /** stream limits (age, bytes) to apply; streams it does not mention keep theirs */
  retention?: RetentionPolicyFor;
}

export async function applyCrawlTopology(nc: NatsConnection, opts: TopologyOptions = {}): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  await applyTopology(nc, jsm, STAGE_INPUTS, opts.retention);
  if (opts.partitions !== undefined) await applyPartitionConsumers(jsm, STAGE_INPUTS, opts.partitions);
  return jsm;
}

/** The per-partition consumers (seen-filter), once the crawl's partition count is known. */
export async function applyCrawlPartitions(jsm: JetStreamManager, partitions: number): Promise<void> {
  await applyPartitionConsumers(jsm, STAGE_INPUTS, partitions);
}

/** The settings the crawl was started with, as `crawl run` stored them; null if none yet. */
export async function readStoredSettings(kv: KvStores): Promise<CrawlSettings | null> {
  const entry = await kv.config.get(SETTINGS_KEY);
  return entry ? parseSettings(parseJsonValue(entry.value)) : null;
}

export async function storeSettings(kv: KvStores, settings: CrawlSettings): Promise<void> {
  await kv.config.put(SETTINGS_KEY, jsonValue(settings));
}

export interface CrawlNode {
  metrics: StageMetrics;
  stop(): Promise<void>;
}

/**
 * What a process's stages share: KV buckets, metrics, the HTTP client (with `--resolve` and the
 * DNS cache) and stream access, on one connection. The caller closes `http`.
 */
export async function createNodeContext(
  nc: NatsConnection,
  settings: CrawlSettings,
  log: Logger,
): Promise<{ ctx: StageContext; kv: KvStores; http: HttpClient }> {
  const kv = await openKvStores(nc);
  const resolveRules = settings.resolve.map(parseResolveRule);
  const dns = new DnsCache({
    minTtlMs: settings.dnsMinTtlMs,
    maxTtlMs: settings.dnsMaxTtlMs,
    negativeTtlMs: settings.dnsNegativeTtlMs,
    servers: settings.dnsServers,
  });
  const http = createHttpClient({ userAgent: settings.userAgent, resolve: resolveRules, dns, allowNetworks: settings.allowNetworks });
  const ctx: StageContext = {
    settings,
    clock: { now: () => Date.now() },
    log,
    metrics: new StageMetrics(),
    kv,
    http,
    maxPayloadBytes: nc.info?.max_payload ?? 1024 * 1024,
    streams: streamAccess(nc),
    resolveHost: hostAddressResolver(resolveRules, dns),
  };
  return { ctx, kv, http };
}

/**
 * Runs the named stages in this process against one NATS connection. `crawl run` runs all
 * seven; `crawl worker --stage X` runs one. Stopping drains: no new messages, in-flight
 * ones finish, persist flushes.
 */
export async function startStages(
  nc: NatsConnection,
  settings: CrawlSettings,
  stages: readonly StageName[],
  opts: StageFactoryOptions & { log: Logger; concurrency?: Partial<Record<StageName, number>> },
): Promise<CrawlNode> {
  const { ctx, kv, http } = await createNodeContext(nc, settings, opts.log);
  const runners: Array<{ stop(): Promise<void> }> = [];
  // a running node parses pages in worker threads unless told otherwise (a replay does not)
  const factory: StageFactoryOptions = { ...opts, extract: { ...opts.extract, threads: opts.extract?.threads ?? defaultExtractThreads() } };
  for (const name of stages) {
    const def = await buildStage(name, factory);
    const concurrency = opts.concurrency?.[name] ?? def.defaultConcurrency;
    if (def.openPartition) {
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
  let stopping: Promise<void> | undefined;
  return {
    metrics: ctx.metrics,
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

export interface PipelineBacklog {
  /** messages not yet handled, per stage */
  perStage: Record<string, number>;
  total: number;
}

/**
 * Undelivered plus unacknowledged messages of every stage consumer, plus (when the hosts
 * bucket is given and the consumers are empty) the hosts whose queues still hold URLs or
 * whose request is still in flight: URLs waiting for their host are not in any consumer.
 */
export async function pipelineBacklog(jsm: JetStreamManager, hosts?: KvStore): Promise<PipelineBacklog> {
  const perStage: Record<string, number> = {};
  let total = 0;
  for (const spec of STAGE_INPUTS) {
    const n = spec.partitioned ? await partitionedBacklog(jsm, spec) : await consumerBacklog(jsm, spec.stream, spec.durable);
    perStage[spec.durable] = n;
    total += n;
  }
  if (hosts && total === 0) {
    const busy = await busyHosts(hosts, Date.now());
    perStage['host-queues'] = busy;
    total += busy;
  }
  return { perStage, total };
}

async function consumerBacklog(jsm: JetStreamManager, stream: string, durable: string): Promise<number> {
  const info = await jsm.consumers.info(stream, durable);
  return info.num_pending + info.num_ack_pending;
}

/** the sum over a partitioned stage's per-partition consumers (those declared so far) */
async function partitionedBacklog(jsm: JetStreamManager, spec: StageInputSpec): Promise<number> {
  let n = 0;
  for await (const info of jsm.consumers.list(spec.stream)) {
    if (/^\d+$/.test(info.name.slice(spec.durable.length + 2)) && info.name.startsWith(`${spec.durable}-p`)) n += info.num_pending + info.num_ack_pending;
  }
  return n;
}

/** Hosts with queued URLs or a request in flight (one read per host: for idle checks, not hot paths). */
export async function busyHosts(hosts: KvStore, now: number): Promise<number> {
  let busy = 0;
  for await (const key of hosts.keys()) {
    if (!key.startsWith(TAIL_PREFIX)) continue;
    const tailEntry = await hosts.get(key);
    if (!tailEntry) continue;
    const { host, tail_seq } = parseJsonValue<QueueTail>(tailEntry.value);
    const slot = await readSlot(hosts, host);
    if (hasWork(slot, tail_seq, now) || (slot && leaseLive(slot, now))) busy += 1;
  }
  return busy;
}
