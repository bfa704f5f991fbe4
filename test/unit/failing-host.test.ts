/**
 * A failing host has a bounded cost: the pacing of a failing spell (pauses, giving up), what
 * the gate does with a paused host's queued URLs, and whole crawls of one host through the
 * real gate and fetch code on a fake clock: a host that dies after its robots.txt, and a host
 * whose failing URLs sit beside working ones. The crawls run the defaults of the pause
 * (5 failures, 600 s) and of the retries (3): fake time makes a 24-minute worst case cost
 * milliseconds.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { serveHost } from '../../stages/politeness-gate/serve-host.js';
import { hostWaitSources, listHostWaits } from '../../stages/politeness-gate/index.js';
import { failingHostEnd } from '../../stages/politeness-gate/failing-host.js';
import { handleFetch } from '../../stages/fetch/handle.js';
import { asSlot, emptySlot, type HostSlot } from '../../stages/shared/politeness/host-slot.js';
import { failingHostBoundMs, nextPacing, pacingOf, PAUSES_BEFORE_GIVING_UP, type FetchFeedback, type PacingSettings } from '../../stages/shared/politeness/host-pacing.js';
import { jsonValue, parseJsonValue } from '../../pipeline/kv-store.js';
import { jobKey } from '../../stages/shared/jobs/job-records.js';
import { parseSettings } from '../../pipeline/settings.js';
import { HttpFetchError, type HttpRequest } from '../../ports/http.js';
import { decodeAdmittedBatch, decodeFetched, decodeGrant, decodeOutcome, decodeRevisit, JobSpec, type AdmittedUrl, type JobRecord, type LastFailure, type UrlOutcome } from '../../schemas/index.js';
import { createFakeContext, htmlResponse, httpResponse, settleLikeRunner, stageInput, type FakeContext } from '../support/fake-context.js';

const T = 1_700_000_000_000;
const HOST = 'failing.example';
const PACING: PacingSettings = { adaptiveDelayFactor: 0, backoffBaseMs: 1000, maxBackoffMs: 60_000, pauseAfterFailures: 3, pauseMs: 100_000 };
const noJitter = () => 0.5;
const TIMEOUT: LastFailure = { outcome: 'network_error', reason: 'timeout: total timeout after 30000 ms', status: null };
const timeout = (failure: LastFailure = TIMEOUT): FetchFeedback => ({ kind: 'network_error', code: 'timeout', durationMs: 30_000, baseDelayMs: 1000, failure });
/** a failure with no page failure attached: a robots.txt fetch's, or a request whose end nobody recorded */
const unknownEnd: FetchFeedback = { kind: 'network_error', code: 'timeout', durationMs: 30_000, baseDelayMs: 1000 };
const ok: FetchFeedback = { kind: 'ok', durationMs: 10, baseDelayMs: 1000 };

/** Feeds results to nextPacing as releases would, one after the other; returns every state. */
function spell(results: FetchFeedback[], start: Partial<HostSlot> = {}) {
  let slot: HostSlot = { ...emptySlot(HOST), ...start };
  let now = T;
  return results.map((fb) => {
    now += 1000;
    slot = { ...slot, ...nextPacing(slot, fb, now, PACING, noJitter) };
    now = Math.max(now, slot.next_allowed_at);
    return slot;
  });
}

describe('a failing spell (host pacing, pure)', () => {
  test('pauseAfterFailures failures pause the host; a failed probe pauses it again; a third pause gives it up', () => {
    const states = spell([timeout(), timeout(), timeout(), timeout(), timeout()]);
    assert.deepEqual(
      states.map((s) => [s.failures, s.pauses, s.paused_until > 0, s.given_up_at > 0]),
      [
        [1, 0, false, false],
        [2, 0, false, false],
        [3, 1, true, false],
        [4, 2, true, false],
        [5, 3, true, true],
      ],
    );
    assert.match(states[2]!.last_decision, /^timeout: 3 failures in a row, host paused 100000 ms, then one probe \(pause 1 of 2: URLs that failed are not retried\)$/);
    assert.match(states[3]!.last_decision, /\(pause 2 of 2: if it fails, the host is given up\)$/);
    assert.match(states[4]!.last_decision, /^timeout: 5 failures in a row after 2 pauses, host given up: its queued URLs end; host paused 100000 ms, then one probe$/);
    const first = states[0]!.failing_since;
    assert.ok(first > 0 && states.every((s) => s.failing_since === first), 'the spell began with its first failure');
    assert.deepEqual(states[4]!.last_failure, TIMEOUT);
    assert.equal(PAUSES_BEFORE_GIVING_UP, 2);
  });

  test('the pause itself, and the backoff, are what they were: politeness does not change', () => {
    const states = spell([timeout(), timeout(), timeout(), timeout(), timeout()]);
    const unpaced = spell([unknownEnd, unknownEnd, unknownEnd, unknownEnd, unknownEnd]);
    assert.deepEqual(
      states.map((s) => [s.next_allowed_at, s.paused_until, s.delay_ms]),
      unpaced.map((s) => [s.next_allowed_at, s.paused_until, s.delay_ms]),
      'giving up changes which URLs wait, never when the host may be asked again',
    );
  });

  test('only a page request gives a host up: robots.txt failures and requests whose end is unknown pace it, no more', () => {
    const states = spell([timeout(), timeout(), timeout(), timeout(), unknownEnd, unknownEnd]);
    assert.deepEqual(states.map((s) => s.given_up_at > 0), [false, false, false, false, false, false]);
    assert.equal(states.at(-1)!.pauses, 4);
    const then = spell([timeout()], states.at(-1)!);
    assert.ok(then[0]!.given_up_at > 0, 'the next page failure does');
  });

  test('an answer ends the give-up; the spell (its pauses) ends once no failure is left', () => {
    const states = spell([timeout(), timeout(), timeout(), timeout(), timeout(), ok, timeout()]);
    const answered = states[5]!;
    assert.equal(answered.given_up_at, 0, 'the host answered: its URLs are served again');
    assert.equal(answered.pauses, 3, 'still failing: the spell goes on');
    assert.ok(states[6]!.given_up_at > 0, 'failing on: given up again at once, no new pauses granted');
    const healed = spell([timeout(), timeout(), timeout(), ok, ok, ok, timeout()]);
    assert.deepEqual([healed[5]!.failures, healed[5]!.pauses, healed[5]!.failing_since, healed[5]!.last_failure], [0, 0, 0, null]);
    assert.deepEqual([healed[6]!.failures, healed[6]!.pauses], [1, 0], 'a new spell');
  });
});

describe('the worst case of a failing host', () => {
  test('the defaults: minutes, not hours', () => {
    const s = parseSettings({ crawlId: 'x' });
    const bound = failingHostBoundMs({ ...pacingOf({ settings: s }), totalTimeoutMs: s.totalTimeoutMs }, s.minDelayMs);
    // 7 requests of at most 30 s, backoffs of at most 2.4 + 4.8 + 9.6 + 19.2 s, two pauses of 600 s
    const figure = 7 * (30_000 + 50) + (2400 + 4800 + 9600 + 19_200) + 2 * 600_000;
    assert.equal(bound, figure);
    assert.ok(bound < 25 * 60_000, `${bound} ms`);
  });

  test('a host whose robots.txt keeps failing is given up on the same scale, by default', async () => {
    const ctx = createFakeContext();
    ctx.http.respond = (req: HttpRequest) => {
      assert.equal(new URL(req.url).pathname, '/robots.txt');
      ctx.clock.advance(ctx.settings.totalTimeoutMs);
      throw new HttpFetchError('timeout', `fetching ${req.url}: total timeout after ${ctx.settings.totalTimeoutMs} ms`);
    };
    const start = ctx.clock.now();
    await run(ctx, ['/a', '/b']);
    const rows = terminal(ctx);
    assert.deepEqual(rows.map((o) => o.outcome), ['robots_disallowed', 'robots_disallowed']);
    const took = Math.max(...rows.map((o) => o.fetch_time)) - start;
    const s = ctx.settings;
    const pages = failingHostBoundMs({ ...pacingOf(ctx), totalTimeoutMs: s.totalTimeoutMs }, s.minDelayMs);
    console.log(`a host whose robots.txt times out: its URLs ended ${took} ms after the first try (--robots-give-up-ms ${s.robotsGiveUpMs})`);
    assert.ok(took >= s.robotsGiveUpMs && took <= pages, `given up ${took} ms after the first try: --robots-give-up-ms ${s.robotsGiveUpMs}, a failing host's bound ${pages}`);
  });

  test('grows with the settings it is made of', () => {
    const s = { ...PACING, totalTimeoutMs: 10_000 };
    const base = failingHostBoundMs(s, 1000);
    assert.equal(failingHostBoundMs({ ...s, pauseMs: 200_000 }, 1000) - base, 2 * 100_000, 'two pauses');
    assert.equal(failingHostBoundMs({ ...s, totalTimeoutMs: 20_000 }, 1000) - base, 5 * 10_000, 'P + 2 requests');
    assert.ok(failingHostBoundMs(s, 5000) > base, "the host's delay, where it is longer than a backoff");
  });
});

describe('the gate and a paused host', () => {
  const url = (over: Partial<AdmittedUrl> = {}): AdmittedUrl => ({ v: 1, url: `https://${HOST}/a`, host: HOST, domain: HOST, depth: 1, source_url: null, via: 'link', fetch_id: 'fid-a', admitted_at: 0, ...over });
  const paused = (over: Partial<HostSlot> = {}): HostSlot => ({ ...emptySlot(HOST), failures: 5, pauses: 1, failing_since: T - 200_000, paused_until: T + 600_000, last_failure: TIMEOUT, ...over });
  const RESET: LastFailure = { outcome: 'network_error', reason: 'reset: ECONNRESET', status: null };
  const HTTP_503: LastFailure = { outcome: 'http_error', reason: 'http 503', status: 503 };

  test('a URL waiting for a retry ends with its own last reason; a URL not tried yet waits for the probe', () => {
    assert.deepEqual(failingHostEnd(paused(), url({ attempt: 1, last_failure: RESET }), T), {
      outcome: 'network_error',
      reason: `reset: ECONNRESET; not retried: host paused after 5 failures in a row, until ${new Date(T + 600_000).toISOString()}`,
      status: null,
    });
    assert.equal(failingHostEnd(paused(), url({ attempt: 2, last_failure: HTTP_503 }), T)?.outcome, 'http_error');
    assert.equal(failingHostEnd(paused(), url({ attempt: 2, last_failure: HTTP_503 }), T)?.status, 503);
    assert.equal(failingHostEnd(paused(), url(), T), null);
  });

  test('a URL the server asked to come back later for (429, Retry-After) waits for the probe; given up, it ends too', () => {
    const throttled: LastFailure = { outcome: 'http_error', reason: 'http 429', status: 429, throttled: true };
    assert.equal(failingHostEnd(paused(), url({ attempt: 1, last_failure: throttled }), T), null);
    assert.equal(failingHostEnd(paused({ given_up_at: T - 1 }), url({ attempt: 1, last_failure: throttled }), T)?.reason, 'http 429; host given up: 5 failures in a row over 200 s, 2 pauses');
  });

  test('given up: every queued URL ends, one never tried with the reason the host was given up for', () => {
    const host = paused({ failures: 7, pauses: 3, given_up_at: T - 1000 });
    assert.deepEqual(failingHostEnd(host, url(), T), {
      outcome: 'network_error',
      reason: 'host given up, not tried: 7 failures in a row over 199 s, 2 pauses; its last failure: timeout: total timeout after 30000 ms',
      status: null,
    });
    assert.equal(failingHostEnd(host, url({ attempt: 1, last_failure: RESET }), T)?.reason, 'reset: ECONNRESET; host given up: 7 failures in a row over 199 s, 2 pauses');
  });

  test("through the gate: a paused host's retry ends with its row; a job's URL gets its next revisit, as after a failed fetch", async () => {
    const ctx = createFakeContext({ respond: () => httpResponse(200, { body: 'User-agent: *\nAllow: /\n' }) });
    const record: JobRecord = { id: 'j1', spec: JobSpec.parse({ seeds: [`https://${HOST}/`], revisit: {} }), state: 'active', created_at: 1, runs: 1, last_run_at: null, next_run_at: null, via: 'http', scope_domains: [HOST], min_delay_ms: 0 };
    await ctx.kv.jobs.put(jobKey('j1'), jsonValue(record));
    const now = ctx.clock.now();
    await ctx.kv.hosts.put(HOST, jsonValue(paused({ paused_until: now + 600_000, next_allowed_at: now + 600_000 })));
    for (const [i, m] of [url({ attempt: 1, last_failure: RESET }), url({ url: `https://${HOST}/b`, fetch_id: 'fid-b', job: 'j1', attempt: 2, last_failure: HTTP_503 }), url({ url: `https://${HOST}/c`, fetch_id: 'fid-c' })].entries()) {
      await settleLikeRunner(ctx, await handleGateIntake(stageInput([m], { streamSeq: 100 + i, subject: 'crawl.frontier.0' }), ctx));
    }
    const turn = await serveHost(ctx, HOST);
    assert.deepEqual(turn, { kind: 'wait', until: now + 600_000 }, '/c was never tried: it waits for the probe');
    assert.deepEqual(
      outcomesOf(ctx).map((o) => [o.url, o.outcome, o.fetch_status, o.job]),
      [
        [`https://${HOST}/a`, 'network_error', null, undefined],
        [`https://${HOST}/b`, 'http_error', 503, 'j1'],
      ],
    );
    assert.equal(ctx.streams.on('crawl.revisit').length, 1, "the job's URL is revisited later");
    // and its row says when (no change estimate: no copy was compared)
    const scheduled = decodeRevisit(ctx.streams.on('crawl.revisit')[0]!.data).state;
    assert.deepEqual(outcomesOf(ctx).map((o) => [o.next_due_at, o.change_rate]), [[undefined, undefined], [scheduled.due_at, null]]);
    assert.equal(ctx.http.requests.length, 0, 'nothing is asked of a paused host');
  });

  test('once the pause is over, nothing ends without a request: the next URL is the probe', () => {
    const over = paused({ paused_until: T - 1 });
    assert.equal(failingHostEnd(over, url({ attempt: 1, last_failure: RESET }), T), null);
    assert.equal(failingHostEnd({ ...over, given_up_at: T - 5000 }, url(), T), null);
  });
});

// ---------------------------------------------------------------------------------------------
// Whole crawls of one host: the gate's intake and turns, fetch, retries back to the intake.

const settingsOf = (over: Record<string, unknown> = {}) => ({ minDelayMs: 1000, ...over });

interface Crawl {
  ctx: FakeContext;
  /** page requests (robots.txt aside): path and start time */
  requests: Array<{ path: string; at: number }>;
}

function crawlOf(answer: (path: string, ctx: FakeContext) => ReturnType<typeof htmlResponse>, settings = settingsOf()): Crawl {
  const requests: Crawl['requests'] = [];
  const ctx = createFakeContext({ settings });
  ctx.http.respond = (req: HttpRequest) => {
    const path = new URL(req.url).pathname;
    if (path === '/robots.txt') return httpResponse(200, { body: 'User-agent: *\nAllow: /\n' });
    requests.push({ path, at: ctx.clock.now() });
    return answer(path, ctx);
  };
  return { ctx, requests };
}

const admitted = (path: string): AdmittedUrl => ({ v: 1, url: `https://${HOST}${path}`, host: HOST, domain: HOST, depth: 1, source_url: null, via: 'link', fetch_id: `fid${path}`, admitted_at: 0 });

/** Runs the host's crawl to its end (the gate idle), or until `stop` says so: intake, gate turns, fetches, on fake time. */
async function run(ctx: FakeContext, paths: string[], stop: () => Promise<boolean> = async () => false): Promise<void> {
  let frontierSeq = 0;
  const intake = async (urls: AdmittedUrl[], seq: number) => settleLikeRunner(ctx, await handleGateIntake(stageInput(urls, { streamSeq: seq, subject: 'crawl.frontier.0' }), ctx));
  for (const p of paths) await intake([admitted(p)], ++frontierSeq);
  let frontierDone = 0;
  let readyDone = 0;
  for (let turns = 0; turns < 5000; turns++) {
    if (await stop()) return;
    const frontier = ctx.streams.on('crawl.frontier');
    for (; frontierDone < frontier.length; frontierDone++) await intake(decodeAdmittedBatch(frontier[frontierDone]!.data), 1_000_000 + frontier[frontierDone]!.seq);
    const turn = await serveHost(ctx, HOST);
    const ready = ctx.streams.on('crawl.ready');
    if (readyDone < ready.length) {
      for (; readyDone < ready.length; readyDone++) {
        await settleLikeRunner(ctx, await handleFetch(stageInput(decodeGrant(ready[readyDone]!.data), { subject: ready[readyDone]!.subject }), ctx));
      }
      continue;
    }
    if (ctx.streams.on('crawl.frontier').length > frontierDone) continue;
    if (turn.kind === 'idle') return;
    if (turn.kind === 'wait') ctx.clock.set(Math.max(turn.until, ctx.clock.now() + 1));
  }
  throw new Error('the crawl did not end in 5000 turns');
}

const outcomesOf = (ctx: FakeContext): UrlOutcome[] => ctx.streams.on('crawl.outcomes').map((m) => decodeOutcome(m.data));
const terminal = (ctx: FakeContext) => outcomesOf(ctx).filter((o) => o.outcome !== 'retry');
const fetchedUrls = (ctx: FakeContext) => ctx.streams.on('crawl.fetched').map((m) => decodeFetched(m.data).url);
const slotOf = async (ctx: FakeContext) => asSlot(HOST, parseJsonValue<HostSlot>((await ctx.kv.hosts.get(HOST))!.value));

/** every URL ends exactly once: a page or one terminal row */
function assertEveryUrlEndsOnce(ctx: FakeContext, paths: string[]) {
  const ends = [...terminal(ctx).map((o) => o.url), ...fetchedUrls(ctx)].sort();
  assert.deepEqual(ends, paths.map((p) => `https://${HOST}${p}`).sort());
}

describe('a crawl of a failing host (gate and fetch on a fake clock, default pause and retries)', () => {
  test('a host that dies after its robots.txt: 7 requests, then all of its 40 URLs end with the reason, within the documented bound', async () => {
    const { ctx, requests } = crawlOf((path, c) => {
      c.clock.advance(c.settings.totalTimeoutMs); // every request takes as long as the crawl lets it
      throw new HttpFetchError('timeout', `fetching https://${HOST}${path}: total timeout after ${c.settings.totalTimeoutMs} ms`);
    });
    const paths = Array.from({ length: 40 }, (_, i) => `/p${i}`);
    await run(ctx, paths);

    const s = ctx.settings;
    assert.equal(requests.length, s.pauseAfterFailures + PAUSES_BEFORE_GIVING_UP, 'P failures, then one probe per pause');
    assertEveryUrlEndsOnce(ctx, paths);
    const rows = terminal(ctx);
    assert.ok(rows.every((o) => o.outcome === 'network_error'), JSON.stringify(rows.map((o) => o.outcome)));
    for (const o of rows) assert.match(o.reason, /timeout: fetching .*: total timeout after 30000 ms/, o.url);
    const tried = new Set(requests.map((r) => `https://${HOST}${r.path}`));
    const untried = rows.filter((o) => !tried.has(o.url));
    assert.equal(untried.length, 40 - tried.size);
    for (const o of untried) assert.match(o.reason, /^host given up, not tried: 7 failures in a row over \d+ s, 2 pauses; its last failure: timeout: .*total timeout after 30000 ms$/, o.url);
    const retried = rows.filter((o) => outcomesOf(ctx).some((r) => r.outcome === 'retry' && r.url === o.url));
    for (const o of retried) assert.match(o.reason, /; host given up: 7 failures in a row/, `${o.url}: a retry waiting when the host was given up ends with its own reason`);
    // the probes' URLs: their failure paused the host, so they ended at once, retries left
    for (const probe of requests.slice(s.pauseAfterFailures - 1)) {
      const row = rows.find((o) => o.url === `https://${HOST}${probe.path}`)!;
      assert.match(row.reason, /total timeout after 30000 ms; not retried: timeout: \d failures in a row/, row.reason);
    }

    const lastEnd = Math.max(...rows.map((o) => o.fetch_time));
    const took = lastEnd - requests[0]!.at;
    const bound = failingHostBoundMs({ ...pacingOf(ctx), totalTimeoutMs: s.totalTimeoutMs }, s.minDelayMs);
    console.log(`a host dead after its robots.txt: its 40 URLs ended ${took} ms after its first failure (bound ${bound} ms)`);
    assert.ok(took <= bound, `${took} ms from the first failure to the last URL's end, bound ${bound} ms`);
    assert.ok(took >= bound - 0.4 * 36_000 - 7 * 50, `the bound is this crawl's worst case, not a loose one: ${took} vs ${bound} ms`);
    const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at - s.totalTimeoutMs);
    assert.ok(gaps.slice(-2).every((g) => g >= s.pauseMs), `the pauses are kept: ${gaps.join(', ')}`);
    assert.ok((await slotOf(ctx)).given_up_at > 0);
  });

  test('failing URLs beside working ones: every working URL is fetched, also behind a pause; every failing one ends with its reason', async () => {
    const bad = ['/hang/1', '/hang/2', '/reset/1', '/hang/3', '/reset/2', '/hang/4'];
    const good = Array.from({ length: 8 }, (_, i) => `/page/${i}`);
    const { ctx, requests } = crawlOf((path, c) => {
      if (path.startsWith('/hang/')) {
        c.clock.advance(c.settings.totalTimeoutMs);
        throw new HttpFetchError('timeout', `fetching ${path}: total timeout after ${c.settings.totalTimeoutMs} ms`);
      }
      c.clock.advance(50);
      if (path.startsWith('/reset/')) throw new HttpFetchError('reset', `fetching ${path}: other side closed (ECONNRESET)`);
      return htmlResponse(`<title>${path}</title>`);
    });
    // the failing URLs first, so the host is paused while working URLs wait in its queue
    const paths = [...bad, ...good];
    await run(ctx, paths);

    assertEveryUrlEndsOnce(ctx, paths);
    assert.deepEqual(fetchedUrls(ctx).sort(), good.map((p) => `https://${HOST}${p}`).sort(), 'the working URLs are fetched, not dropped with the failing ones');
    const rows = terminal(ctx);
    for (const p of bad) {
      const row = rows.find((o) => o.url === `https://${HOST}${p}`)!;
      assert.equal(row.outcome, 'network_error');
      assert.match(row.reason, p.startsWith('/hang/') ? /^timeout: fetching .*: total timeout/ : /^reset: fetching .*ECONNRESET/, row.reason);
      const tries = requests.filter((r) => r.path === p).length;
      assert.ok(tries >= 1 && tries <= ctx.settings.maxRetries + 1, `${p} tried ${tries} times`);
    }
    const pauses = requests.slice(1).filter((r, i) => r.at - requests[i]!.at >= ctx.settings.pauseMs).length;
    assert.ok(pauses <= PAUSES_BEFORE_GIVING_UP, `${pauses} pauses waited out`);
  });

  test('a host that answers 429 with Retry-After five times in a row: paused, then its URLs are retried and fetched', async () => {
    const throttledOnce = new Set<string>();
    const { ctx, requests } = crawlOf((path, c) => {
      c.clock.advance(20);
      if (throttledOnce.has(path)) return htmlResponse('<p>ok</p>');
      throttledOnce.add(path);
      return httpResponse(429, { headers: { 'retry-after': '2' } });
    });
    const paths = ['/p1', '/p2', '/p3', '/p4', '/p5'];
    await run(ctx, paths);
    assert.deepEqual(fetchedUrls(ctx).sort(), paths.map((p) => `https://${HOST}${p}`), 'rate-limited, not failing: nothing is lost');
    assert.deepEqual(terminal(ctx), []);
    const paused = requests.slice(1).findIndex((r, i) => r.at - requests[i]!.at >= ctx.settings.pauseMs);
    assert.equal(paused, 4, 'the fifth 429 in a row paused the host, as before');
  });

  test('crawl status says what a paused host waits for (its probe), and until when', async () => {
    const { ctx } = crawlOf((path, c) => {
      c.clock.advance(1000);
      throw new HttpFetchError('connect', `fetching ${path}: connect ECONNREFUSED`);
    });
    const paused = async () => ((await ctx.kv.hosts.get(HOST)) ? (await slotOf(ctx)).paused_until > ctx.clock.now() : false);
    await run(ctx, Array.from({ length: 8 }, (_, i) => `/p${i}`), paused);
    const [wait, ...others] = await listHostWaits(hostWaitSources(ctx.kv, ctx.streams, ctx.settings), ctx.clock.now());
    assert.deepEqual(others, []);
    assert.equal(wait!.reason, 'paused');
    assert.equal(wait!.until, (await slotOf(ctx)).paused_until);
    assert.match(wait!.detail, /^connect: 5 failures in a row, host paused 600000 ms, then one probe \(pause 1 of 2: URLs that failed are not retried\)$/);
  });

  test('a failed probe uses up the retries of the URL it carried, and a URL not tried yet takes the next probe', async () => {
    // refused P + 1 times (P failures, then the first probe), then answering: the second probe gets through
    const { ctx, requests } = crawlOf((path, c) => {
      c.clock.advance(100);
      if (requests.length <= c.settings.pauseAfterFailures + 1) throw new HttpFetchError('connect', `fetching ${path}: connect ECONNREFUSED`);
      return htmlResponse('<p>back</p>');
    });
    const paths = Array.from({ length: 10 }, (_, i) => `/p${i}`);
    await run(ctx, paths);

    assertEveryUrlEndsOnce(ctx, paths);
    const probe1 = requests[ctx.settings.pauseAfterFailures]!;
    assert.equal(requests.filter((r) => r.path === probe1.path).length, 1, 'the first probe failed: its URL is not tried again');
    const row = terminal(ctx).find((o) => o.url.endsWith(probe1.path))!;
    assert.match(row.reason, /^connect: .*ECONNREFUSED; not retried: connect: 6 failures in a row, host paused \d+ ms, then one probe \(pause 2 of 2/);
    const pausing = requests[ctx.settings.pauseAfterFailures - 1]!;
    assert.match(terminal(ctx).find((o) => o.url.endsWith(pausing.path))!.reason, /; not retried: connect: 5 failures in a row, host paused \d+ ms, then one probe \(pause 1 of 2/);
    // the URLs that failed before the first pause waited behind URLs not tried yet, and came up
    // after the host answered again: retried then, and fetched
    const ended = new Set(terminal(ctx).map((o) => o.url));
    assert.deepEqual([...ended].sort(), [pausing.path, probe1.path].map((p) => `https://${HOST}${p}`).sort(), 'only the URLs whose failure paused the host end unfetched');
    assert.equal(fetchedUrls(ctx).length, 8);
    assert.equal((await slotOf(ctx)).given_up_at, 0);
  });
});
