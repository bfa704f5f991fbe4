import type { JobRecordCache } from '../shared/jobs/job-records.js';
import { jobStopped } from '../shared/jobs/job-records.js';
import type { JobRecord } from '../../schemas/index.js';
import { canonicalize } from './canonical-url.js';
import { parsePattern, type ScopedUrl, type ScopeRules } from './scope.js';
import type { ScopeCache } from './scope-cache.js';
import { lookupKeys, prefixesOf, seedScopeKeys, urlPrefixOf } from './scope-keys.js';

/** How the links of one crawl (the deployment's, or a job's) are judged. */
export interface LinkScope {
  rules: ScopeRules;
  /** whether the scope mode takes the URL in (its seeds', or its seeds' redirects', domain, host or prefix) */
  inScope(u: ScopedUrl): Promise<boolean> | boolean;
  /** takes a seed's redirect target in, as the seed's mode would have taken it had it been the seed */
  widen(u: ScopedUrl): Promise<void>;
}

/** A job's scope keys in the shared `crawl-scope` bucket: its seeds' redirect targets. */
const jobKey = (job: string, key: string) => `job=${job}/${key}`;

/** What a job's own record puts in its scope: the domains it names (or its seeds'), its seeds' hosts and prefixes. */
function recordScope(record: JobRecord): (u: ScopedUrl) => boolean {
  const mode = record.spec.scope?.mode ?? 'domain';
  if (mode === 'open') return () => true;
  if (mode === 'domain') {
    const domains = new Set(record.scope_domains);
    return (u) => domains.has(u.registrableDomain);
  }
  const seeds = record.spec.seeds.flatMap((s) => {
    const c = canonicalize(s);
    return c.ok ? [c] : [];
  });
  if (mode === 'host') {
    const hosts = new Set(seeds.map((c) => c.host));
    return (u) => hosts.has(u.host);
  }
  const prefixes = new Set(seeds.map((c) => urlPrefixOf(c.url)));
  return (u) => prefixesOf(u.url).some((p) => prefixes.has(p));
}

/**
 * A job's scope: its mode over the domains it names (or its seeds' registrable domains, hosts
 * or prefixes), widened by its seeds' redirects, with its include/exclude patterns and maximum
 * depth, compiled once per version of its record.
 */
export class JobScopes {
  private readonly compiled = new Map<string, { createdAt: number; scope: LinkScope }>();

  constructor(
    private readonly jobs: JobRecordCache,
    private readonly scopeKeys: ScopeCache,
    private readonly now: () => number,
  ) {}

  async scopeOf(id: string, now: number): Promise<LinkScope | { stopped: string }> {
    const record = await this.jobs.get(id, now);
    const stopped = jobStopped(record, id);
    if (stopped || !record) return { stopped: stopped ?? `job_unknown: no job ${id}` };
    const hit = this.compiled.get(id);
    if (hit && hit.createdAt === record.created_at) return hit.scope;
    const rules: ScopeRules = {
      mode: record.spec.scope?.mode ?? 'domain',
      include: (record.spec.scope?.include ?? []).map(parsePattern),
      exclude: (record.spec.scope?.exclude ?? []).map(parsePattern),
      maxDepth: record.spec.max_depth,
    };
    const own = recordScope(record);
    const scope: LinkScope = {
      rules,
      inScope: (u) => own(u) || this.scopeKeys.hasAny(lookupKeys(rules.mode, u).map((k) => jobKey(id, k)), this.now()),
      widen: (u) => this.scopeKeys.addAll(seedScopeKeys(u).map((k) => jobKey(id, k))),
    };
    if (this.compiled.size >= 10_000) this.compiled.clear();
    this.compiled.set(id, { createdAt: record.created_at, scope });
    return scope;
  }
}
