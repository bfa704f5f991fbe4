import type { AdmittedUrl, JobPriority } from '../../../schemas/index.js';

/**
 * Which URL of a host goes first. A host's URLs wait in lanes, one queue (subject) each: a
 * priority level, and the crawl job they belong to. The gate serves a host's lanes by stride
 * scheduling: each lane has a weight, and of the lanes with work (and not paused) the one
 * with the smallest pass is served, its pass then growing by its stride, 1000 / weight. So
 * every lane with work gets its share of the host's requests, in proportion to its weight,
 * whatever the others hold: a high lane gets 4 requests to a normal lane's 2 and a low
 * lane's 1, and none of them waits forever. A lane that comes back after being idle joins
 * at the pass last served, not with credit saved up.
 *
 * Levels: `h`igh for seeds (a job's again on each scheduled run), sitemaps and what they
 * list, and revisits of pages that changed last time; `l`ow for links deeper than LOW_FROM_DEPTH; `w`aiting for
 * URLs the first pass holds back (stages/shared/breadth/first-pass.ts: not served at all
 * until it ends, then as low); a URL a stage module queued with a priority of its own takes
 * that level (high or low); `n`ormal for the rest. A job's
 * priority scales its lanes' weights (high ×2, low ×½). The deployment's own crawl at normal
 * priority uses the default lane '' (the queue's original subject).
 */
export type LaneLevel = 'h' | 'n' | 'l' | 'w';

const LEVEL_WEIGHT: Record<LaneLevel, number> = { h: 4, n: 2, l: 1, w: 1 };
const JOB_WEIGHT: Record<JobPriority, number> = { high: 2, normal: 1, low: 0.5 };
/** links this deep or deeper wait in the low lane */
export const LOW_FROM_DEPTH = 3;

export function levelOf(m: Pick<AdmittedUrl, 'via' | 'depth' | 'fetch_as' | 'revisit' | 'source_url' | 'held' | 'priority'>): LaneLevel {
  if (m.held) return 'w';
  if (m.priority === 'high') return 'h';
  if (m.priority === 'low') return 'l';
  if (m.via === 'seed' || m.via === 'sitemap' || m.fetch_as === 'sitemap') return 'h';
  // a job's seeds again (a scheduled run), or a page that changed last time
  if (m.via === 'revisit') return (m.depth === 0 && m.source_url === null) || m.revisit?.changed ? 'h' : 'n';
  return m.depth >= LOW_FROM_DEPTH ? 'l' : 'n';
}

/** The lane of a URL: its level, and its job when it has one. */
export function laneOf(m: Pick<AdmittedUrl, 'via' | 'depth' | 'fetch_as' | 'revisit' | 'job' | 'source_url' | 'held' | 'priority'>): string {
  const level = levelOf(m);
  if (m.job !== undefined) return `${level}-${m.job}`;
  return level === 'n' ? '' : level;
}

export const laneLevel = (lane: string): LaneLevel => (lane === '' ? 'n' : (lane[0] as LaneLevel));
export const laneJob = (lane: string): string | undefined => (lane.length > 2 ? lane.slice(2) : undefined);

export function laneWeight(lane: string, jobPriority: JobPriority = 'normal'): number {
  return LEVEL_WEIGHT[laneLevel(lane)] * JOB_WEIGHT[jobPriority];
}

/**
 * The lane to serve next: of `lanes` (with work, eligible), the one with the smallest pass;
 * a lane new to the host, or back from idle (its pass fell behind `vtime`, the pass last
 * served), joins at `vtime` plus its stride. Ties go to the heavier lane, then by name, so
 * every gate decides the same. Returns the lane, the new virtual time (its pass), and the
 * passes to keep: every considered lane's, the served one a stride on (lanes without work
 * are dropped, and join afresh when they have work again).
 */
export function nextLane(
  lanes: readonly string[],
  passes: Readonly<Record<string, number>> | undefined,
  vtime: number | undefined,
  weightOf: (lane: string) => number,
): { lane: string; vtime: number; passes: Record<string, number> } | null {
  const now = vtime ?? 0;
  const kept: Record<string, number> = {};
  let best: { lane: string; pass: number; weight: number } | null = null;
  for (const lane of lanes) {
    const weight = weightOf(lane);
    const stored = passes?.[lane];
    const pass = stored === undefined || stored < now ? now + 1000 / weight : stored;
    kept[lane] = pass;
    if (!best || pass < best.pass || (pass === best.pass && (weight > best.weight || (weight === best.weight && lane < best.lane)))) {
      best = { lane, pass, weight };
    }
  }
  if (!best) return null;
  kept[best.lane] = best.pass + 1000 / best.weight;
  return { lane: best.lane, vtime: best.pass, passes: kept };
}
