import type { StageMetrics } from '../../pipeline/metrics.js';
import { JOB_STATES, type JobState } from '../../schemas/index.js';
import type { JobStore } from './job-store.js';

/** The counters the service adds to `crawler_service_<what>_total{outcome}`, declared so the first scrape has them. */
const COUNTS = ['api_requests', 'scheduling_passes', 'job_runs', 'revisits_dispatched'] as const;

/**
 * Listing the jobs reads every job record: a scrape every 15 s should not repeat it more often
 * than this.
 */
const JOBS_MAX_AGE_MS = 10_000;

/** `http_2xx`, `nats_4xx`, ...: the transport and the status class (a bounded label set; never a path or a job id). */
export const apiOutcome = (transport: 'http' | 'nats', status: number) => `${transport}_${Math.floor(status / 100)}xx`;

export interface ServiceMetrics {
  /** an API answer sent, by transport and status */
  answered(transport: 'http' | 'nats', status: number): void;
  /** a scheduling pass: `leader` (it scheduled), `follower` (another service holds the lease), `error` */
  pass(outcome: 'leader' | 'follower' | 'error'): void;
  runs(started: number, finished: number): void;
  revisits(handed: number): void;
}

/**
 * What `crawl serve` counts beyond the stages it may run: API answers, scheduling passes,
 * job runs started and finished, revisits handed to the crawl, and two gauges read at scrape
 * time: the jobs by state and whether this service holds the scheduling lease.
 */
export function serviceMetrics(metrics: StageMetrics, store: JobStore, isLeader: () => boolean): ServiceMetrics {
  for (const what of COUNTS) metrics.declare('service', what);
  let last: { at: number; byState: Promise<Record<JobState, number>> } | undefined;
  metrics.collectedGauge('crawler_service_jobs', 'crawl jobs in the crawl-jobs bucket, by state (the same figure in every service)', ['state'], async () => {
    if (!last || Date.now() - last.at > JOBS_MAX_AGE_MS) {
      last = {
        at: Date.now(),
        byState: store.list().then((jobs) => {
          const byState = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
          for (const j of jobs) byState[j.state] += 1;
          return byState;
        }),
      };
    }
    const byState = await last.byState;
    return JOB_STATES.map((state) => ({ labels: { state }, value: byState[state] }));
  });
  metrics.collectedGauge('crawler_service_leader', '1 while this service holds the lease that schedules job runs and revisits, else 0', [], async () => [
    { labels: {}, value: isLeader() ? 1 : 0 },
  ]);
  return {
    answered: (transport, status) => metrics.count('service', 'api_requests', apiOutcome(transport, status)),
    pass: (outcome) => metrics.count('service', 'scheduling_passes', outcome),
    runs(started, finished) {
      if (started > 0) metrics.count('service', 'job_runs', 'started', started);
      if (finished > 0) metrics.count('service', 'job_runs', 'finished', finished);
    },
    revisits: (handed) => {
      if (handed > 0) metrics.count('service', 'revisits_dispatched', 'handed', handed);
    },
  };
}
