import type { Logger } from '../../pipeline/logger.js';
import type { Publisher } from '../../ports/streams.js';
import type { JobRecord } from '../../schemas/index.js';
import { nextRunAfter } from './job-schedule.js';
import { runMessages } from './job-runs.js';
import type { JobStore } from './job-store.js';

/**
 * Starts the runs that are due: a job whose `next_run_at` has come gets its seeds published
 * (job-runs.ts) and its record moved on (runs + 1, the next time from its schedule), the
 * publish first: a service that dies between the two publishes the same run again, which
 * the msgIds drop, and then notes it. A `once` job is done once its run has nothing left in
 * flight (`idle`, judged by the caller: no URL of it queued, nothing in the pipeline).
 */
export class JobScheduler {
  constructor(
    private readonly store: JobStore,
    private readonly publisher: Publisher,
    private readonly partitions: number,
    private readonly log: Logger,
  ) {}

  /** Runs started and jobs finished by this pass (for the service's metrics). */
  async pass(now: number, idle: (job: JobRecord) => Promise<boolean>): Promise<{ started: number; finished: number }> {
    const done = { started: 0, finished: 0 };
    for (const job of await this.store.list()) {
      if (job.state !== 'active') continue;
      if (job.next_run_at !== null && job.next_run_at <= now) {
        await this.startRun(job, now);
        done.started += 1;
      } else if (job.next_run_at === null && !job.spec.revisit?.enabled && job.runs > 0 && (await idle(job))) {
        await this.finish(job, now);
        done.finished += 1;
      }
    }
    return done;
  }

  private async startRun(job: JobRecord, now: number): Promise<void> {
    const run = job.runs + 1;
    await this.publisher.publish(runMessages(job, run, now, this.partitions));
    const updated = await this.store.update(job.id, (j) =>
      j.runs >= run || j.state !== 'active' ? null : { ...j, runs: run, last_run_at: now, next_run_at: nextRunAfter(j.spec.schedule, now) },
    );
    this.log.info({ job: job.id, run, next_run_at: updated?.next_run_at ?? null }, 'job run started');
  }

  private async finish(job: JobRecord, now: number): Promise<void> {
    await this.store.update(job.id, (j) => (j.state === 'active' && j.next_run_at === null ? { ...j, state: 'done', finished_at: now } : null));
    this.log.info({ job: job.id }, 'job done');
  }
}
