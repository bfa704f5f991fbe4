import { randomBytes } from 'node:crypto';
import { casUpdate, jsonValue, parseJsonValue } from '../../pipeline/kv-store.js';
import type { KvStore } from '../../ports/kv.js';
import type { JobRecord } from '../../schemas/index.js';
import { JOB_KEY_PREFIX, jobKey } from '../../stages/shared/jobs/job-records.js';

/** A new job id: `job-` and 10 letters or digits (a subject token, a crawl id, a lane name). */
export const newJobId = () => `job-${randomBytes(8).readBigUInt64BE().toString(36).slice(0, 10).padStart(10, '0')}`;

/** The crawl jobs in the `crawl-jobs` bucket: every service and stage process reads the same records. */
export class JobStore {
  constructor(private readonly kv: KvStore) {}

  async create(record: JobRecord): Promise<void> {
    await this.kv.create(jobKey(record.id), jsonValue(record));
  }

  async get(id: string): Promise<JobRecord | null> {
    const entry = await this.kv.get(jobKey(id));
    return entry ? parseJsonValue<JobRecord>(entry.value) : null;
  }

  async list(): Promise<JobRecord[]> {
    const out: JobRecord[] = [];
    for await (const key of this.kv.keys()) {
      if (!key.startsWith(JOB_KEY_PREFIX)) continue;
      const job = await this.get(key.slice(JOB_KEY_PREFIX.length));
      if (job) out.push(job);
    }
    return out.sort((a, b) => a.created_at - b.created_at || a.id.localeCompare(b.id));
  }

  /** Changes a job by compare-and-set (`change` returns null to leave it); the job as it is after, or null when there is none. */
  async update(id: string, change: (job: JobRecord) => JobRecord | null): Promise<JobRecord | null> {
    return casUpdate<JobRecord, JobRecord | null>(this.kv, jobKey(id), (current) => {
      if (!current) return { result: null };
      const next = change(current);
      return next ? { value: next, result: next } : { result: current };
    });
  }
}
