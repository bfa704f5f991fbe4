import { decodeAdmitted, encodeGrant, type AdmittedUrl, type RevisitSchedule } from '../../schemas/index.js';
import { hostQueueSubject, subjectFor } from '../../pipeline/partition.js';
import type { BackgroundContext, Emit, StageContext } from '../../pipeline/stage.js';
import { EDGES } from '../../topology/index.js';
import { effectiveCursor, giveBackTurn, laneLevel, lanesWithWork, readSlot, readTail, readyAt, removeServed, skipQueued, takeTurn, type HostSlot, type LaneLevel } from '../shared/politeness/index.js';
import { pickLane } from './pick-lane.js';
import { sitemapsOfSeed } from './seed-sitemaps.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { outcomeEmit, urlOutcome } from '../shared/messages/outcome-emit.js';
import { jobFieldsOf } from '../shared/jobs/job-fields.js';
import { GRANT_LEASE_MS } from './spec.js';
import { readingFromLeader } from '../../pipeline/kv-store.js';
import { hostDelayMs, refreshRobots, robotsOf } from '../shared/robots/robots-refresh.js';
import { checkBeforeFetch } from './trap-check.js';
import { robotsGiveUpAt } from '../shared/robots/robots-fetch-policy.js';
import { revisitEmit } from '../shared/revisits/revisit-emit.js';
import { failingHostEnd } from './failing-host.js';
import { chargeGrant, knownRefusal } from './grant-charges.js';

/** When a host's next turn comes, as a turn ends: what the scheduler does with the host. */
export type NextTurn =
  | { kind: 'idle' } // nothing queued: forget the host until something is
  // try again then (or when the host's slot changes); `lanesOnly`: only the lanes with work wait
  // (a paused job's), so a URL queued in another lane may be served sooner
  | { kind: 'wait'; until: number; ip?: string; lanesOnly?: boolean }
  | { kind: 'granted' } // a request is out; the release wakes the host again
  | { kind: 'held' }; // only URLs the first pass holds back: served when it ends (host-scheduler.ts)

/** A turn served: when the next one comes, and the level of the host's next URL (what the scheduler ranks the host by when fetch is behind). */
export interface ServedTurn {
  next: NextTurn;
  level: LaneLevel | null;
  /** the registrable domain and depth of that URL (the scheduler's breadth key) */
  domain?: string;
  depth?: number;
}

/** One turn of a host (see serveHostTurn), without its level. */
export async function serveHost(ctx: BackgroundContext, host: string): Promise<NextTurn> {
  return (await serveHostTurn(ctx, host)).next;
}

/** URLs a host may skip (robots-disallowed, dropped as a trap's) in one turn before other hosts get theirs. */
const SKIPS_PER_TURN = 50;

const originOf = (url: string) => new URL(url).origin;

type SettledOutcome = 'robots_disallowed' | 'network_error' | 'http_error' | 'refused' | 'filtered';

/**
 * A queued URL that needs no request (robots.txt keeps it out, or its host cannot be
 * reached in this crawl): its outcome is recorded and the queue moves past it. `also`:
 * what goes out with it (a job's next revisit); `status`: the status its row records.
 */
async function settleQueued(ctx: BackgroundContext, m: AdmittedUrl, seq: number, reason: string, outcome: SettledOutcome, lane: string, also: Emit[] = [], status: number | null = null, schedule?: RevisitSchedule): Promise<void> {
  await ctx.publisher.publish([settledOutcome(ctx, m, reason, outcome, status, schedule), ...also]);
  await skipQueued(ctx.kv.hosts, m.host, seq, lane);
  // its outcome is out and its lane has moved past it: it waits no more
  await removeServed(ctx, 'politeness-gate', seq, m.host);
}

function settledOutcome(ctx: StageContext, m: AdmittedUrl, reason: string, outcome: SettledOutcome, status: number | null = null, schedule?: RevisitSchedule): Emit {
  ctx.metrics.count('politeness-gate', 'urls', outcome);
  // one terminal outcome per fetch id, whichever the gate settled it with
  const row = urlOutcome(m, { event_id: stableId('robots', m.fetch_id), outcome, reason, fetch_status: status, fetch_time: ctx.clock.now() });
  return outcomeEmit(ctx, `robots:${m.fetch_id}`, { ...row, ...schedule });
}

/** Ends the queued URL at `seq` if its host's pause means it need not wait (failing-host.ts). */
async function endFailingHead(ctx: BackgroundContext, slot: HostSlot, m: AdmittedUrl, seq: number, lane: string, now: number): Promise<boolean> {
  const ends = failingHostEnd(slot, m, now);
  if (!ends) return false;
  // a job's URL is tried again at its next revisit, as after a failed fetch
  const revisit = await revisitEmit(ctx, m, m.fetch_id, { kind: 'failed' });
  await settleQueued(ctx, m, seq, ends.reason, ends.outcome, lane, revisit.emits, ends.status, revisit.schedule);
  return true;
}

/** The same at the heads of the host's other lanes, which the lane picked for this turn would leave waiting. */
async function endFailingHeadOfOthers(ctx: BackgroundContext, host: string, slot: HostSlot, others: ReadonlyArray<{ lane: string; cursor: number }>, now: number): Promise<boolean> {
  let ended = false;
  for (const { lane, cursor } of others) {
    const head = await ctx.streams.readNext(EDGES.hostq.stream, hostQueueSubject(host, ctx.settings.partitions, lane), cursor + 1);
    if (head && (await endFailingHead(ctx, slot, decodeAdmitted(head.data), head.seq, lane, now))) ended = true;
  }
  return ended;
}

/**
 * The host's slot, its queue tails, and the lanes with work. An idle host is forgotten until
 * its slot changes again, so on a replicated bucket "no work" is confirmed by the leader: a
 * replica that lags (one catching up after a restart) would answer with the tail from before
 * the URL whose news woke this turn, and the URL would wait forever.
 */
async function readHostWork(ctx: StageContext, host: string, now: number) {
  const [slot, tail] = await Promise.all([readSlot(ctx.kv.hosts, host), readTail(ctx.kv.hosts, host)]);
  const lanes = lanesWithWork(slot, tail, now);
  const leader = readingFromLeader(ctx.kv.hosts);
  if (lanes.length > 0 || leader === ctx.kv.hosts) return { slot, tail, lanes };
  const [slot2, tail2] = await Promise.all([readSlot(leader, host), readTail(leader, host)]);
  return { slot: slot2, tail: tail2, lanes: lanesWithWork(slot2, tail2, now) };
}

/**
 * Whether a lane that read as having work was in fact served up to `laneTail` (its last URL's
 * grant confirmed, so its message deleted) and only a copy of the slot that lags said otherwise:
 * confirmed on the bucket leader's copy, where there is one.
 */
async function servedMeanwhile(ctx: StageContext, host: string, lane: string, laneTail: number, now: number): Promise<boolean> {
  const leader = readingFromLeader(ctx.kv.hosts);
  const slot = await readSlot(leader, host).catch(() => null);
  return slot !== null && effectiveCursor(slot, now, lane) >= laneTail;
}

/**
 * One turn of a host: looks at the head of its queue and either hands the URL to fetch
 * (taking the host's lease, and a place on its IP), records it as blocked by robots.txt
 * and moves on, fetches robots.txt first, or says when to come back. Every decision is
 * a compare-and-set on the host's slot, so any number of gates may serve one host.
 */
export async function serveHostTurn(ctx: BackgroundContext, host: string): Promise<ServedTurn> {
  const s = ctx.settings;
  for (let skipped = 0; skipped < SKIPS_PER_TURN; skipped++) {
    const now = ctx.clock.now();
    const { slot, tail, lanes } = await readHostWork(ctx, host, now);
    if (lanes.length === 0) return { next: { kind: 'idle' }, level: null };
    const pick = await pickLane(ctx, lanes, slot, now);
    if (pick.kind === 'wait') return { next: { ...pick, lanesOnly: true }, level: null };
    if (pick.kind === 'held') return { next: { kind: 'held' }, level: null };
    const { lane, cursor, tail: laneTail } = pick.lane;
    const level = laneLevel(lane);
    const stored = await ctx.streams.readNext(EDGES.hostq.stream, hostQueueSubject(host, s.partitions, lane), cursor + 1);
    if (!stored) {
      if (await servedMeanwhile(ctx, host, lane, laneTail, now)) continue;
      // the lane's messages are gone: the host-queue stream has no age limit and refuses what it
      // has no room for, so only a hand (a purge, a deleted stream) or limits from before it was
      // a queue removed them. Nothing is left to serve in the lane; said out loud and counted,
      // since the URLs are not known to give them their rows
      ctx.metrics.count('politeness-gate', 'urls', 'gone');
      ctx.log.warn({ host, lane, from_seq: cursor + 1, to_seq: laneTail }, 'queued URLs of this host are gone from the host-queue stream (removed by hand, or by its limits before it was a queue): skipped');
      await skipQueued(ctx.kv.hosts, host, laneTail, lane);
      continue;
    }
    const m = decodeAdmitted(stored.data);
    // what the scheduler ranks the host by (host-scheduler.ts)
    const rank = { level, domain: m.domain, depth: m.depth };
    if (pick.stopped) {
      // a cancelled job: its queued URLs end here, each with its own row
      await settleQueued(ctx, m, stored.seq, pick.stopped, 'filtered', lane);
      continue;
    }
    const origin = originOf(m.url);

    // URLs robots.txt keeps out need no request, so they are settled even while the host waits
    const { current: robots, last } = await robotsOf(ctx).lookup(origin, now);
    if (robots?.record.ends) {
      await settleQueued(ctx, m, stored.seq, robots.record.ends.reason, robots.record.ends.outcome, lane);
      continue;
    }
    const failing = last?.record.kind === 'disallow_all' ? last.record : null;
    // null while too few tries have failed, however long ago the first was
    const giveUpAt = failing ? robotsGiveUpAt(failing, s.robotsGiveUpMs) : null;
    if (failing && giveUpAt !== null && now >= giveUpAt) {
      // given up on a failed try at or after the give-up time, or while the host backs off
      // from its own failures; time the crawler itself could not try (its servers electing
      // leaders, say) is not the site being down: robots.txt is tried once more first
      if (failing.fetchedAt >= giveUpAt || (slot && readyAt(slot, now) > 0)) {
        const downMs = now - (failing.failingSince ?? failing.fetchedAt);
        await settleQueued(ctx, m, stored.seq, `robots.txt unavailable for ${Math.round(downMs / 1000)} s, giving up: ${failing.reason}`, 'robots_disallowed', lane);
        continue;
      }
      const wait = await refreshRobots(ctx, host, origin, (exchanges) => ctx.publisher.publish(exchanges));
      if (wait) return { next: wait, ...rank };
      continue; // the last try's answer decides
    }
    if (failing && robots) {
      // come back to refetch it, or to give up on its URLs, whichever is first
      return { next: { kind: 'wait', until: giveUpAt === null ? robots.expiresAt : Math.min(robots.expiresAt, giveUpAt) }, ...rank };
    }
    const verdict = robots?.compiled.verdict(m.url);
    if (verdict && !verdict.allowed) {
      // a seed robots.txt keeps out still leads to the host's sitemaps (robots.txt judges each URL they list)
      const sitemaps = robots ? sitemapsOfSeed(m, pick.job, s.sitemaps, robots.compiled.sitemaps, s.partitions) : [];
      await settleQueued(ctx, m, stored.seq, verdict.matchedRule ? `robots.txt: ${verdict.matchedRule}` : 'robots.txt disallows this path', 'robots_disallowed', lane, sitemaps);
      continue;
    }
    // a URL queued past its pattern's budget, or after a near-duplicate of its pattern: no
    // request if the pattern's pages have turned out mostly near-duplicates meanwhile
    const trap = await checkBeforeFetch(m, ctx);
    if (!trap.admit) {
      await settleQueued(ctx, m, stored.seq, `${trap.defence}: ${trap.detail}`, 'filtered', lane);
      continue;
    }
    // a domain whose --max-pages-per-domain is spent (grant-charges.ts): no request
    const refusal = knownRefusal(ctx, m);
    if (refusal) {
      await settleQueued(ctx, m, stored.seq, refusal, 'filtered', lane);
      continue;
    }
    const at = slot ? readyAt(slot, now) : 0;
    if (at > 0) {
      // a paused host's URLs that would wait only to cost it another pause end now
      // (failing-host.ts), in this lane or at the head of another
      if (slot && (await endFailingHead(ctx, slot, m, stored.seq, lane, now))) continue;
      if (slot && slot.paused_until > now && (await endFailingHeadOfOthers(ctx, host, slot, pick.others, now))) continue;
      return { next: { kind: 'wait', until: at }, ...rank };
    }
    if (!robots) {
      const wait = await refreshRobots(ctx, host, origin, (exchanges) => ctx.publisher.publish(exchanges));
      if (wait) return { next: wait, ...rank };
      continue; // the robots.txt request counts as the host's request: the next turn waits its delay
    }

    const leaseId = `fetch:${stableId(m.fetch_id, stored.seq)}`;
    const taken = await takeTurn(ctx, host, now, { leaseId, leaseMs: GRANT_LEASE_MS, seq: stored.seq, lane, ...(pick.stride ? { stride: pick.stride } : {}) });
    if (!taken.taken) {
      if (taken.reason === 'already handed out') continue;
      if (taken.ip) {
        ctx.metrics.count('politeness-gate', 'urls', 'ip_wait');
        return { next: { kind: 'wait', until: taken.retryAt, ip: taken.ip }, ...rank };
      }
      return { next: { kind: 'wait', until: taken.retryAt }, ...rank };
    }
    const { lease } = taken;
    const charge = await chargeGrant(ctx, m);
    if (!charge.ok) {
      await giveBackTurn(ctx, lease, stored.seq, lane, now);
      await settleQueued(ctx, m, stored.seq, charge.reason, 'filtered', lane);
      continue;
    }
    // a job may ask for more room between requests than the crawl's minimum, never less
    const delayMs = Math.max(hostDelayMs(robots.compiled.crawlDelayMs, ctx, host), pick.minDelayMs);
    const { novelty_check: _checked, held: _held, ...url } = m;
    const grant = encodeGrant({ ...url, lease_id: leaseId, granted_at: now, delay_ms: delayMs, ip: lease.ip });
    try {
      // the lease id is the msgId: a grant served again after a lapsed lease is not published twice
      const [published] = await ctx.publisher.publish([
        { subject: subjectFor('ready', host, s.partitions), data: grant, msgId: leaseId },
        ...sitemapsOfSeed(m, pick.job, s.sitemaps, robots.compiled.sitemaps, s.partitions),
      ]);
      // a grant served again after its lease lapsed: the one sent before is still the only one
      if (published?.duplicate) ctx.log.info({ host, url: m.url, lease: leaseId, ready_seq: published.seq }, 'grant sent again after its lease lapsed: the stream keeps the first');
    } catch (err) {
      await giveBackTurn(ctx, lease, stored.seq, lane, now);
      await charge.undo();
      throw err;
    }
    ctx.metrics.count('politeness-gate', 'urls', 'granted');
    return { next: { kind: 'granted' }, ...rank };
  }
  return { next: { kind: 'wait', until: ctx.clock.now() }, level: null };
}
