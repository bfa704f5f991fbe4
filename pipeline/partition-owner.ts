import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { KvStore } from '../ports/kv.js';
import { LeaseTable, planLeases, type HeldLease } from './partition-leases.js';
import { StageRunner } from './runner.js';
import type { OpenPartition, PartitionedStage, StageContext } from './stage.js';

export interface PartitionOwnerOptions {
  /** messages one partition's runner handles at once */
  concurrency: number;
  /** where leases and members live (the stage's KV bucket) */
  leases: KvStore;
  /**
   * A lease lapses this long after its last renewal; renewed every third of it. The time a
   * dead process's partitions wait for a new owner; too short and a slow KV round trip
   * costs a partition its owner.
   */
  leaseTtlMs?: number;
  /** a process id; random by default (a restarted process is a new member) */
  memberId?: string;
}

export const DEFAULT_LEASE_TTL_MS = 15_000;

interface HeldPartition<T> {
  lease: HeldLease;
  open?: OpenPartition<T>;
  runner?: StageRunner<T>;
  /** open, checkpoints and close of one partition run one after another */
  chain: Promise<void>;
  dropping: boolean;
  checkpointing: boolean;
}

/**
 * Runs a partitioned stage: holds the leases of some partitions (ceil(P / processes)), and for
 * each one held opens its state (load, replay) and runs a StageRunner on its own durable
 * consumer; a partition whose lease is lost or given up is stopped (and, when given up,
 * its state saved first). The StageRunner contract is unchanged: ack after publish.
 */
export class PartitionOwner<T> {
  private readonly table: LeaseTable;
  private readonly ttlMs: number;
  private readonly held = new Map<number, HeldPartition<T>>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private stopping: Promise<void> | undefined;
  readonly memberId: string;

  constructor(
    private readonly nc: NatsConnection,
    private readonly def: PartitionedStage<T>,
    private readonly ctx: StageContext,
    private readonly opts: PartitionOwnerOptions,
  ) {
    this.ttlMs = opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    this.memberId = opts.memberId ?? `${def.name}-${randomBytes(6).toString('hex')}`;
    this.table = new LeaseTable(opts.leases, def.name, this.memberId, this.ttlMs);
  }

  /** the partitions this process serves (opened and consuming) */
  get serving(): number[] {
    return [...this.held].filter(([, h]) => h.runner && !h.dropping).map(([p]) => p).sort((a, b) => a - b);
  }

  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), Math.max(100, Math.floor(this.ttlMs / 3)));
  }

  /** One round: heartbeat, renew, then give up or take partitions. Rounds never overlap. */
  tick(): Promise<void> {
    this.ticking = this.ticking.then(() => this.round()).catch((err: Error) => this.ctx.log.warn({ stage: this.def.name, err: err.message }, 'partition lease round failed'));
    return this.ticking;
  }

  private async round(): Promise<void> {
    if (this.stopping) return;
    const now = this.ctx.clock.now();
    const members = await this.table.heartbeat(now);
    await this.renewAll(now);
    const partitions = this.ctx.settings.partitions;
    const target = Math.ceil(partitions / members);
    const holding = new Set([...this.held].filter(([, h]) => !h.dropping).map(([p]) => p));
    const reads = holding.size < target ? await Promise.all(Array.from({ length: partitions }, (_, p) => this.table.read(p))) : [];
    const plan = planLeases({ self: this.memberId, now, partitions, members, leases: reads.map((r) => r.lease), held: holding });
    for (const p of plan.release) this.drop(p, 'rebalance');
    for (const p of plan.acquire) {
      const lease = await this.table.acquire(p, reads[p]!.revision, now);
      if (lease) this.take(p, lease);
    }
    for (const [p, h] of this.held) if (h.open && !h.dropping && !h.checkpointing) this.checkpoint(p, h);
  }

  /** Renews every held lease at once: one round trip for all, not one after another (each its own key). */
  private async renewAll(now: number): Promise<void> {
    const renewals = [...this.held].filter(([, h]) => !h.dropping).map(async ([p, h]) => {
      try {
        const renewed = await this.table.renew(p, h.lease, now);
        if (renewed) h.lease = renewed;
        else this.drop(p, 'lost');
      } catch (err) {
        // KV unreachable: keep serving only while the lease surely has not lapsed
        this.ctx.log.warn({ stage: this.def.name, partition: p, err: (err as Error).message }, 'renewing a partition lease failed');
        if (now >= h.lease.expiresAt - this.ttlMs / 3) this.drop(p, 'lost');
      }
    });
    await Promise.all(renewals);
  }

  private take(p: number, lease: HeldLease): void {
    const h: HeldPartition<T> = { lease, chain: Promise.resolve(), dropping: false, checkpointing: false };
    this.held.set(p, h);
    h.chain = (async () => {
      const started = Date.now();
      const open = await this.def.openPartition(p, this.ctx);
      const runner = new StageRunner<T>(this.nc, open.def, this.ctx, { concurrency: this.opts.concurrency });
      h.open = open;
      if (h.dropping) return;
      await runner.start();
      h.runner = runner;
      this.ctx.log.info({ stage: this.def.name, partition: p, member: this.memberId, ms: Date.now() - started }, 'partition taken');
    })().catch((err: Error) => {
      // e.g. a corrupt snapshot: say so, give the lease back, and let a later round try again
      this.ctx.log.error({ stage: this.def.name, partition: p, err: err.message }, 'opening a partition failed');
      h.open = undefined;
      this.drop(p, 'failed');
    });
  }

  private checkpoint(p: number, h: HeldPartition<T>): void {
    h.checkpointing = true;
    h.chain = h.chain
      .then(() => (h.dropping ? undefined : h.open?.checkpoint()))
      .catch((err: Error) => this.ctx.log.warn({ stage: this.def.name, partition: p, err: err.message }, 'partition checkpoint failed'))
      .finally(() => {
        h.checkpointing = false;
      });
  }

  /**
   * Stops serving a partition. Given up (rebalance, shutdown): in-flight work finishes, state
   * is saved, then the lease is released so the next owner starts at once. Lost: the new
   * owner may already be writing, so nothing is saved.
   */
  private drop(p: number, why: 'rebalance' | 'shutdown' | 'lost' | 'failed'): Promise<void> {
    const h = this.held.get(p);
    if (!h) return Promise.resolve();
    if (h.dropping) return h.chain;
    h.dropping = true;
    h.chain = h.chain
      .catch(() => undefined)
      .then(async () => {
        await h.runner?.stop();
        if (why === 'lost') return;
        if (h.open) await h.open.close();
        await this.table.release(p, h.lease);
      })
      .catch((err: Error) => this.ctx.log.warn({ stage: this.def.name, partition: p, err: err.message }, 'stopping a partition failed'))
      .finally(() => {
        this.held.delete(p);
        this.ctx.log.info({ stage: this.def.name, partition: p, member: this.memberId, why }, 'partition released');
      });
    return h.chain;
  }

  /** Gives every partition up (state saved, leases released) and leaves. Safe to call twice. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.timer);
      await this.ticking;
      await Promise.all([...this.held.keys()].map((p) => this.drop(p, 'shutdown')));
      await this.table.heartbeat(this.ctx.clock.now(), true).catch(() => undefined);
      await this.def.close?.(this.ctx);
    })();
    return this.stopping;
  }

  /** Stops consuming without saving or releasing anything: what a killed process leaves behind (tests). */
  async abandon(): Promise<void> {
    this.stopping ??= Promise.resolve();
    clearInterval(this.timer);
    await this.ticking;
    await Promise.all([...this.held.values()].map((h) => h.runner?.stop()));
    this.held.clear();
  }
}
