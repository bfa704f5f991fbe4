import type { NatsConnection } from '@nats-io/transport-node';
import { openKvStores } from '../../pipeline/adapters/nats-kv.js';
import { connectionPublisher, streamAccess } from '../../pipeline/adapters/stream-access.js';
import { natsRequestServer } from '../../pipeline/adapters/nats-requests.js';
import { streamAdmin } from '../../pipeline/adapters/stream-admin.js';
import type { Logger } from '../../pipeline/logger.js';
import type { CrawlSettings } from '../../pipeline/settings.js';
import type { JobRecord } from '../../schemas/index.js';
import { startHttpApi } from './http-api.js';
import { CrawlViews } from '../console/crawl-views.js';
import { hostWaitSources } from '../../stages/politeness-gate/index.js';
import { JobApi } from './job-api.js';
import { JobScheduler } from './job-scheduler.js';
import { jobInFlight, type StatusSources } from './job-status.js';
import { JobStore } from './job-store.js';
import { serveNatsApi } from './nats-api.js';
import { RevisitDispatch } from './revisit-dispatch.js';
import { ServiceLease } from './service-lease.js';
import { seedGuard } from './seed-guard.js';
import { serviceMetrics } from './service-metrics.js';
import type { StageMetrics } from '../../pipeline/metrics.js';

export interface ServiceOptions {
  log: Logger;
  host: string;
  port: number;
  /** when set, every HTTP request must carry `Authorization: Bearer <token>` */
  apiToken?: string;
  /** where the crawl's output is written, for the jobs' outcome counts */
  outDir?: string;
  /** how often the leader looks for due runs and revisits */
  tickMs?: number;
  /** the registry to count into (`crawl serve --metrics-port`); none: nothing is counted */
  metrics?: StageMetrics;
}

/** A job's run is judged finished at most this often (the check reads every host's queue tail). */
const IDLE_CHECK_EVERY_MS = 5000;
/**
 * While other jobs keep the stages busy, a job whose host queues have stayed empty this long
 * is done: the links of its last pages reach its queues in well under this (seen-filter and
 * gate, a few seconds even with a backlog). Judged too early, a job only reads `done` while
 * its last few URLs finish: state `done` stops nothing.
 */
const QUIET_JOB_MS = 20_000;

/**
 * `crawl serve`: the crawl-jobs API over HTTP and NATS (answered by every service), and,
 * in the one service holding the lease, the scheduler: job runs when they fall due, due
 * revisits handed to the crawl. Everything it knows is in KV and streams, so it can be
 * killed and restarted at any time, and several can run.
 */
export async function startService(nc: NatsConnection, settings: CrawlSettings, o: ServiceOptions): Promise<{ url: string; stop(): Promise<void> }> {
  const kv = await openKvStores(nc);
  const admin = streamAdmin(nc);
  const store = new JobStore(kv.jobs);
  const views = new CrawlViews({ admin, hosts: kv.hosts, waits: hostWaitSources(kv, streamAccess(nc), settings), partitions: settings.partitions, ...(o.outDir ? { outDir: o.outDir } : {}) });
  const status: StatusSources = {
    admin,
    hosts: kv.hosts,
    partitions: settings.partitions,
    slotMs: settings.revisitSlotMs,
    ...(o.outDir ? { outDir: o.outDir, output: () => views.output() } : {}),
  };
  const api = new JobApi({ store, settings, status, now: Date.now, seedGuard: seedGuard(settings) });
  let leader = false;
  const counted = o.metrics ? serviceMetrics(o.metrics, store, () => leader) : null;
  const onError = (err: Error) => o.log.error({ err: err.message }, 'API request failed');
  const http = await startHttpApi({ jobs: api, views, ...(o.outDir ? { outDir: o.outDir } : {}) }, o.host, o.port, onError, o.apiToken, (status) => counted?.answered('http', status));
  const natsApi = serveNatsApi(natsRequestServer(nc), api, onError, (status) => counted?.answered('nats', status));
  const publisher = connectionPublisher(nc);
  const lease = new ServiceLease(kv.jobs);
  const scheduler = new JobScheduler(store, publisher, settings.partitions, o.log);
  const dispatch = new RevisitDispatch({ admin, streams: streamAccess(nc), publisher, jobs: kv.jobs, jobOf: (id) => store.get(id), slotMs: settings.revisitSlotMs, partitions: settings.partitions, log: o.log });

  const lastIdleCheck = new Map<string, number>();
  const queuesEmptySince = new Map<string, number>();
  const idleNow = async (job: JobRecord) => {
    const now = Date.now();
    if (now - (lastIdleCheck.get(job.id) ?? 0) < IDLE_CHECK_EVERY_MS) return false;
    lastIdleCheck.set(job.id, now);
    const { queued, pipelineBusy } = await jobInFlight(status, job, now);
    if (queued) {
      queuesEmptySince.delete(job.id);
      return false;
    }
    const since = queuesEmptySince.get(job.id) ?? now;
    queuesEmptySince.set(job.id, since);
    return !pipelineBusy || now - since >= QUIET_JOB_MS;
  };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const now = Date.now();
        const holds = await lease.hold(now);
        if (holds !== leader) o.log.info({ member: lease.member }, holds ? 'this service schedules jobs and revisits' : 'another service schedules jobs and revisits');
        leader = holds;
        if (holds) {
          const runs = await scheduler.pass(now, idleNow);
          counted?.runs(runs.started, runs.finished);
          counted?.revisits(await dispatch.pass(now));
        }
        counted?.pass(holds ? 'leader' : 'follower');
      } catch (err) {
        counted?.pass('error');
        o.log.warn({ err: (err as Error).message }, 'scheduling pass failed; trying again');
      }
      await new Promise((resolve) => setTimeout(resolve, o.tickMs ?? 1000));
    }
  })();
  return {
    url: http.url,
    async stop() {
      stopped = true;
      await loop;
      natsApi.unsubscribe();
      await new Promise<void>((resolve) => http.server.close(() => resolve()));
      await views.close();
      if (leader) await lease.release().catch(() => undefined);
    },
  };
}
