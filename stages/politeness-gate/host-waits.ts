import { decodeAdmitted } from '../../schemas/index.js';
import { hostQueueSubject } from '../../pipeline/partition.js';
import { parseJsonValue } from '../../pipeline/kv-store.js';
import { type KvStore } from '../../ports/kv.js';
import type { StreamAccess } from '../../ports/streams.js';
import { EDGES } from '../../topology/index.js';
import { laneLevel, lanesWithWork, leaseLive, readSlot, TAIL_PREFIX, type HostSlot, type QueueTail } from '../shared/politeness/index.js';
import type { RobotsCache } from '../shared/robots/robots-cache.js';
import { robotsGiveUpAt } from '../shared/robots/robots-fetch-policy.js';

/**
 * Why a host with queued URLs is not being served right now, for the progress line and
 * `crawl status`. Read from the same KV entries the gates decide by, so it is true for
 * every gate process, not only this one.
 */
export type WaitReason =
  | 'robots.txt unavailable' // 5xx, 429 or a network error: disallow all until a fetch succeeds
  | 'paused' // too many failures in a row
  | 'backoff' // failed requests: the gap grows
  | 'crawl delay' // the host's gap between requests (Crawl-delay, minimum, adaptive)
  | 'request in flight'
  | 'held by the first pass' // only links --target-unique-domains holds back (docs/breadth-and-importance.md)
  | 'due'; // may be served now (a gate will take it on its next turn)

export interface HostWait {
  host: string;
  /**
   * URLs in the host's queue not handed out yet; null when not counted (the queue's
   * positions are stream sequences, not counts: see countQueued)
   */
  queued: number | null;
  /** the host's queues (one per lane) with work: each subject, and the sequence its next URL is read from */
  queues: Array<{ subject: string; fromSeq: number }>;
  reason: WaitReason;
  /** when the gate tries the host again (epoch ms); null when due now */
  until: number | null;
  /** robots.txt unavailable: when its URLs are given up on */
  givesUpAt: number | null;
  /** what the host's last answer was (robots.txt failure, pacing decision) */
  detail: string;
}

export interface HostWaitSources {
  hosts: KvStore;
  robots: RobotsCache;
  streams: Pick<StreamAccess, 'readNext'>;
  partitions: number;
  robotsGiveUpMs: number;
}

/**
 * Every host that has queued URLs or a request in flight, with why it waits and until when.
 * A few KV reads per such host: for status and an idle crawl's progress line, not for hot paths.
 */
export async function listHostWaits(src: HostWaitSources, now: number): Promise<HostWait[]> {
  const waits: HostWait[] = [];
  for await (const busy of busyHosts(src.hosts, now)) {
    waits.push(await describeWait(src, busy.host, busy.slot, busy.lanes, now));
  }
  return waits.sort((a, b) => (a.until ?? 0) - (b.until ?? 0) || a.host.localeCompare(b.host));
}

/** Hosts with queued URLs or a request in flight: what an idle check waits for (two KV reads a host). */
export async function countBusyHosts(hosts: KvStore, now: number): Promise<number> {
  let n = 0;
  for await (const _ of busyHosts(hosts, now)) n += 1;
  return n;
}

interface BusyHost {
  host: string;
  slot: HostSlot | null;
  /** the lanes with URLs not handed out yet */
  lanes: Array<{ lane: string; cursor: number }>;
}

async function* busyHosts(hosts: KvStore, now: number): AsyncIterable<BusyHost> {
  for await (const key of hosts.keys()) {
    if (!key.startsWith(TAIL_PREFIX)) continue;
    const tailEntry = await hosts.get(key);
    if (!tailEntry) continue;
    const tail = parseJsonValue<QueueTail>(tailEntry.value);
    const slot = await readSlot(hosts, tail.host);
    const lanes = lanesWithWork(slot, tail, now);
    if (lanes.length > 0 || (slot && leaseLive(slot, now))) yield { host: tail.host, slot, lanes };
  }
}

async function describeWait(src: HostWaitSources, host: string, slot: HostSlot | null, lanes: BusyHost['lanes'], now: number): Promise<HostWait> {
  const queues = lanes.map((l) => ({ subject: hostQueueSubject(host, src.partitions, l.lane), fromSeq: l.cursor + 1 }));
  const base = { host, queued: lanes.length > 0 ? null : 0, queues, givesUpAt: null, detail: slot?.last_decision ?? '' };
  if (slot && leaseLive(slot, now)) return { ...base, reason: 'request in flight', until: slot.lease_until };
  const slotReadyAt = slot ? Math.max(slot.next_allowed_at, slot.paused_until) : 0;
  if (lanes.length > 0) {
    const head = await src.streams.readNext(EDGES.hostq.stream, queues[0]!.subject, queues[0]!.fromSeq);
    const robots = head ? await src.robots.lookup(new URL(decodeAdmitted(head.data).url).origin, now) : null;
    const record = robots?.current?.record;
    if (robots?.current && record?.kind === 'disallow_all' && !record.ends) {
      // too few failed tries yet to give up: not before the next try, at the earliest; a host
      // whose every address refused ends at the next try if it is refused again
      const givesUpAt = record.connectionRefused
        ? robots.current.expiresAt
        : (robotsGiveUpAt(record, src.robotsGiveUpMs) ?? Math.max((record.failingSince ?? record.fetchedAt) + src.robotsGiveUpMs, robots.current.expiresAt));
      // giving up needs no request; fetching robots.txt again waits for the host's slot too
      const until = givesUpAt <= robots.current.expiresAt ? givesUpAt : Math.min(givesUpAt, Math.max(robots.current.expiresAt, slotReadyAt));
      return { ...base, reason: 'robots.txt unavailable', until, givesUpAt, detail: record.reason };
    }
  }
  if (slot && slot.paused_until > now) return { ...base, reason: 'paused', until: slot.paused_until };
  if (slot && slot.next_allowed_at > now) return { ...base, reason: slot.failures > 0 ? 'backoff' : 'crawl delay', until: slot.next_allowed_at };
  if (lanes.length > 0 && lanes.every((l) => laneLevel(l.lane) === 'w')) return { ...base, reason: 'held by the first pass', until: null };
  return { ...base, reason: 'due', until: null };
}

export interface WaitSummary {
  hosts: number;
  /** URLs in the waiting hosts' queues; null when they were not counted */
  queued: number | null;
  byReason: Partial<Record<WaitReason, number>>;
  /** the earliest time a waiting host is tried again; null when none waits on a time */
  nextTryAt: number | null;
}

export function summarizeWaits(waits: readonly HostWait[]): WaitSummary {
  const byReason: Partial<Record<WaitReason, number>> = {};
  let queued: number | null = 0;
  let nextTryAt: number | null = null;
  for (const w of waits) {
    byReason[w.reason] = (byReason[w.reason] ?? 0) + 1;
    queued = queued === null || w.queued === null ? null : queued + w.queued;
    if (w.until !== null) nextTryAt = nextTryAt === null ? w.until : Math.min(nextTryAt, w.until);
  }
  return { hosts: waits.length, queued, byReason, nextTryAt };
}

/** `waiting: 3 hosts (robots.txt unavailable: 2, backoff: 1), next try in 4m10s` */
export function formatWaitSummary(s: WaitSummary, now: number): string {
  if (s.hosts === 0) return 'waiting: no hosts';
  const reasons = Object.entries(s.byReason)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([r, n]) => `${r}: ${n}`)
    .join(', ');
  const next = s.nextTryAt === null ? '' : `, next try in ${formatDuration(s.nextTryAt - now)}`;
  return `waiting: ${s.hosts} ${s.hosts === 1 ? 'host' : 'hosts'} (${reasons})${next}`;
}

/** 250 -> '0s', 4_000 -> '4s', 250_000 -> '4m10s', 7_500_000 -> '2h05m' */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
