import type { CrawlSettings } from '../../pipeline/settings.js';
import type { JobRecord, JobState } from '../../schemas/index.js';
import { jobStatus, type StatusSources } from './job-status.js';
import { newJobId, type JobStore } from './job-store.js';
import { validateJob, type FieldError } from './job-validation.js';
import type { SeedGuard } from './seed-guard.js';

/** What an API call answers, whatever carried it (HTTP, a NATS request): a status and a JSON body. */
export interface ApiAnswer {
  status: number;
  body: unknown;
  /** over HTTP only: sent as it is instead of `body` as JSON (a CSV download, the console's files) */
  raw?: { contentType: string; data: string | Buffer; headers?: Record<string, string> };
}

export interface JobApiDeps {
  store: JobStore;
  settings: CrawlSettings;
  status: StatusSources;
  now: () => number;
  /** the crawl's SSRF guard and scope rules for seeds (seed-guard.ts): a job cannot reach what the crawl would refuse */
  seedGuard: SeedGuard;
}

/** Seeds checked at once: a hostname seed costs a DNS lookup, and a job may have 10,000 seeds. */
const SEED_CHECKS_AT_ONCE = 32;

const fieldError = (e: FieldError): ApiAnswer => ({ status: 400, body: { error: { field: e.field, reason: e.reason } } });
const notFound = (id: string): ApiAnswer => ({ status: 404, body: { error: { field: 'id', reason: `no job ${id}` } } });

/**
 * The service's operations on crawl jobs, one function each, the same for both transports:
 * create (validated, persisted, its first run due at once), list, status, pause, resume,
 * cancel. A cancelled job's queued URLs end as filtered, its revisits are dropped.
 */
export class JobApi {
  constructor(private readonly d: JobApiDeps) {}

  async create(body: unknown, via: string): Promise<ApiAnswer> {
    const valid = validateJob(body, this.d.settings);
    if (!valid.ok) return fieldError(valid.error);
    const refused = await this.refusedSeed(valid.spec.seeds);
    if (refused) return fieldError(refused);
    const now = this.d.now();
    const job: JobRecord = {
      id: newJobId(),
      spec: valid.spec,
      state: 'active',
      created_at: now,
      runs: 0,
      last_run_at: null,
      next_run_at: now,
      via,
      scope_domains: valid.scopeDomains,
      min_delay_ms: this.d.settings.minDelayMs,
    };
    await this.d.store.create(job);
    return { status: 201, body: job };
  }

  async list(): Promise<ApiAnswer> {
    return { status: 200, body: { jobs: await this.d.store.list() } };
  }

  async get(id: string): Promise<ApiAnswer> {
    const job = await this.d.store.get(id);
    return job ? { status: 200, body: await jobStatus(this.d.status, job, this.d.now()) } : notFound(id);
  }

  pause(id: string): Promise<ApiAnswer> {
    return this.transition(id, 'paused', ['active'], (j) => j);
  }

  /** A resumed job whose runs fell due while it was paused runs at once. */
  resume(id: string): Promise<ApiAnswer> {
    return this.transition(id, 'active', ['paused'], (j) => j);
  }

  cancel(id: string): Promise<ApiAnswer> {
    return this.transition(id, 'cancelled', ['active', 'paused', 'done'], (j) => ({ ...j, next_run_at: null, finished_at: this.d.now() }));
  }

  /** The first seed the crawl would refuse (in list order), with the reason. */
  private async refusedSeed(seeds: readonly string[]): Promise<FieldError | null> {
    for (let i = 0; i < seeds.length; i += SEED_CHECKS_AT_ONCE) {
      const reasons = await Promise.all(seeds.slice(i, i + SEED_CHECKS_AT_ONCE).map((s) => this.d.seedGuard(s)));
      const at = reasons.findIndex((r) => r !== null);
      if (at >= 0) return { field: `seeds[${i + at}]`, reason: reasons[at]! };
    }
    return null;
  }

  private async transition(id: string, to: JobState, from: readonly JobState[], change: (j: JobRecord) => JobRecord): Promise<ApiAnswer> {
    const before = await this.d.store.get(id);
    if (!before) return notFound(id);
    if (before.state === to) return { status: 200, body: before };
    if (!from.includes(before.state)) return { status: 409, body: { error: { field: 'state', reason: `a ${before.state} job cannot become ${to}` } } };
    const after = await this.d.store.update(id, (j) => (from.includes(j.state) ? change({ ...j, state: to }) : null));
    return { status: 200, body: after };
  }

}
