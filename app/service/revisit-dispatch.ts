import { decodeRevisit, encodeDiscoveredLinks, type DiscoveredLink, type JobRecord, type RevisitRecord } from '../../schemas/index.js';
import { EDGES, SUBJECTS } from '../../topology/index.js';
import { casUpdate } from '../../pipeline/kv-store.js';
import { partitionOf, subjectFor } from '../../pipeline/partition.js';
import type { Logger } from '../../pipeline/logger.js';
import type { Emit } from '../../pipeline/stage.js';
import type { KvStore } from '../../ports/kv.js';
import type { StreamAdmin } from '../../ports/stream-admin.js';
import type { Publisher, StreamAccess } from '../../ports/streams.js';
import { slotOf } from '../../stages/shared/revisits/revisit-emit.js';

const CURSOR_KEY = '_revisits.cursor';
/** Links per message into normalize: small enough for any message budget. */
const LINKS_PER_MESSAGE = 200;

export interface RevisitDispatchDeps {
  admin: Pick<StreamAdmin, 'subjectCounts' | 'lastSeq' | 'purgeSubject'>;
  streams: Pick<StreamAccess, 'replay'>;
  publisher: Publisher;
  jobs: KvStore;
  jobOf: (id: string) => Promise<JobRecord | null>;
  slotMs: number;
  partitions: number;
  log: Logger;
}

/**
 * Hands out the revisits that came due. The schedule is the CRAWL_REVISITS stream, one
 * subject per time slot and job (`crawl.revisit.<slot>.<job>`); a cursor in `crawl-jobs`
 * says which slots are done. Each pass takes the slots up to now: a running job's records go
 * to normalize as its revisits (`via: revisit`, past the seen filter), a cancelled job's are
 * dropped, and a paused job's stay where they are until it resumes (the sweep finds them).
 * A slot's subjects are purged once handed out. A process that dies halfway hands the same
 * records out again when it restarts: the msgIds keep that to one fetch.
 */
export class RevisitDispatch {
  private lastSweep = 0;

  constructor(private readonly d: RevisitDispatchDeps) {}

  /** Due slots up to `now`; and, every `sweepEveryMs`, every slot left behind (a paused job's, after it resumed). */
  async pass(now: number, sweepEveryMs = 30_000): Promise<number> {
    const due = slotOf(now, this.d.slotMs);
    const cursor = await this.cursor(due);
    let handed = 0;
    for (let slot = cursor + 1; slot <= due; slot++) handed += await this.takeSubjects(`${SUBJECTS.revisit}.${slot}.*`, now);
    if (due > cursor) await this.setCursor(due);
    if (now - this.lastSweep >= sweepEveryMs) {
      this.lastSweep = now;
      handed += await this.takeSubjects(`${SUBJECTS.revisit}.*.*`, now, due);
    }
    return handed;
  }

  /** The slot handed out last; a first pass starts just before now (earlier slots are found by the sweep). */
  private async cursor(due: number): Promise<number> {
    const entry = await this.d.jobs.get(CURSOR_KEY);
    return entry ? Number(new TextDecoder().decode(entry.value)) : due - 1;
  }

  private async setCursor(slot: number): Promise<void> {
    await casUpdate<number, void>(this.d.jobs, CURSOR_KEY, (current) => (current !== null && current >= slot ? { result: undefined } : { value: slot, result: undefined }));
  }

  /** Every subject matching `filter` in a slot at or before `maxSlot`. */
  private async takeSubjects(filter: string, now: number, maxSlot = Number.POSITIVE_INFINITY): Promise<number> {
    const subjects = Object.keys(await this.d.admin.subjectCounts(EDGES.revisits.stream, filter)).filter((s) => Number(s.split('.')[2]) <= maxSlot);
    let handed = 0;
    for (const subject of subjects) handed += await this.takeSubject(subject, now);
    return handed;
  }

  private async takeSubject(subject: string, now: number): Promise<number> {
    const jobId = subject.split('.')[3]!;
    const job = await this.d.jobOf(jobId);
    if (job?.state === 'paused') return 0;
    const lastSeq = await this.d.admin.lastSeq(EDGES.revisits.stream, subject);
    if (lastSeq === null) return 0;
    let handed = 0;
    if (job && job.state !== 'cancelled') {
      let batch: RevisitRecord[] = [];
      for await (const m of this.d.streams.replay(EDGES.revisits.stream, subject, 1, lastSeq)) {
        batch.push(decodeRevisit(m.data));
        if (batch.length >= LINKS_PER_MESSAGE * 4) {
          handed += await this.publish(job, batch, `${subject}:${m.seq}`);
          batch = [];
        }
      }
      if (batch.length > 0) handed += await this.publish(job, batch, `${subject}:${lastSeq}`);
    }
    // handed out (or a cancelled job's): gone from the schedule, up to what was read
    await this.d.admin.purgeSubject(EDGES.revisits.stream, subject, lastSeq);
    if (handed > 0) this.d.log.info({ job: jobId, revisits: handed, late_ms: Math.max(0, now - Number(subject.split('.')[2]) * this.d.slotMs) }, 'revisits due');
    return handed;
  }

  /** One message per host partition and depth (a links message has one depth), in runs of LINKS_PER_MESSAGE. */
  private async publish(job: JobRecord, records: RevisitRecord[], key: string): Promise<number> {
    const groups = new Map<string, RevisitRecord[]>();
    for (const r of records) {
      const g = `${partitionOf(r.host, this.d.partitions)}:${r.depth}`;
      groups.set(g, [...(groups.get(g) ?? []), r]);
    }
    const emits: Emit[] = [];
    for (const [g, rs] of groups) {
      for (let i = 0; i < rs.length; i += LINKS_PER_MESSAGE) {
        const part = rs.slice(i, i + LINKS_PER_MESSAGE);
        const links: DiscoveredLink[] = part.map((r) => ({ url: r.url, revisit: r.state }));
        emits.push({
          subject: subjectFor('links', part[0]!.host, this.d.partitions),
          msgId: `revisit-due:${key}:${g}:${i}`,
          data: encodeDiscoveredLinks({ v: 1, source_url: null, depth: part[0]!.depth, via: 'revisit', links, job: job.id }),
        });
      }
    }
    await this.d.publisher.publish(emits);
    return records.length;
  }
}
