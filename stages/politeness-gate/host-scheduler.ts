import type { BackgroundContext } from '../../pipeline/stage.js';
import { serveHostTurn, type NextTurn, type ServedTurn } from './serve-host.js';
import { EDGES, FETCH_DURABLE, FETCHED_READERS } from '../../topology/index.js';
import type { LaneLevel } from '../shared/politeness/index.js';
import { DomainTally } from './domain-tally.js';
import { domainImportanceOf, type DomainImportance } from './domain-importance.js';
import { importanceWeight } from '../shared/importance/domain-inlinks.js';
import { ReadyHosts, type ReadyKey } from './ready-hosts.js';
import { heldLanesWait, releaseHeldLanes } from '../shared/breadth/first-pass.js';
import { BinaryHeap } from './binary-heap.js';

/**
 * How long a gate with held hosts and nothing else to serve waits before serving them although
 * the first pass is not over: new links may still be on their way from pages being fetched.
 */
export const HELD_IDLE_MS = 5000;

/** Grants the fetch stage has not taken up past which only hosts with high-priority work are served. */
export const READY_HIGH_WATER = 500;
/** The longest the timetable waits for a read of the consumers' backlogs before going on with the last one. */
const BACKLOG_WAIT_MS = 1000;
/** The longest a host waits for fetch to catch up. */
export const MAX_DEFER_MS = 30_000;
/**
 * Fetched pages that extract or the archive has not taken up, past which no host is served
 * until they catch up: fetching further ahead only moves the wait (and, in one process, takes
 * the CPU they need). A few seconds of extract's work is slack enough for a check made once a
 * second; more lets a crawl's first minutes fetch pages it then stores late, so its early
 * windows' pages/s measure the crawl filling up rather than what a page costs
 * (docs/performance.md#the-fetched-pages-high-water has the runs that chose 500).
 */
export const FETCHED_HIGH_WATER = 500;

/**
 * The gate's timetable: which hosts have queued URLs and when each may be served next.
 * It holds one small entry per host with work (never the URLs: those wait in the host-queue
 * stream), so its memory depends on the number of busy hosts, not on the frontier's size;
 * and a host with a million queued URLs takes one entry like any other, so it never
 * holds the others up.
 *
 * Hosts come in through `notify` (the gate's intake queued a URL, or the hosts bucket
 * changed: a release, a new URL queued by another gate) and are served by `serveHost`
 * when due, at most `concurrency` at once. Nothing here must survive the process: on
 * start, the watch of the hosts bucket replays every host's slot, which says who has work.
 *
 * Which hosts go first when fetch capacity is the limit: while the fetch stage has more than
 * {@link READY_HIGH_WATER} grants it has not taken up, a due host whose next URL is not high
 * priority (host-lanes.ts) waits, in steps of a second, while hosts with high-priority work
 * are served; no host waits this way more than {@link MAX_DEFER_MS} past when it was due, so
 * none starves. Politeness is untouched: waiting only ever delays a request.
 *
 * Which due host goes first when the gate's turns are all taken (ready-hosts.ts): high-priority
 * work, then seed 003's breadth key weighed by importance, the host whose registrable domain this
 * process has granted fewest requests (domain-tally.ts) for how linked it is (domain-importance.ts),
 * then the shallowest next URL; none waits so more than
 * {@link MAX_DEFER_MS}. A turn hands out one grant, and grants reach fetch in the order they are
 * made, so this order is the order pages are fetched in when there are more due hosts than
 * fetch keeps up with. It is per process, with no global queue: every gate ranks its own hosts.
 *
 * While extract or the archive has more than {@link FETCHED_HIGH_WATER} fetched pages it has
 * not taken up, no host is served at all (checked once a second): the crawl stores pages at
 * the pace it fetches them instead of fetching far ahead of what it can process.
 */
export class HostScheduler {
  private readonly dueAt = new Map<string, number>();
  /** (time, host) by time; stale entries are skipped when popped */
  private readonly heap = new BinaryHeap<{ at: number; host: string }>((a, b) => a.at < b.at);
  private readonly running = new Map<string, number | null>(); // host -> earliest time notified while running
  /** running hosts a URL was queued for during their turn (see `queued`) */
  private readonly queuedWhileRunning = new Set<string>();
  /** hosts whose wait only some lanes had (a paused job's): a URL queued in another may be served sooner */
  private readonly lanesWait = new Set<string>();
  private readonly waitingOnIp = new Map<string, Set<string>>();
  private active = 0;
  private stopped = false;
  private wake: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  /** each host's next URL as its last turn found it: its level, registrable domain and depth */
  private readonly next = new Map<string, NextUrl>();
  /** requests granted per registrable domain by this process */
  readonly domains = new DomainTally();
  /** in-links per registrable domain as the intake heard them; null with --no-importance */
  private readonly importance: DomainImportance | null;
  /** due hosts waiting for a turn, best first */
  private readonly ready = new ReadyHosts(
    (host, at) => this.keyOf(host, at),
    (host, at) => this.dueAt.get(host) === at,
    MAX_DEFER_MS,
  );
  /** hosts held back while fetch is behind, since when */
  private readonly deferredSince = new Map<string, number>();
  /** hosts with only URLs the first pass holds back (stages/shared/breadth/first-pass.ts) */
  private readonly held = new Set<string>();
  private heldCheck = { at: -Infinity, idleSince: null as number | null, running: false };
  private backlog = { checkedAt: -Infinity, behind: false, pagesBehind: false };
  private backlogReading: Promise<void> | null = null;

  constructor(
    private readonly ctx: BackgroundContext,
    private readonly concurrency: number,
    private readonly serve: (ctx: BackgroundContext, host: string) => Promise<ServedTurn> = serveHostTurn,
  ) {
    this.importance = ctx.settings.importance ? domainImportanceOf(ctx.kv.importance) : null;
  }

  /**
   * Whether fetch has more grants than READY_HIGH_WATER not taken up (`behind`), and whether
   * the readers of fetched pages have more than FETCHED_HIGH_WATER (`pagesBehind`); read once
   * a second. A read that takes longer than BACKLOG_WAIT_MS (consumer-info requests held up
   * by a leader election) goes on in the background and the timetable goes on with the last
   * figures, so it is never held up for long.
   */
  private async downstream(now: number): Promise<{ behind: boolean; pagesBehind: boolean }> {
    if (now - this.backlog.checkedAt >= 1000 && !this.backlogReading) {
      this.backlog.checkedAt = now;
      this.backlogReading = this.readBacklog().finally(() => (this.backlogReading = null));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.backlogReading, new Promise((resolve) => (timer = setTimeout(resolve, BACKLOG_WAIT_MS)))]);
      clearTimeout(timer);
    }
    return { behind: this.backlog.behind, pagesBehind: this.backlog.pagesBehind };
  }

  private async readBacklog(): Promise<void> {
    const [ready, ...fetched] = await Promise.all([
      this.pending(EDGES.ready.stream, FETCH_DURABLE),
      ...FETCHED_READERS.map((durable) => this.pending(EDGES.fetched.stream, durable)),
    ]);
    this.backlog.behind = ready! > READY_HIGH_WATER;
    const lagging = FETCHED_READERS.filter((_, i) => fetched[i]! > FETCHED_HIGH_WATER);
    const pagesBehind = lagging.length > 0;
    if (pagesBehind !== this.backlog.pagesBehind) {
      const pending = Object.fromEntries(FETCHED_READERS.map((r, i) => [r, fetched[i]]));
      if (pagesBehind) this.ctx.log.info({ pending, highWater: FETCHED_HIGH_WATER }, `${lagging.join(' and ')} behind on fetched pages: serving no host until it catches up`);
      else this.ctx.log.info({ pending }, 'fetched pages taken up: serving hosts again');
    }
    this.backlog.pagesBehind = pagesBehind;
  }

  /** A consumer's backlog; 0 when it cannot be told (no such consumer): serve as usual. */
  private async pending(stream: string, durable: string): Promise<number> {
    try {
      return (await this.ctx.streams.consumerPosition(stream, durable)).pending;
    } catch {
      return 0;
    }
  }

  /** A due host may start its turn now, or waits while fetch is behind (never past MAX_DEFER_MS). */
  private mayStart(host: string, behind: boolean, now: number): boolean {
    if (!behind || this.next.get(host)?.level === 'h') {
      this.deferredSince.delete(host);
      return true;
    }
    const since = this.deferredSince.get(host) ?? now;
    this.deferredSince.set(host, since);
    if (now - since < MAX_DEFER_MS) return false;
    this.deferredSince.delete(host);
    return true;
  }

  private keyOf(host: string, at: number): ReadyKey {
    const next = this.next.get(host);
    const weight = this.importance ? importanceWeight(this.importance.of(host, next?.domain)) : 1;
    if (!next) return { rank: 1, domainGrants: 0, weight, depth: 0, at };
    return { rank: next.level === 'h' ? 0 : 1, domainGrants: next.domain === undefined ? 0 : this.domains.count(next.domain), weight, depth: next.depth ?? 0, at };
  }

  /** Hosts with an entry (for tests and metrics). */
  get size(): number {
    return this.dueAt.size;
  }

  /** The host may have work from `at` on (default now). An earlier time wins. */
  notify(host: string, at = 0): void {
    if (this.stopped) return;
    if (this.running.has(host)) {
      const seen = this.running.get(host);
      this.running.set(host, seen === null || seen === undefined ? at : Math.min(seen, at));
      return;
    }
    const current = this.dueAt.get(host);
    // an earlier time changes nothing for a host already due: it waits among the ready ones
    // (a new entry would only leave its old one there, stale, one more for each URL queued)
    if (current !== undefined && (current <= at || current <= this.ctx.clock.now())) return;
    this.dueAt.set(host, at);
    this.heap.push({ at, host });
    this.kick();
  }

  /**
   * A URL was queued for the host. Only a host nothing else will bring back needs a turn for
   * it: one that was idle, or whose wait only some of its lanes had. A host with a turn to
   * come (a request in flight: its release or its lease's end; the host's delay, a pause,
   * robots.txt) cannot be served before that turn anyway, and a turn now would only read its
   * slot, queue and robots.txt to find so (KV reads for nothing, and with a delay between
   * requests most URLs queued for a busy host come at such a time). A host in its turn gets
   * another when that one ends idle, in case the turn read the queue before the URL.
   */
  queued(host: string): void {
    if (this.stopped) return;
    if (this.running.has(host)) {
      this.queuedWhileRunning.add(host);
      return;
    }
    if (this.dueAt.has(host) && !this.lanesWait.has(host) && !this.deferredSince.has(host)) return;
    this.notify(host);
  }

  /** An IP address has room again: its waiting hosts may try. */
  ipFreed(ip: string): void {
    const hosts = this.waitingOnIp.get(ip);
    if (!hosts) return;
    this.waitingOnIp.delete(ip);
    for (const host of hosts) this.notify(host);
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.kick();
    await this.loop;
    await Promise.allSettled([...this.inFlight, this.backlogReading]);
  }

  private kick(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const now = this.ctx.clock.now();
      // hosts that came due wait among the ready ones, ranked (ready-hosts.ts)
      for (let top = this.heap.peek(); top && top.at <= now; top = this.heap.peek()) {
        this.heap.pop();
        if (this.dueAt.get(top.host) === top.at) this.ready.add(top.host, top.at, now); // else superseded by an earlier notify
      }
      const due = this.ready.size > 0;
      const { behind, pagesBehind } = due ? await this.downstream(now) : { behind: false, pagesBehind: false };
      const heldBack: string[] = [];
      while (this.active < this.concurrency && !pagesBehind) {
        const top = this.ready.take(now);
        if (!top) break;
        this.dueAt.delete(top.host);
        if (this.mayStart(top.host, behind, now)) this.startTurn(top.host);
        else heldBack.push(top.host);
      }
      for (const host of heldBack) this.notify(host, now + 1000);
      if (this.held.size > 0 && now - this.heldCheck.at >= 1000 && !this.heldCheck.running) void this.checkHeld(now);
      const top = this.heap.peek();
      const sleepMs = this.active >= this.concurrency || !top || pagesBehind ? 1000 : Math.min(1000, Math.max(1, top.at - now));
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(() => this.kick(), sleepMs);
      });
      if (this.timer) clearTimeout(this.timer);
    }
  }

  /**
   * Held hosts get their turns back when the first pass is over, or when this gate has had
   * nothing else to serve for {@link HELD_IDLE_MS}: the pass cannot go further from here, and
   * a crawl must not end with URLs waiting.
   */
  private async checkHeld(now: number): Promise<void> {
    this.heldCheck.at = now;
    this.heldCheck.running = true;
    try {
      let release = !(await heldLanesWait(this.ctx));
      if (!release && this.dueAt.size === 0 && this.active === 0) {
        this.heldCheck.idleSince ??= now;
        if (now - this.heldCheck.idleSince >= HELD_IDLE_MS) {
          this.ctx.log.info({ hosts: this.held.size }, 'first pass: nothing else to serve here; serving the URLs it held back');
          releaseHeldLanes(this.ctx);
          release = true;
        }
      } else this.heldCheck.idleSince = null;
      if (!release) return;
      const hosts = [...this.held];
      this.held.clear();
      for (const host of hosts) this.notify(host);
    } catch (err) {
      this.ctx.log.warn({ err: (err as Error).message }, 'reading the first pass failed; trying again in 1 s');
    } finally {
      this.heldCheck.running = false;
    }
  }

  private startTurn(host: string): void {
    this.active += 1;
    this.running.set(host, null);
    this.lanesWait.delete(host);
    const turn = this.serve(this.ctx, host)
      .catch((err: Error): ServedTurn => {
        this.ctx.log.warn({ host, err: err.message }, 'serving a host failed; trying again in 1 s');
        this.ctx.metrics.count('politeness-gate', 'turns', 'error');
        return { next: { kind: 'wait', until: this.ctx.clock.now() + 1000 }, level: null };
      })
      .then(({ next: result, level, domain, depth }) => {
        if (result.kind === 'granted' && domain !== undefined) this.domains.granted(domain);
        if (level) this.next.set(host, { level, domain, depth });
        else if (result.kind === 'idle') {
          this.next.delete(host);
          this.deferredSince.delete(host);
        }
        this.endTurn(host, result);
      });
    const tracked = turn.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private endTurn(host: string, result: NextTurn): void {
    const queuedMeanwhile = this.queuedWhileRunning.delete(host);
    // a URL queued during an idle turn may not have been seen by it; nor during a turn whose
    // wait only some lanes had (the URL may be in another): either way the host gets a turn
    const notifiedAt = queuedMeanwhile && (result.kind === 'idle' || result.kind === 'held' || (result.kind === 'wait' && result.lanesOnly)) ? 0 : (this.running.get(host) ?? null);
    this.running.delete(host);
    this.active -= 1;
    if (result.kind === 'held') {
      // parked until the first pass ends (checkHeld); a URL queued meanwhile (a seed) brings it back
      this.held.add(host);
      if (notifiedAt !== null) this.notify(host, notifiedAt);
    } else if (result.kind === 'wait') {
      if (result.lanesOnly) this.lanesWait.add(host);
      if (result.ip) {
        const hosts = this.waitingOnIp.get(result.ip) ?? new Set<string>();
        hosts.add(host);
        this.waitingOnIp.set(result.ip, hosts);
      }
      this.notify(host, notifiedAt === null ? result.until : Math.min(notifiedAt, result.until));
    } else if (notifiedAt !== null) {
      // something changed during the turn (often the turn's own writes, which say when to come back)
      this.notify(host, notifiedAt);
    }
    // 'granted' and 'idle': the next change of the host's slot (a release, a URL queued) brings it back
    this.kick();
  }
}

interface NextUrl {
  level: LaneLevel;
  domain: string | undefined;
  depth: number | undefined;
}
