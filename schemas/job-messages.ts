import { z } from 'zod';
import { SCOPE_MODES } from './scope-mode.js';

/**
 * Crawl jobs: what a client submits to `crawl serve` (over HTTP or a NATS request), and
 * what the service keeps of each job in the `crawl-jobs` bucket. A job's id is also the
 * crawl id of its rows in the output, and travels on every message of its URLs (`job`).
 *
 * Validated strictly at the edge (unknown fields are errors): the API is where users write.
 */

/** Durations are milliseconds, or a string such as `90s`, `15m`, `6h`, `7d`. */
const Duration = z.union([z.number().int().positive(), z.string().regex(/^\d+(ms|s|m|h|d)$/, 'a duration such as 500ms, 30s, 15m, 6h or 7d')]);

export function durationMs(d: number | string): number {
  if (typeof d === 'number') return d;
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(d)!;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit;
}

export const JobSchedule = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('once') }).strict(),
  z.object({ kind: z.literal('interval'), every: Duration }).strict(),
  z.object({ kind: z.literal('cron'), cron: z.string().min(1).max(200) }).strict(),
]);
export type JobSchedule = z.infer<typeof JobSchedule>;

/**
 * Adaptive revisits. `estimate` (the default) estimates each URL's change rate from what its
 * revisits found (changes seen in recent checks, Cho and Garcia-Molina's estimator) and
 * revisits it every initial^(2/3) × (estimated change period)^(1/3): a page that changes once
 * per `initial` is revisited every `initial`, one changing 8 times as often twice as often,
 * the allocation that keeps the mean age of the stored copies lowest for the requests spent.
 * `multiplicative` is Nutch's AdaptiveFetchSchedule and StormCrawler's AdaptiveScheduler:
 * after a fetch that found the page unchanged the interval grows by `increase` (× (1 +
 * increase)), after a change it shrinks by `decrease` (× (1 − decrease)). Both stay within
 * [min, max]; a failed fetch grows the interval by `increase`. `initial` is also the first
 * interval, unless the sitemap or Last-Modified suggests one.
 */
export const RevisitPolicy = z
  .object({
    enabled: z.boolean().default(true),
    strategy: z.enum(['estimate', 'multiplicative']).default('estimate'),
    initial: Duration.default('1d'),
    min: Duration.default('1h'),
    max: Duration.default('14d'),
    increase: z.number().min(0).max(10).default(0.5),
    decrease: z.number().min(0).max(0.95).default(0.5),
  })
  .strict();
export type RevisitPolicy = z.infer<typeof RevisitPolicy>;

export const JobPriority = z.enum(['high', 'normal', 'low']);
export type JobPriority = z.infer<typeof JobPriority>;

/**
 * What a job's seeds reach (the modes of `crawl run --scope`) and the patterns that widen or
 * narrow it: an exclude pattern always wins; with include patterns, a URL is in scope iff it
 * matches one, on any host; without, the mode decides. `"scope": "open"` is short for
 * `{"mode": "open"}`.
 */
export const JobScope = z.preprocess(
  (v) => (typeof v === 'string' ? { mode: v } : v),
  z
    .object({
      mode: z.enum(SCOPE_MODES).optional(),
      /** registrable domains in scope (mode `domain` only); default: the seeds' */
      domains: z.array(z.string().min(1).max(253)).max(10_000).optional(),
      include: z.array(z.string().min(1).max(1000)).max(100).optional(),
      exclude: z.array(z.string().min(1).max(1000)).max(100).optional(),
    })
    .strict(),
);

/** What a client sends to create a job. */
export const JobSpec = z
  .object({
    name: z.string().max(200).optional(),
    seeds: z.array(z.string().min(1).max(2048)).min(1).max(10_000),
    scope: JobScope.optional(),
    max_depth: z.number().int().min(0).max(1000).default(5),
    /** 0: no limit */
    max_pages: z.number().int().min(0).default(0),
    /** only stricter than the deployment's settings: checked when the job is created */
    politeness: z
      .object({
        min_delay_ms: z.number().int().min(0).max(3_600_000).optional(),
      })
      .strict()
      .optional(),
    schedule: JobSchedule.default({ kind: 'once' }),
    revisit: RevisitPolicy.optional(),
    priority: JobPriority.default('normal'),
    /** read the sitemaps robots.txt names (and /sitemap.xml) */
    sitemaps: z.boolean().default(true),
  })
  .strict();
export type JobSpecInput = z.input<typeof JobSpec>;
export type JobSpec = z.infer<typeof JobSpec>;

export const JOB_STATES = ['active', 'paused', 'cancelled', 'done'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** A job as the `crawl-jobs` bucket keeps it. */
export interface JobRecord {
  id: string;
  spec: JobSpec;
  state: JobState;
  created_at: number;
  /** runs started so far (a run publishes the seeds again) */
  runs: number;
  last_run_at: number | null;
  /** null: no further run (a `once` job after its run, a cancelled job) */
  next_run_at: number | null;
  /** when the job became done (its one run finished) or was cancelled */
  finished_at?: number | null;
  /** where the job came from: `http` or `nats` */
  via: string;
  /** the registrable domains in scope: `spec.scope.domains`, else the seeds' (worked out at creation) */
  scope_domains: string[];
  /** its deployment's minimum delay when it was created, for the record */
  min_delay_ms: number;
}
