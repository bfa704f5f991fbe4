import { z } from 'zod';
import { JobSpec, type JobSpecInput } from '../../schemas/index.js';
import type { CrawlSettings } from '../../pipeline/settings.js';
import { canonicalize } from '../../stages/normalize/index.js';
import { parsePattern } from '../../stages/normalize/scope.js';
import { cronProblem } from './job-schedule.js';

/** A request the API refuses: which field, and why (the answer is a 400). */
export interface FieldError {
  field: string;
  reason: string;
}

export type ValidJob = { ok: true; spec: JobSpec; scopeDomains: string[] } | { ok: false; error: FieldError };

const fieldOf = (path: readonly PropertyKey[]) =>
  path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)), '') || '(body)';

/**
 * A job as a client sent it, checked as the crawl will use it: the schema (unknown fields are
 * errors), every seed a URL the crawl accepts, patterns and cron expressions that compile,
 * and politeness only stricter than the deployment's. In mode `domain` (the default) the scope
 * is the seeds' registrable domains unless the job names its own.
 */
export function validateJob(input: unknown, settings: CrawlSettings): ValidJob {
  const parsed = JobSpec.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.code === 'unrecognized_keys' ? fieldOf([...issue.path, issue.keys[0]!]) : fieldOf(issue.path);
    const reason = issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message;
    return { ok: false, error: { field, reason } };
  }
  const spec = parsed.data;
  const domains = new Set<string>();
  for (const [i, seed] of spec.seeds.entries()) {
    const c = canonicalize(seed);
    if (!c.ok) return { ok: false, error: { field: `seeds[${i}]`, reason: `${c.reason}: ${c.detail}` } };
    domains.add(c.registrableDomain);
  }
  for (const key of ['include', 'exclude'] as const) {
    for (const [i, p] of (spec.scope?.[key] ?? []).entries()) {
      try {
        parsePattern(p);
      } catch (err) {
        return { ok: false, error: { field: `scope.${key}[${i}]`, reason: (err as Error).message } };
      }
    }
  }
  const mode = spec.scope?.mode ?? 'domain';
  if (spec.scope?.domains && mode !== 'domain') {
    return { ok: false, error: { field: 'scope.domains', reason: `names registrable domains, so only with mode "domain" (this job's mode is "${mode}")` } };
  }
  if (spec.schedule.kind === 'cron') {
    const problem = cronProblem(spec.schedule.cron);
    if (problem) return { ok: false, error: { field: 'schedule.cron', reason: `does not parse: ${problem}` } };
  }
  const minDelay = spec.politeness?.min_delay_ms;
  if (minDelay !== undefined && minDelay < settings.minDelayMs) {
    return { ok: false, error: { field: 'politeness.min_delay_ms', reason: `may only be stricter than the crawl's minimum of ${settings.minDelayMs} ms` } };
  }
  const scopeDomains = spec.scope?.domains?.map((d) => d.toLowerCase().replace(/\.$/, '')) ?? [...domains];
  return { ok: true, spec, scopeDomains };
}

/** The JSON a client may send: for the OpenAPI document's test, the field names the schema knows. */
export const jobSpecFields = (): string[] => Object.keys((JobSpec as unknown as z.ZodObject<z.ZodRawShape>).shape);
export type { JobSpecInput };
