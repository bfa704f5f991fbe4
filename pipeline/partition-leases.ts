import { jsonValue, parseJsonValue } from './kv-store.js';
import { KvConflictError, type KvStore } from '../ports/kv.js';

/**
 * Partition leases: one KV key per partition, `lease.<stage>.p<N>` = {owner, expires_at},
 * taken and renewed with compare-and-set, so at most one process holds a partition at a
 * time. A dead owner stops renewing; its lease lapses and another process takes it.
 * Members (`members.<stage>`: process id → expiry) say how many processes share the work,
 * so each aims at ceil(P / members) partitions and gives up the extra ones.
 * Expiry compares wall clocks of different machines: keep them in sync (NTP) to well within
 * the lease time.
 */
export interface Lease {
  owner: string;
  expires_at: number;
}

export interface HeldLease {
  revision: number;
  expiresAt: number;
}

export const leaseKey = (stage: string, partition: number) => `lease.${stage}.p${partition}`;
const membersKey = (stage: string) => `members.${stage}`;

export const leaseLive = (lease: Lease | null, now: number): lease is Lease => lease !== null && lease.owner !== '' && lease.expires_at > now;

export interface LeasePlanInput {
  self: string;
  now: number;
  partitions: number;
  /** live members, this process included */
  members: number;
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
  const target = Math.ceil(input.partitions / Math.max(1, input.members));
  const held = [...input.held].sort((a, b) => a - b);
  if (held.length > target) return { acquire: [], release: held.slice(target) };
  const acquire: number[] = [];
  const start = startOffset(input.self, input.partitions);
  for (let i = 0; i < input.partitions && held.length + acquire.length < target; i++) {
    const p = (start + i) % input.partitions;
    if (input.held.has(p)) continue;
    if (!leaseLive(input.leases[p] ?? null, input.now)) acquire.push(p);
  }
  return { acquire, release: [] };
}

function startOffset(id: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (Math.imul(h, 31) + id.charCodeAt(i)) >>> 0;
  return h % partitions;
}

/** KV operations on leases and members; every write is compare-and-set. */
export class LeaseTable {
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

  /** Takes a free or lapsed lease read at `revision`; null when someone else was faster. */
  async acquire(partition: number, revision: number | null, now: number): Promise<HeldLease | null> {
    const lease: Lease = { owner: this.self, expires_at: now + this.ttlMs };
    try {
      const key = leaseKey(this.stage, partition);
      const rev = revision === null ? await this.kv.create(key, jsonValue(lease)) : await this.kv.update(key, jsonValue(lease), revision);
      return { revision: rev, expiresAt: lease.expires_at };
    } catch (err) {
      if (err instanceof KvConflictError) return null;
      throw err;
    }
  }

  /** Extends a held lease; null when it was taken over (this process must stop serving it). */
  async renew(partition: number, held: HeldLease, now: number): Promise<HeldLease | null> {
    return this.acquire(partition, held.revision, now);
  }

  /** Gives a lease up at once, so the next owner need not wait for it to lapse. */
  async release(partition: number, held: HeldLease): Promise<void> {
    await this.kv.update(leaseKey(this.stage, partition), jsonValue({ owner: '', expires_at: 0 } satisfies Lease), held.revision).catch((err) => {
      if (!(err instanceof KvConflictError)) throw err;
    });
  }

  /** Records this process as alive (or, with `leaving`, as gone) and returns how many members are alive. */
  async heartbeat(now: number, leaving = false): Promise<number> {
    const key = membersKey(this.stage);
    for (;;) {
      const entry = await this.kv.get(key);
      const members: Record<string, number> = entry ? parseJsonValue(entry.value) : {};
      for (const [id, expires] of Object.entries(members)) if (expires <= now) delete members[id];
      if (leaving) delete members[this.self];
      else members[this.self] = now + this.ttlMs;
      try {
        if (entry) await this.kv.update(key, jsonValue(members), entry.revision);
        else await this.kv.create(key, jsonValue(members));
        return Object.keys(members).length;
      } catch (err) {
        if (!(err instanceof KvConflictError)) throw err;
      }
    }
  }
}
