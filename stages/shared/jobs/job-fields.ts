import type { RevisitState } from '../../../schemas/index.js';
import type { StageContext } from '../../../pipeline/stage.js';

/** What a URL carries about its crawl job from discovery to its outcome (schemas/url-messages.ts). */
export interface JobFields {
  job?: string | undefined;
  revisit?: RevisitState | undefined;
  hint_interval_ms?: number | undefined;
  fetch_as?: 'sitemap' | undefined;
  sitemap_level?: number | undefined;
}

/** The job fields of `m` that are set, to spread into the next message about the same URL. */
export function jobFieldsOf(m: JobFields): JobFields {
  const out: JobFields = {};
  if (m.job !== undefined) out.job = m.job;
  if (m.revisit !== undefined) out.revisit = m.revisit;
  if (m.hint_interval_ms !== undefined) out.hint_interval_ms = m.hint_interval_ms;
  if (m.fetch_as !== undefined) out.fetch_as = m.fetch_as;
  if (m.sitemap_level !== undefined) out.sitemap_level = m.sitemap_level;
  return out;
}

/** Only the job id (for links found on a page: they are new URLs of the same job). */
export const jobOf = (m: { job?: string | undefined }): { job?: string } => (m.job !== undefined ? { job: m.job } : {});

/** The crawl id of a URL's rows: its job's, else the deployment's own crawl. */
export const crawlIdOf = (ctx: StageContext, m: { job?: string | undefined }): string => m.job ?? ctx.settings.crawlId;
