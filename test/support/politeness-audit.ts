import { robotsAllows, robotsCrawlDelay, type RequestRecord, type SiteModel } from '../../testweb/index.js';
import { compileRobots, type CompiledRobots } from '../../stages/shared/robots/robots-rules.js';

export interface AuditFindings {
  disallowedFetches: string[];
  overlaps: string[];
  shortGaps: string[];
  requests: number;
  /** the smallest gap seen per host minus its required delay, for the log */
  tightestMarginMs: number;
}

/**
 * Politeness as the site operator sees it, from the server's own request log: no request
 * to a path robots.txt disallows for the token, never two requests to one host at once,
 * and between the end of one request and the start of the next at least
 * max(Crawl-delay, the crawl's minimum delay).
 */
export function auditPoliteness(log: readonly RequestRecord[], model: SiteModel, token: string, minDelayMs: number): AuditFindings {
  const findings: AuditFindings = { disallowedFetches: [], overlaps: [], shortGaps: [], requests: log.length, tightestMarginMs: Infinity };
  const byHost = new Map<string, RequestRecord[]>();
  for (const r of log) {
    const host = model.byName.get(r.host);
    if (host && !robotsAllows(host.robots, token, r.path)) findings.disallowedFetches.push(`${r.host}${r.path}`);
    byHost.set(r.host, [...(byHost.get(r.host) ?? []), r]);
  }
  for (const [name, records] of byHost) {
    const host = model.byName.get(name);
    const crawlDelayS = host ? robotsCrawlDelay(host.robots, token) : undefined;
    const required = Math.max(minDelayMs, (crawlDelayS ?? 0) * 1000);
    const sorted = [...records].sort((a, b) => a.start - b.start);
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1]!;
      const cur = sorted[i]!;
      if (cur.start < prev.end) findings.overlaps.push(`${name}: ${prev.path} and ${cur.path} overlap`);
      const gap = cur.start - prev.end;
      findings.tightestMarginMs = Math.min(findings.tightestMarginMs, gap - required);
      // 1 ms of slack: the log's timestamps are rounded by the server
      if (gap < required - 1) findings.shortGaps.push(`${name}: ${Math.round(gap)} ms < ${required} ms before ${cur.path}`);
    }
  }
  return findings;
}

/** Fails with the offending requests listed when the crawl was impolite in any way. */
export function assertPolite(log: readonly RequestRecord[], model: SiteModel, token: string, minDelayMs: number): AuditFindings {
  const audit = auditPoliteness(log, model, token, minDelayMs);
  const problems = [...audit.disallowedFetches.map((p) => `disallowed: ${p}`), ...audit.overlaps, ...audit.shortGaps];
  if (problems.length > 0) throw new Error(`impolite crawl (${problems.length} problems):\n${problems.slice(0, 20).join('\n')}`);
  return audit;
}

// ---------------------------------------------------------------- model-free audit of a request log

export interface RequestLogAuditOptions {
  /** The crawler's robots.txt product token, e.g. 'testcrawler'. */
  token: string;
  /** The crawl's minimum delay between requests to one host (end to start). */
  minDelayMs: number;
  /** Most requests the crawler may have in flight on one server address at once. */
  perIpCap: number;
  /** Crawl-delay is honoured up to this much (the crawler clamps longer ones). Default 60000. */
  maxCrawlDelayMs?: number;
  /** Hosts left out of every check (and of the per-IP count), e.g. hosts audited elsewhere. */
  ignoreHosts?: (host: string) => boolean;
}

export interface RequestLogFindings {
  /** Requests to paths the robots.txt in force disallowed for the token. */
  disallowedFetches: string[];
  /** Requests made while no robots.txt was in force, or the one in force was 5xx/429/failed. */
  robotsUnavailableFetches: string[];
  /** Two requests to one host in flight at once. */
  overlaps: string[];
  /** Less than max(minDelayMs, Crawl-delay) between the end of one request and the start of the next. */
  shortGaps: string[];
  /** A request to a host before the Retry-After of an earlier response had passed. */
  retryAfterViolations: string[];
  /** More than perIpCap requests in flight on one server address. */
  perIpViolations: string[];
  counts: {
    requests: number;
    hosts: number;
    robotsRequests: number;
    disallowedFetches: number;
    robotsUnavailableFetches: number;
    overlaps: number;
    shortGaps: number;
    retryAfterViolations: number;
    perIpViolations: number;
  };
  /** Highest number of requests seen in flight at once, per server address. */
  maxInFlightByAddress: Record<string, number>;
  /** Smallest (gap - required delay) over all consecutive request pairs; Infinity if none. */
  tightestMarginMs: number;
}

const ROBOTS_PATH = '/robots.txt';
const pathOnly = (target: string) => target.split('?')[0] as string;
const isRobotsRequest = (r: RequestRecord) => pathOnly(r.path) === ROBOTS_PATH;
const fmtMs = (ms: number) => `${Math.round(ms)} ms`;

/**
 * What the robots.txt in force means for the requests after it (RFC 9309 section 2.3.1, as
 * stages/shared/robots/robots-fetch-policy.ts reads a response): 2xx -> its rules;
 * 3xx and 4xx other than 429 -> no rules, all allowed; 429, 5xx, a failed request
 * (status 0) or any other status -> unreachable, nothing but robots.txt may be fetched.
 */
type RobotsInForce = { kind: 'unavailable'; why: string } | { kind: 'allow_all' } | { kind: 'rules'; robots: CompiledRobots };

/**
 * Politeness judged from the server's request log alone, with no model of the web: for every
 * host, the robots.txt in force is the latest GET /robots.txt to that host that ended before
 * the request started (its body is in the log as robotsBody). A 304 keeps the one before it;
 * a 2xx whose body the log lacks counts as an empty file. Checks:
 *  - robots: no request while robots.txt is unknown or unreachable, none to a disallowed path;
 *  - overlaps: never two requests to one host in flight at once (robots.txt included);
 *  - gaps: next.start - prev.end >= max(minDelayMs, min(Crawl-delay, maxCrawlDelayMs)) - 1 ms,
 *    the Crawl-delay being that of the robots.txt in force when the next request started;
 *  - Retry-After: no request to the host before prev.end + retryAfterMs - 1 ms;
 *  - per IP: never more than perIpCap requests in flight on one localAddress (a request
 *    ending at t and another starting at t do not overlap).
 * The 1 ms of slack covers the server's timestamps being taken around, not at, the socket I/O.
 */
export function auditRequestLog(log: readonly RequestRecord[], opts: RequestLogAuditOptions): RequestLogFindings {
  const maxCrawlDelayMs = opts.maxCrawlDelayMs ?? 60_000;
  const records = log.filter((r) => !opts.ignoreHosts?.(r.host));
  const f: RequestLogFindings = {
    disallowedFetches: [],
    robotsUnavailableFetches: [],
    overlaps: [],
    shortGaps: [],
    retryAfterViolations: [],
    perIpViolations: [],
    counts: { requests: records.length, hosts: 0, robotsRequests: 0, disallowedFetches: 0, robotsUnavailableFetches: 0, overlaps: 0, shortGaps: 0, retryAfterViolations: 0, perIpViolations: 0 },
    maxInFlightByAddress: {},
    tightestMarginMs: Infinity,
  };

  const byHost = new Map<string, RequestRecord[]>();
  for (const r of records) {
    const list = byHost.get(r.host);
    if (list) list.push(r);
    else byHost.set(r.host, [r]);
  }
  f.counts.hosts = byHost.size;
  const compiled = new Map<string, CompiledRobots>();
  const compile = (body: string) => {
    let c = compiled.get(body);
    if (!c) {
      c = compileRobots({ kind: 'rules', body, fetchedAt: 0, status: 200, reason: 'audit' }, opts.token);
      compiled.set(body, c);
    }
    return c;
  };

  for (const [host, list] of byHost) {
    const sorted = [...list].sort((a, b) => a.start - b.start);
    // robots.txt GETs in order of their end: the one in force at t is the last with end <= t.
    const robotsByEnd = sorted.filter((r) => isRobotsRequest(r) && r.method === 'GET').sort((a, b) => a.end - b.end);
    f.counts.robotsRequests += sorted.filter(isRobotsRequest).length;
    const inForceAt = (t: number): RobotsInForce => {
      let i = -1;
      while (i + 1 < robotsByEnd.length && robotsByEnd[i + 1]!.end <= t) i++;
      while (i >= 0 && robotsByEnd[i]!.status === 304) i--; // not modified: the earlier body stays
      if (i < 0) return { kind: 'unavailable', why: 'no robots.txt fetched before it' };
      const r = robotsByEnd[i]!;
      if (r.status >= 200 && r.status < 300) return { kind: 'rules', robots: compile(r.robotsBody ?? '') };
      if (r.status >= 300 && r.status < 500 && r.status !== 429) return { kind: 'allow_all' };
      return { kind: 'unavailable', why: r.status === 0 ? 'robots.txt request failed' : `robots.txt answered ${r.status}` };
    };

    // Retry-After deadlines, applied to requests that start after the response ended.
    const retryByEnd = sorted.filter((r) => r.retryAfterMs !== undefined).sort((a, b) => a.end - b.end);
    let retryIdx = 0;
    let blockedUntil = -Infinity;
    let blockedBy: RequestRecord | undefined;

    let prev: RequestRecord | undefined;
    for (const cur of sorted) {
      const robots = inForceAt(cur.start);
      if (!isRobotsRequest(cur)) {
        if (robots.kind === 'unavailable') {
          f.robotsUnavailableFetches.push(`${host}${cur.path}: fetched while robots.txt unavailable (${robots.why})`);
        } else if (robots.kind === 'rules') {
          const v = robots.robots.verdict(`http://${host}${cur.path}`);
          if (!v.allowed) f.disallowedFetches.push(`${host}${cur.path}: disallowed for ${opts.token}${v.matchedRule ? ` by "${v.matchedRule}"` : ''}`);
        }
      }

      while (retryIdx < retryByEnd.length && retryByEnd[retryIdx]!.end <= cur.start) {
        const r = retryByEnd[retryIdx++]!;
        if (r.end + r.retryAfterMs! > blockedUntil) {
          blockedUntil = r.end + r.retryAfterMs!;
          blockedBy = r;
        }
      }
      if (blockedBy && cur.start < blockedUntil - 1) {
        f.retryAfterViolations.push(
          `${host}${cur.path}: started ${fmtMs(cur.start - blockedBy.end)} after ${blockedBy.path} answered ${blockedBy.status} with Retry-After ${fmtMs(blockedBy.retryAfterMs!)}`,
        );
      }

      if (prev) {
        if (cur.start < prev.end) f.overlaps.push(`${host}: ${prev.path} and ${cur.path} overlap by ${fmtMs(prev.end - cur.start)}`);
        const crawlDelayMs = robots.kind === 'rules' ? Math.min(robots.robots.crawlDelayMs ?? 0, maxCrawlDelayMs) : 0;
        const required = Math.max(opts.minDelayMs, crawlDelayMs);
        const gap = cur.start - prev.end;
        f.tightestMarginMs = Math.min(f.tightestMarginMs, gap - required);
        if (gap < required - 1) f.shortGaps.push(`${host}: ${fmtMs(gap)} < ${required} ms between ${prev.path} and ${cur.path}`);
      }
      // The next gap is measured from whichever earlier request ended last.
      if (!prev || cur.end > prev.end) prev = cur;
    }
  }

  auditPerAddress(records, opts.perIpCap, f);
  for (const key of ['disallowedFetches', 'robotsUnavailableFetches', 'overlaps', 'shortGaps', 'retryAfterViolations', 'perIpViolations'] as const) {
    f.counts[key] = f[key].length;
  }
  return f;
}

/** Sweep over start/end events per server address; at equal times ends go first. */
function auditPerAddress(records: readonly RequestRecord[], cap: number, f: RequestLogFindings): void {
  const byAddress = new Map<string, Array<{ t: number; delta: 1 | -1; r: RequestRecord }>>();
  for (const r of records) {
    if (!(r.end > r.start)) continue; // never in flight for any length of time
    const address = r.localAddress || 'unknown';
    const events = byAddress.get(address) ?? [];
    events.push({ t: r.start, delta: 1, r }, { t: r.end, delta: -1, r });
    byAddress.set(address, events);
  }
  for (const [address, events] of byAddress) {
    events.sort((a, b) => a.t - b.t || a.delta - b.delta);
    const inFlight = new Set<RequestRecord>();
    let max = 0;
    let over = false;
    for (const e of events) {
      if (e.delta === 1) inFlight.add(e.r);
      else inFlight.delete(e.r);
      max = Math.max(max, inFlight.size);
      // One finding per excursion above the cap, listing what was in flight when it began.
      if (inFlight.size > cap && !over) {
        const what = [...inFlight].slice(0, 8).map((r) => `${r.host}${r.path}`).join(', ');
        f.perIpViolations.push(`${address}: ${inFlight.size} requests in flight (cap ${cap}) at ${new Date(e.t).toISOString()}: ${what}${inFlight.size > 8 ? ', ...' : ''}`);
      }
      over = inFlight.size > cap;
    }
    f.maxInFlightByAddress[address] = max;
  }
}

/** Fails with up to 20 of the problems listed when the log shows any impoliteness. */
export function assertRequestLogPolite(log: readonly RequestRecord[], opts: RequestLogAuditOptions): RequestLogFindings {
  const f = auditRequestLog(log, opts);
  const problems = [
    ...f.robotsUnavailableFetches.map((p) => `robots unavailable: ${p}`),
    ...f.disallowedFetches.map((p) => `disallowed: ${p}`),
    ...f.overlaps.map((p) => `overlap: ${p}`),
    ...f.shortGaps.map((p) => `short gap: ${p}`),
    ...f.retryAfterViolations.map((p) => `retry-after: ${p}`),
    ...f.perIpViolations.map((p) => `per-ip: ${p}`),
  ];
  if (problems.length > 0) {
    const c = f.counts;
    const summary = `${c.robotsUnavailableFetches} robots-unavailable, ${c.disallowedFetches} disallowed, ${c.overlaps} overlaps, ${c.shortGaps} short gaps, ${c.retryAfterViolations} retry-after, ${c.perIpViolations} per-ip`;
    throw new Error(`impolite crawl (${problems.length} problems: ${summary}):\n${problems.slice(0, 20).join('\n')}`);
  }
  return f;
}
