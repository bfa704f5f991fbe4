import { decodeAdmitted, encodeGrant, type AdmittedUrl } from '../../schemas/index.js';
import { hostQueueSubject, subjectFor } from '../../pipeline/partition.js';
import type { BackgroundContext, Emit, StageContext } from '../../pipeline/stage.js';
import { EDGES } from '../../ops/nats/edges.js';
import { effectiveCursor, hasWork, readSlot, readTail, readyAt, skipQueued, undoAcquire } from '../shared/host-state/host-slot.js';
import { releaseIp } from '../shared/host-state/ip-slot.js';
import { takeHost } from '../shared/host-state/take-host.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { outcomeEmit } from '../shared/messages/outcome-emit.js';
import { GRANT_LEASE_MS } from './spec.js';
import { hostDelayMs, refreshRobots, robotsOf } from '../shared/robots/robots-refresh.js';

/** What the scheduler does with a host after a turn. */
export type HostTurn =
  | { kind: 'idle' } // nothing queued: forget the host until something is
  | { kind: 'wait'; until: number; ip?: string } // try again then (or when the host's slot changes)
  | { kind: 'granted' }; // a request is out; the release wakes the host again

/** URLs a host may skip (robots-disallowed) in one turn before other hosts get theirs. */
const SKIPS_PER_TURN = 50;

const originOf = (url: string) => new URL(url).origin;

type SettledOutcome = 'robots_disallowed' | 'network_error' | 'refused';

/**
 * A queued URL that needs no request (robots.txt keeps it out, or its host cannot be
 * reached in this crawl): its outcome is recorded and the queue moves past it.
 */
async function settleQueued(ctx: BackgroundContext, m: AdmittedUrl, seq: number, reason: string, outcome: SettledOutcome = 'robots_disallowed'): Promise<void> {
  await ctx.publisher.publish([settledOutcome(ctx, m, reason, outcome)]);
  await skipQueued(ctx.kv.hosts, m.host, seq);
}

function settledOutcome(ctx: StageContext, m: AdmittedUrl, reason: string, outcome: SettledOutcome): Emit {
  ctx.metrics.count('politeness-gate', 'urls', outcome);
  // one terminal outcome per fetch id, whichever the gate settled it with
  return outcomeEmit(ctx, `robots:${m.fetch_id}`, {
    event_id: stableId('robots', m.fetch_id),
    fetch_id: m.fetch_id,
    url: m.url,
    host: m.host,
    outcome,
    reason,
    fetch_status: null,
    fetch_time: ctx.clock.now(),
    duration_ms: null,
    depth: m.depth,
  });
}

/**
 * One turn of a host: looks at the head of its queue and either hands the URL to fetch
 * (taking the host's lease, and a place on its IP), records it as blocked by robots.txt
 * and moves on, fetches robots.txt first, or says when to come back. Every decision is
 * a compare-and-set on the host's slot, so any number of gates may serve one host.
 */
export async function serveHost(ctx: BackgroundContext, host: string): Promise<HostTurn> {
  const s = ctx.settings;
  for (let skipped = 0; skipped < SKIPS_PER_TURN; skipped++) {
    const now = ctx.clock.now();
    const [slot, tail] = await Promise.all([readSlot(ctx.kv.hosts, host), readTail(ctx.kv.hosts, host)]);
    if (!hasWork(slot, tail, now)) return { kind: 'idle' };
    const cursor = slot ? effectiveCursor(slot, now) : 0;
    const stored = await ctx.streams.readNext(EDGES.hostq.stream, hostQueueSubject(host, s.partitions), cursor + 1);
    if (!stored) {
      // the queue's messages are gone (stream retention): nothing left to serve
      await skipQueued(ctx.kv.hosts, host, tail);
      return { kind: 'idle' };
    }
    const m = decodeAdmitted(stored.data);
    const origin = originOf(m.url);

    // URLs robots.txt keeps out need no request, so they are settled even while the host waits
    const { current: robots, last } = await robotsOf(ctx).lookup(origin, now);
    if (robots?.record.ends) {
      await settleQueued(ctx, m, stored.seq, robots.record.ends.reason, robots.record.ends.outcome);
      continue;
    }
    const failingSince = last?.record.kind === 'disallow_all' ? (last.record.failingSince ?? last.record.fetchedAt) : null;
    if (failingSince !== null && now - failingSince >= s.robotsGiveUpMs) {
      await settleQueued(ctx, m, stored.seq, `robots.txt unavailable for ${Math.round((now - failingSince) / 1000)} s, giving up: ${last!.record.reason}`);
      continue;
    }
    if (failingSince !== null && robots) {
      // come back to refetch it, or to give up on its URLs, whichever is first
      return { kind: 'wait', until: Math.min(robots.expiresAt, failingSince + s.robotsGiveUpMs) };
    }
    const verdict = robots?.compiled.verdict(m.url);
    if (verdict && !verdict.allowed) {
      await settleQueued(ctx, m, stored.seq, verdict.matchedRule ? `robots.txt: ${verdict.matchedRule}` : 'robots.txt disallows this path');
      continue;
    }
    const at = slot ? readyAt(slot, now) : 0;
    if (at > 0) return { kind: 'wait', until: at };
    if (!robots) {
      const wait = await refreshRobots(ctx, host, origin, (exchanges) => ctx.publisher.publish(exchanges));
      if (wait) return wait;
      continue; // the robots.txt request counts as the host's request: the next turn waits its delay
    }

    const leaseId = `fetch:${stableId(m.fetch_id, stored.seq)}`;
    const taken = await takeHost(ctx, host, now, { leaseId, leaseMs: GRANT_LEASE_MS, seq: stored.seq });
    if (!taken.taken) {
      if (taken.reason === 'already handed out') continue;
      if (taken.ip) {
        ctx.metrics.count('politeness-gate', 'urls', 'ip_wait');
        return { kind: 'wait', until: taken.retryAt, ip: taken.ip };
      }
      return { kind: 'wait', until: taken.retryAt };
    }
    const { ip } = taken;
    const grant = encodeGrant({ ...m, lease_id: leaseId, granted_at: now, delay_ms: hostDelayMs(robots.compiled.crawlDelayMs, ctx, host), ip });
    try {
      // the lease id is the msgId: a grant served again after a lapsed lease is not published twice
      await ctx.publisher.publish([{ subject: subjectFor('ready', host, s.partitions), data: grant, msgId: leaseId }]);
    } catch (err) {
      await undoAcquire(ctx.kv.hosts, host, leaseId, stored.seq);
      if (ip) await releaseIp(ctx.kv.hosts, ip, leaseId, now);
      throw err;
    }
    ctx.metrics.count('politeness-gate', 'urls', 'granted');
    return { kind: 'granted' };
  }
  return { kind: 'wait', until: ctx.clock.now() };
}
