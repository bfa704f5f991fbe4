import type { JobRecord } from '../../schemas/index.js';
import type { StageContext } from '../../pipeline/stage.js';
import { laneJob, laneLevel, laneWeight, nextLane, type HostSlot } from '../shared/politeness/index.js';
import { heldLanesWait } from '../shared/breadth/first-pass.js';
import { JobRecordCache, jobStopped } from '../shared/jobs/job-records.js';
import { oncePerObject } from '../shared/once-per-object.js';

const jobRecordsOf = oncePerObject((ctx: StageContext) => new JobRecordCache(ctx.kv.jobs));

/** A paused job's lanes are looked at again this often (its URLs wait in them meanwhile). */
export const PAUSED_RECHECK_MS = 2000;

interface LaneWithWork {
  lane: string;
  cursor: number;
  tail: number;
}

export type LanePick =
  | {
      kind: 'serve';
      lane: LaneWithWork;
      /** stride scheduling: the virtual time it is served at, and the lane's pass after it (null: leave them) */
      stride: { vtime: number; passes: Record<string, number> } | null;
      /** set when the lane's job was cancelled: its URLs end with this reason */
      stopped: string | null;
      /** the job's own minimum delay between requests (0: none) */
      minDelayMs: number;
      /** the lane's job, when it has one */
      job: JobRecord | null;
      /** the other lanes that could have been served (with work, their job running) */
      others: LaneWithWork[];
    }
  | { kind: 'wait'; until: number }
  /** only held lanes have work, and the first pass holds them (stages/shared/breadth/first-pass.ts) */
  | { kind: 'held' };

/**
 * Which of a host's lanes with work to serve now (host-lanes.ts): a cancelled job's lane
 * first (its URLs end without a request), then by stride among the lanes of running jobs and
 * of the crawl itself; a paused job's lanes are left alone. Only paused lanes: come back later.
 * The held lane waits while the first pass is on; a host with nothing else is `held`.
 */
export async function pickLane(ctx: StageContext, lanes: readonly LaneWithWork[], slot: HostSlot | null, now: number): Promise<LanePick> {
  const jobs = new Map<string, JobRecord | null>();
  for (const l of lanes) {
    const id = laneJob(l.lane);
    if (id !== undefined && !jobs.has(id)) jobs.set(id, await jobRecordsOf(ctx).get(id, now));
  }
  const eligible: LaneWithWork[] = [];
  for (const l of lanes) {
    const id = laneJob(l.lane);
    if (id === undefined) {
      eligible.push(l);
      continue;
    }
    const record = jobs.get(id) ?? null;
    const stopped = jobStopped(record, id);
    if (stopped) return { kind: 'serve', lane: l, stride: null, stopped, minDelayMs: 0, job: null, others: [] };
    if (record!.state !== 'paused') eligible.push(l);
  }
  if (eligible.some((l) => laneLevel(l.lane) === 'w') && (await heldLanesWait(ctx))) {
    const unheld = eligible.filter((l) => laneLevel(l.lane) !== 'w');
    if (unheld.length === 0) return { kind: 'held' };
    eligible.splice(0, eligible.length, ...unheld);
  }
  const weightOf = (lane: string) => laneWeight(lane, jobs.get(laneJob(lane) ?? '')?.spec.priority);
  const next = nextLane(eligible.map((l) => l.lane), slot?.lane_pass, slot?.vtime, weightOf);
  if (!next) return { kind: 'wait', until: now + PAUSED_RECHECK_MS };
  const lane = eligible.find((l) => l.lane === next.lane)!;
  const job = jobs.get(laneJob(lane.lane) ?? '') ?? null;
  const others = eligible.filter((l) => l !== lane);
  return { kind: 'serve', lane, stride: { vtime: next.vtime, passes: next.passes }, stopped: null, minDelayMs: job?.spec.politeness?.min_delay_ms ?? 0, job, others };
}
