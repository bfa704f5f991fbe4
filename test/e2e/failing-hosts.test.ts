/**
 * A failing host has a bounded cost, end to end: one `crawl run --until-idle` of failing.test
 * (working pages beside endpoints that hang, drip, reset and time out) and of dead.failing.test
 * (dead after its robots.txt), with the default pause (5 failures in a row, 600 s) and the
 * default retries (3). The timeout and the delays are short, as the documented worst case
 * (failingHostBoundMs, docs/politeness-and-robots.md) allows for any settings, so the crawl is
 * cheap; the pause keeps its default, so it is the rule, not a short pause, that ends the crawl:
 * when failing.test is paused only URLs already tried are left, and they end at once instead of
 * waiting 600 s for a probe each. Judged by SQL over fetch_log and pages, and by the test web's
 * own request log (tries per URL, one request in flight, the delay kept).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEAD_HOST, DEAD_SEED_URL, FAILING_HOST, FAILING_PATHS, FAILING_SEED_URL, failingPagePaths, startTestWeb, type TestWeb } from '../../testweb/index.js';
import { parseSettings } from '../../pipeline/settings.js';
import { failingHostBoundMs, pacingOf } from '../../stages/shared/politeness/host-pacing.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E, queryOutput } from '../support/e2e-web.js';
import { assertPolite } from '../support/politeness-audit.js';

/** short, as the bound allows: a hanging request costs this much, not the default 30 s */
const TIMEOUT_MS = 1500;
const MIN_DELAY_MS = 100;
const BACKOFF_BASE_MS = 200;

/** What each failing endpoint's last reason says (the client's words for it). */
const REASONS: Record<string, RegExp> = {
  '/hang': /^timeout: .*(total|headers) timeout after/,
  '/drip': /^timeout: .*total timeout after|too slow/,
  '/reset': /^reset: .*(ECONNRESET|other side closed)/,
  '/timeout': /^timeout: .*total timeout after/,
};

describe('a failing host ends within its documented worst case (default pause and retries)', () => {
  let web: TestWeb;
  let dir: string;
  before(async () => {
    web = await startTestWeb({ hosts: 1, seed: 1, failing: true });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-failing-'));
  });
  after(async () => {
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends before the pause would; every URL has one outcome with its reason; the working pages are stored', async () => {
    const out = path.join(dir, 'out');
    // (sitemaps off: each seed host's /sitemap.xml would be one more URL of the failing hosts, and
    // the URLs this test reasons about are the pages the hosts link)
    const args = ['run', '--out', out, '--until-idle', '--no-sitemaps', '--user-agent', E2E.userAgent, '--seed', FAILING_SEED_URL, '--seed', DEAD_SEED_URL];
    args.push('--timeout-ms', String(TIMEOUT_MS), '--min-delay-ms', String(MIN_DELAY_MS), '--backoff-base-ms', String(BACKOFF_BASE_MS));
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    const started = Date.now();
    const run = await runCli(args, { NATS_URL: '' }, 240_000);
    const tookMs = Date.now() - started;
    assert.equal(run.code, 0, run.stderr.slice(-2000));

    const s = parseSettings({ crawlId: 'x', totalTimeoutMs: TIMEOUT_MS, minDelayMs: MIN_DELAY_MS, backoffBaseMs: BACKOFF_BASE_MS });
    assert.equal(s.pauseMs, 600_000, 'the default pause');
    const bound = failingHostBoundMs({ ...pacingOf({ settings: s }), totalTimeoutMs: s.totalTimeoutMs }, s.minDelayMs);
    console.log(`crawl of the failing hosts: ${(tookMs / 1000).toFixed(1)} s (process start to exit); documented worst case for these settings ${(bound / 1000).toFixed(1)} s, pause ${s.pauseMs / 1000} s`);
    assert.ok(tookMs < bound, `within the documented worst case: ${tookMs} ms, bound ${bound} ms`);
    assert.ok(tookMs < s.pauseMs, `no pause waited out: ${tookMs} ms`);

    const rows = (await queryOutput(out, `SELECT url, outcome, reason FROM fetch_log WHERE url_host_name IN ('${FAILING_HOST}', '${DEAD_HOST}') AND outcome <> 'retry' ORDER BY url`)).map((r) => ({ url: String(r[0]), outcome: String(r[1]), reason: String(r[2]) }));
    const pages = (await queryOutput(out, `SELECT url FROM pages WHERE url_host_name = '${FAILING_HOST}' ORDER BY url`)).map((r) => String(r[0]));
    const url = (p: string, host = FAILING_HOST) => `http://${host}${p}`;
    const working = ['/', ...failingPagePaths(web.failing!.options)].map((p) => url(p));
    assert.deepEqual(pages, [...working].sort(), 'the working pages of the failing host are stored');
    const ended = rows.map((r) => r.url);
    assert.deepEqual(ended, [...new Set(ended)], `one terminal row per URL: ${JSON.stringify(rows)}`);
    assert.deepEqual(ended.filter((u) => !working.includes(u)), [...FAILING_PATHS.map((f) => url(f.path)), DEAD_SEED_URL].sort(), 'every failing URL ends, with a row');

    for (const f of FAILING_PATHS) {
      const row = rows.find((r) => r.url === url(f.path))!;
      assert.equal(row.outcome, 'network_error', JSON.stringify(row));
      assert.match(row.reason, REASONS[f.path]!, `${f.path}: ${row.reason}`);
    }
    // five failures in a row paused the host; the retries waiting then ended instead of waiting 600 s
    const notRetried = rows.filter((r) => /; not retried: /.test(r.reason));
    assert.ok(notRetried.length >= 1, `the host was paused and its retries ended: ${JSON.stringify(rows.map((r) => r.reason))}`);
    const dead = rows.find((r) => r.url === DEAD_SEED_URL)!;
    assert.equal(dead.outcome, 'network_error');
    assert.match(dead.reason, /^reset: .*(ECONNRESET|other side closed|socket hang up)/, dead.reason);

    // the server's side: no URL asked for more than --max-retries + 1 times; politeness kept
    const log = web.requestLog().filter((r) => r.host === FAILING_HOST || r.host === DEAD_HOST);
    for (const p of [...FAILING_PATHS.map((f) => f.path)]) {
      const tries = log.filter((r) => r.host === FAILING_HOST && r.path === p).length;
      assert.ok(tries >= 1 && tries <= s.maxRetries + 1, `${p} asked for ${tries} times`);
    }
    assert.equal(log.filter((r) => r.host === DEAD_HOST && r.path === '/').length, s.maxRetries + 1, 'the dead host: its one URL tried with its retries, then ended');
    assertPolite(log, web.model, E2E.token, MIN_DELAY_MS);
  });
});
