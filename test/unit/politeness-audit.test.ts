// The model-free request-log audit: each check must catch its violation in a small synthetic
// log and stay quiet on a clean one, since the politeness acceptance test relies on it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestRecord } from '../../testweb/index.js';
import { assertRequestLogPolite, auditRequestLog, type RequestLogAuditOptions } from '../support/politeness-audit.js';

const T0 = 1.7e12;
const OPTS: RequestLogAuditOptions = { token: 'testcrawler', minDelayMs: 100, perIpCap: 2 };

/** A record at T0 + startMs .. T0 + endMs; 200 GET on 127.0.0.1 unless told otherwise. */
function rec(host: string, path: string, startMs: number, endMs: number, extra: Partial<RequestRecord> = {}): RequestRecord {
  return { host, path, method: 'GET', userAgent: 'testcrawler/1.0', start: T0 + startMs, end: T0 + endMs, status: 200, localAddress: '127.0.0.1', protocol: 'http/1.1', tls: false, ...extra };
}

const robots = (host: string, startMs: number, endMs: number, body: string, extra: Partial<RequestRecord> = {}) =>
  rec(host, '/robots.txt', startMs, endMs, { robotsBody: body, ...extra });

const noProblems = (log: RequestRecord[], opts: RequestLogAuditOptions = OPTS) => {
  const f = assertRequestLogPolite(log, opts);
  const c = f.counts;
  assert.equal(c.disallowedFetches + c.robotsUnavailableFetches + c.overlaps + c.shortGaps + c.retryAfterViolations + c.perIpViolations, 0);
  return f;
};

test('a clean log passes every check', () => {
  const log = [
    robots('a.test', 0, 10, 'User-agent: *\nDisallow: /private/\nCrawl-delay: 0.2\n'),
    rec('a.test', '/', 210, 220),
    rec('a.test', '/p1', 420, 430),
    rec('a.test', '/p2', 630, 640, { status: 429, retryAfterMs: 1000 }),
    rec('a.test', '/p2', 1640, 1650),
    robots('b.test', 5, 15, '', { status: 404, robotsBody: undefined }),
    rec('b.test', '/private/ok', 115, 130),
  ];
  const f = noProblems(log);
  assert.equal(f.counts.requests, 7);
  assert.equal(f.counts.hosts, 2);
  assert.equal(f.counts.robotsRequests, 2);
  assert.ok(f.tightestMarginMs >= 0 && f.tightestMarginMs < 1, `tightest margin ${f.tightestMarginMs}`);
  assert.equal(f.maxInFlightByAddress['127.0.0.1'], 2);
});

test('disallowed fetches: the robots.txt in force, for the token', () => {
  const body = 'User-agent: *\nDisallow: /private/\n\nUser-agent: TestCrawler\nDisallow: /nocrawl/\n';
  const log = [robots('a.test', 0, 10, body), rec('a.test', '/nocrawl/x', 200, 210), rec('a.test', '/private/y', 400, 410)];
  // testcrawler's own group replaces '*': /nocrawl/ is disallowed, /private/ is not.
  const f = auditRequestLog(log, OPTS);
  assert.deepEqual(f.disallowedFetches.length, 1);
  assert.match(f.disallowedFetches[0]!, /a\.test\/nocrawl\/x.*Disallow: \/nocrawl\//);
  const other = auditRequestLog(log, { ...OPTS, token: 'otherbot' });
  assert.equal(other.disallowedFetches.length, 1);
  assert.match(other.disallowedFetches[0]!, /\/private\/y/);

  // A robots.txt that changes: pages fetched before the new one ended are judged by the old one.
  const changing = [
    robots('c.test', 0, 10, 'User-agent: *\nAllow: /\n'),
    rec('c.test', '/late/1', 200, 210),
    robots('c.test', 400, 410, 'User-agent: *\nDisallow: /late/\n'),
    rec('c.test', '/late/2', 600, 610),
  ];
  assert.deepEqual(auditRequestLog(changing, OPTS).disallowedFetches.map((s) => s.split(':')[0]), ['c.test/late/2']);
  // A 304 keeps the rules of the robots.txt before it.
  const revalidated = [...changing, robots('c.test', 800, 810, '', { status: 304, robotsBody: undefined }), rec('c.test', '/late/3', 1000, 1010)];
  assert.equal(auditRequestLog(revalidated, OPTS).disallowedFetches.length, 2);
});

test('robots.txt unavailable: none yet, 5xx, 429, failed; 4xx and 3xx allow all', () => {
  const cases: Array<[Partial<RequestRecord> | null, boolean]> = [
    [null, true],
    [{ status: 503 }, true],
    [{ status: 500 }, true],
    [{ status: 429 }, true],
    [{ status: 0 }, true],
    [{ status: 404 }, false],
    [{ status: 403 }, false],
    [{ status: 301 }, false],
  ];
  for (const [robotsExtra, violation] of cases) {
    const log = [rec('a.test', '/', 200, 210)];
    if (robotsExtra) log.unshift(robots('a.test', 0, 10, '', { robotsBody: undefined, ...robotsExtra }));
    const f = auditRequestLog(log, OPTS);
    assert.equal(f.robotsUnavailableFetches.length, violation ? 1 : 0, `robots ${JSON.stringify(robotsExtra)}`);
    if (violation) assert.match(f.robotsUnavailableFetches[0]!, /fetched while robots\.txt unavailable/);
  }
  // A robots.txt still in flight when the page request started is not yet in force.
  const early = [robots('a.test', 0, 300, 'User-agent: *\nAllow: /\n'), rec('a.test', '/', 250, 260)];
  assert.equal(auditRequestLog(early, OPTS).robotsUnavailableFetches.length, 1);
  // After a 503, a later 200 brings the host back.
  const recovered = [robots('a.test', 0, 10, '', { status: 503, robotsBody: undefined }), robots('a.test', 200, 210, 'User-agent: *\nAllow: /\n'), rec('a.test', '/', 400, 410)];
  noProblems(recovered);
});

test('overlaps: two requests to one host in flight at once, robots.txt included', () => {
  const log = [robots('a.test', 0, 100, 'User-agent: *\nAllow: /\n'), rec('a.test', '/', 200, 400), rec('a.test', '/p1', 300, 350)];
  const f = auditRequestLog(log, { ...OPTS, minDelayMs: 0 });
  assert.equal(f.overlaps.length, 1);
  assert.match(f.overlaps[0]!, /a\.test: \/ and \/p1 overlap/);
  const withRobots = [robots('a.test', 0, 100, 'User-agent: *\nAllow: /\n'), rec('a.test', '/robots.txt', 50, 60, { status: 404 })];
  assert.equal(auditRequestLog(withRobots, { ...OPTS, minDelayMs: 0 }).overlaps.length, 1);
  // Different hosts may overlap.
  noProblems([robots('a.test', 0, 100, ''), robots('b.test', 50, 150, '')], { ...OPTS, minDelayMs: 0 });
});

test('gaps: minDelayMs, Crawl-delay of the robots.txt in force, the clamp, 1 ms of slack', () => {
  const allow = 'User-agent: *\nAllow: /\n';
  const short = auditRequestLog([robots('a.test', 0, 10, allow), rec('a.test', '/', 60, 70)], OPTS);
  assert.equal(short.shortGaps.length, 1);
  assert.match(short.shortGaps[0]!, /a\.test: 50 ms < 100 ms between \/robots\.txt and \//);
  noProblems([robots('a.test', 0, 10, allow), rec('a.test', '/', 109.5, 120)]);

  const delayed = 'User-agent: *\nCrawl-delay: 2\n';
  assert.equal(auditRequestLog([robots('a.test', 0, 10, delayed), rec('a.test', '/', 1510, 1520)], OPTS).shortGaps.length, 1);
  noProblems([robots('a.test', 0, 10, delayed), rec('a.test', '/', 2010, 2020)]);
  noProblems([robots('a.test', 0, 10, delayed), rec('a.test', '/', 510, 520)], { ...OPTS, maxCrawlDelayMs: 500 });
  // The Crawl-delay applies from the moment its robots.txt is in force, not before.
  noProblems([robots('a.test', 0, 10, allow), rec('a.test', '/', 110, 120), robots('a.test', 220, 230, delayed)]);
});

test('Retry-After: no request to the host before it has passed', () => {
  const allow = 'User-agent: *\nAllow: /\n';
  const log = [
    robots('a.test', 0, 10, allow),
    rec('a.test', '/p1', 200, 210, { status: 429, retryAfterMs: 2000 }),
    rec('a.test', '/p2', 1210, 1220),
    rec('a.test', '/p1', 2210, 2220),
    robots('b.test', 0, 10, allow),
    rec('b.test', '/', 300, 310), // another host is not held back
  ];
  const f = auditRequestLog(log, OPTS);
  assert.equal(f.retryAfterViolations.length, 1);
  assert.match(f.retryAfterViolations[0]!, /a\.test\/p2: started 1000 ms after \/p1 answered 429 with Retry-After 2000 ms/);
  noProblems([log[0]!, log[1]!, rec('a.test', '/p1', 2209.5, 2220)]);
});

test('per IP: at most perIpCap in flight on one address; touching requests do not overlap', () => {
  const on2 = { localAddress: '127.0.0.2' };
  const sites = ['s00', 's01', 's02', 's03'].map((s) => `${s}.sharedip.test`);
  const rob = (i: number, start: number, end: number) => robots(sites[i]!, start, end, 'User-agent: *\nAllow: /\n', on2);
  const three = [rob(0, 0, 100), rob(1, 10, 110), rob(2, 20, 120)];
  const f = auditRequestLog(three, OPTS);
  assert.equal(f.perIpViolations.length, 1);
  assert.match(f.perIpViolations[0]!, /^127\.0\.0\.2: 3 requests in flight \(cap 2\)/);
  assert.equal(f.maxInFlightByAddress['127.0.0.2'], 3);
  // End at t and start at t: two in flight at most.
  const touching = noProblems([rob(0, 0, 100), rob(1, 10, 110), rob(2, 100, 200), rob(3, 110, 210)]);
  assert.equal(touching.maxInFlightByAddress['127.0.0.2'], 2);
  // Addresses are counted separately.
  noProblems([rob(0, 0, 100), rob(1, 10, 110), robots('a.test', 20, 120, ''), robots('b.test', 30, 130, '')]);
  // One finding per excursion above the cap.
  const twice = auditRequestLog([...three, rob(0, 300, 400), rob(1, 310, 410), rob(2, 320, 420), rob(3, 330, 430)], OPTS);
  assert.equal(twice.perIpViolations.length, 2);
});

test('ignoreHosts leaves hosts out of every check', () => {
  const log = [rec('bad.test', '/', 0, 10), rec('bad.test', '/', 5, 20), robots('a.test', 0, 10, '')];
  assert.ok(auditRequestLog(log, OPTS).counts.robotsUnavailableFetches > 0);
  const f = noProblems(log, { ...OPTS, ignoreHosts: (h) => h === 'bad.test' });
  assert.equal(f.counts.requests, 1);
});

test('assertRequestLogPolite lists at most 20 problems, with counts', () => {
  const log = Array.from({ length: 30 }, (_, i) => rec(`h${i}.test`, '/', 0, 0));
  assert.throws(
    () => assertRequestLogPolite(log, { ...OPTS, perIpCap: 100 }),
    (err: Error) => {
      assert.match(err.message, /^impolite crawl \(30 problems: 30 robots-unavailable, 0 disallowed/);
      assert.equal(err.message.split('\n').length, 21);
      return true;
    },
  );
});
