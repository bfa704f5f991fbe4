import { encodeDiscoveredLinks, type DiscoveredLink, type JobRecord } from '../../schemas/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import type { Emit } from '../../pipeline/stage.js';
import { canonicalize } from '../../stages/normalize/index.js';

/**
 * The messages that start one run of a job: its seeds, as the job's links into normalize. The
 * first run's seeds are new URLs; a later run's are revisits (past the seen filter, each a
 * new fetch), so a scheduled job refetches its seeds and follows what is new on them. The
 * msgIds make a run published twice (a service that died before it noted the run) count once.
 */
export function runMessages(job: JobRecord, run: number, now: number, partitions: number): Emit[] {
  const byHost = new Map<string, DiscoveredLink[]>();
  for (const seed of job.spec.seeds) {
    const c = canonicalize(seed);
    if (!c.ok) continue; // checked when the job was created
    const link: DiscoveredLink =
      run === 1 ? { url: c.url } : { url: c.url, revisit: { interval_ms: Math.max(1, now - (job.last_run_at ?? now)), digest: null, simhash: null, fetched_at: job.last_run_at ?? now, due_at: now } };
    byHost.set(c.host, [...(byHost.get(c.host) ?? []), link]);
  }
  return [...byHost.entries()].map(([host, links]) => ({
    subject: subjectFor('links', host, partitions),
    msgId: `run:${job.id}:${run}:${host}`,
    data: encodeDiscoveredLinks({ v: 1, source_url: null, depth: 0, via: run === 1 ? 'seed' : 'revisit', links, job: job.id }),
  }));
}
