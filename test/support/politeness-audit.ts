import { robotsAllows, robotsCrawlDelay, type RequestRecord, type SiteModel } from '../../testweb/index.js';

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
