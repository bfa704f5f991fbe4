import { parseJsonValue } from '../../../pipeline/kv-store.js';
import type { KvStore } from '../../../ports/kv.js';
import type { JobRecord } from '../../../schemas/index.js';

/**
 * The crawl jobs a stage process has looked up, from the `crawl-jobs` bucket. A record is
 * kept for `ttlMs`, so a job paused or cancelled through the service is obeyed by every
 * stage within that time, without a KV read per message.
 */
export class JobRecordCache {
  private readonly cache = new Map<string, { record: JobRecord | null; until: number }>();
  private static readonly MAX_ENTRIES = 10_000;

  constructor(
    private readonly store: KvStore,
    private readonly ttlMs = 2000,
  ) {}

  /** The job's record, or null when there is no such job. */
  async get(id: string, now: number): Promise<JobRecord | null> {
    const hit = this.cache.get(id);
    if (hit && hit.until > now) return hit.record;
    const entry = await this.store.get(jobKey(id));
    const record = entry ? parseJsonValue<JobRecord>(entry.value) : null;
    if (this.cache.size >= JobRecordCache.MAX_ENTRIES) this.cache.clear();
    this.cache.set(id, { record, until: now + this.ttlMs });
    return record;
  }
}

/** A job's key in `crawl-jobs` (other keys there are the service's: leases, cursors). */
export const jobKey = (id: string) => `job.${id}`;
export const JOB_KEY_PREFIX = 'job.';

/** Why a URL of this job is not crawled any more, or null while the job runs (a paused job's URLs wait at the gate). */
export function jobStopped(record: JobRecord | null, id: string): string | null {
  if (!record) return `job_unknown: no job ${id}`;
  if (record.state === 'cancelled') return `job_cancelled: job ${id} was cancelled`;
  return null;
}
