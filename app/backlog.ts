import { setTimeout as sleep } from 'node:timers/promises';
import type { KvStore } from '../ports/kv.js';
import type { StreamAdmin } from '../ports/stream-admin.js';
import { countBusyHosts } from '../stages/politeness-gate/index.js';
import { STAGE_INPUTS, type StageInputSpec } from '../topology/index.js';

export interface PipelineBacklog {
  /** messages not yet handled, per stage */
  perStage: Record<string, number>;
  total: number;
}

/**
 * Undelivered plus unacknowledged messages of every stage consumer, plus (when the hosts
 * bucket is given and the consumers are empty) the hosts whose queues still hold URLs or
 * whose request is still in flight: URLs waiting for their host are not in any consumer.
 */
export async function pipelineBacklog(admin: StreamAdmin, hosts?: KvStore, extra: readonly StageInputSpec[] = []): Promise<PipelineBacklog> {
  const perStage: Record<string, number> = {};
  let total = 0;
  for (const spec of [...STAGE_INPUTS, ...extra]) {
    // a partitioned stage's: the sum over its per-partition consumers (those declared so far)
    const n = (await admin.consumerLag([spec])).reduce((sum, lag) => sum + lag.pending + lag.ackPending, 0);
    perStage[spec.durable] = n;
    total += n;
  }
  if (hosts && total === 0) {
    const busy = await countBusyHosts(hosts, Date.now());
    perStage['host-queues'] = busy;
    total += busy;
  }
  return { perStage, total };
}

/**
 * The backlog's total, or null when the JetStream API did not answer: while a cluster elects
 * a leader it answers "temporarily unavailable", which is not a verdict on the crawl.
 */
export async function backlogTotalOrNull(admin: StreamAdmin, hosts?: KvStore, onUnanswered?: (err: Error) => void, extra: readonly StageInputSpec[] = []): Promise<number | null> {
  return pipelineBacklog(admin, hosts, extra).then(
    (b) => b.total,
    (err: Error) => {
      onUnanswered?.(err);
      return null;
    },
  );
}

/**
 * Waits until the crawl is idle: every stage's consumer (and `extraInputs`, stage modules') has nothing undelivered and nothing
 * unacked, and no host has queued URLs or a request in flight, seen three times in a row
 * (400 ms apart); or until `stopped()`. `begun`: idle only counts once some backlog was seen
 * (workers started before the seeds: an empty pipeline at first is not a finished crawl).
 * A check the servers do not answer counts as not idle, and the wait goes on: the stages
 * reconnect on their own. `onUnanswered` hears of the first of each run of them.
 */
export async function waitUntilIdle(
  admin: StreamAdmin,
  hosts: KvStore,
  opts: { stopped?: () => boolean; begun?: boolean; onUnanswered?: (err: Error) => void; extraInputs?: readonly StageInputSpec[] } = {},
): Promise<void> {
  let begun = opts.begun ?? true;
  let quiet = 0;
  let unanswered = false;
  while (!opts.stopped?.()) {
    const total = await backlogTotalOrNull(
      admin,
      hosts,
      (err) => {
        if (!unanswered) opts.onUnanswered?.(err);
      },
      opts.extraInputs,
    );
    unanswered = total === null;
    begun ||= total !== null && total > 0;
    quiet = begun && total === 0 ? quiet + 1 : 0;
    if (quiet >= 3) return;
    await sleep(400);
  }
}
