import type { JobBook } from '../shared/job-book.js';
import { jobStopped } from '../shared/job-book.js';
import { parsePattern } from './scope.js';

/** How the links of one crawl (the deployment's, or a job's) are judged. */
export interface LinkScope {
  include: RegExp[];
  exclude: RegExp[];
  maxDepth: number;
  inScope(registrableDomain: string): Promise<boolean> | boolean;
}

/**
 * A job's scope: the domains it names (or its seeds' registrable domains), its
 * include/exclude patterns and maximum depth, compiled once per version of its record.
 */
export class JobScopes {
  private readonly compiled = new Map<string, { createdAt: number; scope: LinkScope }>();

  constructor(private readonly jobs: JobBook) {}

  async scopeOf(id: string, now: number): Promise<LinkScope | { stopped: string }> {
    const record = await this.jobs.get(id, now);
    const stopped = jobStopped(record, id);
    if (stopped || !record) return { stopped: stopped ?? `job_unknown: no job ${id}` };
    const hit = this.compiled.get(id);
    if (hit && hit.createdAt === record.created_at) return hit.scope;
    const domains = new Set(record.scope_domains);
    const scope: LinkScope = {
      include: (record.spec.scope?.include ?? []).map(parsePattern),
      exclude: (record.spec.scope?.exclude ?? []).map(parsePattern),
      maxDepth: record.spec.max_depth,
      inScope: (domain) => domains.has(domain),
    };
    if (this.compiled.size >= 10_000) this.compiled.clear();
    this.compiled.set(id, { createdAt: record.created_at, scope });
    return scope;
  }
}
