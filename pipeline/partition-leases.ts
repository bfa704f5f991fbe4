import { jsonValue, parseJsonValue } from './kv-store.js';
import { KvConflictError, type KvStore } from '../ports/kv.js';

/**
 * Partition leases. Members (`members.<stage>`: process id → expiry) are the processes that
 * share a partitioned stage's work; each renews its own entry every third of the lease time,
 * and each aims at ceil(P / members) partitions. A partition's key (`lease.<stage>.p<N>` =
 * {owner}) is written only to take or give it up, with compare-and-set, so at most one process
 * holds a partition at a time; it is held while its owner is a live member. One write a round
 * keeps all of a process's partitions, however many it holds: an idle crawl's leases cost one
 * request every few seconds, not one per partition.
 *
 * A member that stopped renewing is removed from the record (compare-and-set) by the next
 * process that sees it lapsed, before that process takes any of its partitions; the lapsed
 * process learns it was removed at its next write (its revision is stale, and the record no
 * longer names it), stops serving every partition and joins again under a new id, so its old
 * leases stay free. Expiry compares wall clocks of different machines: keep them in sync
 * (NTP) to well within the lease time.
 */
export interface Lease {
  owner: string;
}

export interface HeldLease {
  revision: number;
}

/** Live members by id (each one's expiry), as the last heartbeat read or wrote them. */
export type Members = Readonly<Record<string, number>>;

export const leaseKey = (stage: string, partition: number) => `lease.${stage}.p${partition}`;
const membersKey = (stage: string) => `members.${stage}`;

/** Held: its owner is a live member (a lease of a process that left or lapsed is free). */
export const leaseLive = (lease: Lease | null, members: Members, now: number): lease is Lease =>
  lease !== null && lease.owner !== '' && (members[lease.owner] ?? 0) > now;

export interface LeasePlanInput {
  self: string;
  now: number;
  partitions: number;
  /** live members, this process included */
  members: Members;
  /** the lease read for each partition (null: never taken) */
  leases: Array<Lease | null>;
  /** partitions this process holds */
  held: ReadonlySet<number>;
}

/**
 * Which partitions to take and which to give up. Every process aims at ceil(P / members);
 * free or lapsed leases are taken in an order that starts at a place derived from the
 * process id, so processes starting together do not all race for partition 0.
 */
export function planLeases(input: LeasePlanInput): { acquire: number[]; release: number[] } {
  const target = Math.ceil(input.partitions / Math.max(1, Object.keys(input.members).length));
  const held = [...input.held].sort((a, b) => a - b);
  if (held.length > target) return { acquire: [], release: held.slice(target) };
  const acquire: number[] = [];
  const start = startOffset(input.self, input.partitions);
  for (let i = 0; i < input.partitions && held.length + acquire.length < target; i++) {
    const p = (start + i) % input.partitions;
    if (input.held.has(p)) continue;
    if (!leaseLive(input.leases[p] ?? null, input.members, input.now)) acquire.push(p);
  }
  return { acquire, release: [] };
}

function startOffset(id: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (Math.imul(h, 31) + id.charCodeAt(i)) >>> 0;
  return h % partitions;
}

/** What a heartbeat found: the live members, or that this process had been removed. */
export type Heartbeat = { members: Members; evicted: false } | { evicted: true };

/** KV operations on leases and members; every write is compare-and-set. */
export class LeaseTable {
  /** the members record as this process last wrote it: a write at its revision needs no read first */
  private written: { members: Record<string, number>; revision: number } | null = null;

  constructor(
    private readonly kv: KvStore,
    private readonly stage: string,
    private readonly self: string,
    private readonly ttlMs: number,
  ) {}

  async read(partition: number): Promise<{ lease: Lease | null; revision: number | null }> {
    const entry = await this.kv.get(leaseKey(this.stage, partition));
    return entry ? { lease: parseJsonValue<Lease>(entry.value), revision: entry.revision } : { lease: null, revision: null };
  }

  /**
   * Takes a free lease read at `revision` (its owner gone from the members this process just
   * wrote); null when someone else was faster.
   */
  async acquire(partition: number, revision: number | null): Promise<HeldLease | null> {
    const lease: Lease = { owner: this.self };
    try {
      const key = leaseKey(this.stage, partition);
      const rev = revision === null ? await this.kv.create(key, jsonValue(lease)) : await this.kv.update(key, jsonValue(lease), revision);
      return { revision: rev };
    } catch (err) {
      if (err instanceof KvConflictError) return null;
      throw err;
    }
  }

  /** Gives a lease up at once, so the next owner need not wait for it to lapse. */
  async release(partition: number, held: HeldLease): Promise<void> {
    await this.kv.update(leaseKey(this.stage, partition), jsonValue({ owner: '' } satisfies Lease), held.revision).catch((err) => {
      if (!(err instanceof KvConflictError)) throw err;
    });
  }

  /**
   * Renews this process's membership (every lease it holds with it), removing members that
   * lapsed; with `leaving`, removes it. Evicted: another process removed this one after it
   * lapsed and may hold its partitions now; it must stop serving them and join as a new member.
   */
  async heartbeat(now: number, leaving = false): Promise<Heartbeat> {
    const key = membersKey(this.stage);
    let known = this.written;
    for (;;) {
      if (!known) {
        const entry = await this.kv.get(key);
        known = { members: entry ? parseJsonValue(entry.value) : {}, revision: entry?.revision ?? 0 };
        if (this.written && !(this.self in known.members)) {
          this.written = null;
          return { evicted: true };
        }
      }
      const members = { ...known.members };
      for (const [id, expires] of Object.entries(members)) if (expires <= now) delete members[id];
      if (leaving) delete members[this.self];
      else members[this.self] = now + this.ttlMs;
      try {
        const revision = known.revision === 0 ? await this.kv.create(key, jsonValue(members)) : await this.kv.update(key, jsonValue(members), known.revision);
        this.written = leaving ? null : { members, revision };
        return { members, evicted: false };
      } catch (err) {
        if (!(err instanceof KvConflictError)) throw err;
        known = null; // someone else wrote it: read it and decide again
      }
    }
  }
}
