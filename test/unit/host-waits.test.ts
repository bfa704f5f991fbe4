import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { serveHost } from '../../stages/politeness-gate/serve-host.js';
import { formatDuration, formatWaitSummary, hostWaitSources, listHostWaits, summarizeWaits } from '../../stages/politeness-gate/index.js';
import { HttpFetchError, type HttpRequest } from '../../ports/http.js';
import { REFUSED_RECHECK_MS } from '../../stages/shared/politeness/failure-policy.js';
import type { AdmittedUrl } from '../../schemas/index.js';
import { createFakeContext, httpResponse, settleLikeRunner, stageInput, type FakeContext, type Responder } from '../support/fake-context.js';

let seq = 0;
const admitted = (host: string, path: string): AdmittedUrl => ({
  v: 1,
  url: `https://${host}${path}`,
  host,
  domain: host,
  depth: 0,
  source_url: null,
  via: 'seed',
  fetch_id: `fid-${host}${path}`,
  admitted_at: 0,
});
/** robots.txt by host: down.example answers 503, slow.example asks for 10 s between requests, busy.example for nothing */
const robots: Responder = (req: HttpRequest) => {
  const host = new URL(req.url).hostname;
  if (host === 'down.example') return httpResponse(503);
  return httpResponse(200, { body: host === 'slow.example' ? 'User-agent: *\nCrawl-delay: 10\n' : 'User-agent: *\nAllow: /\n' });
};

async function queue(ctx: FakeContext, host: string, ...paths: string[]) {
  for (const p of paths) await settleLikeRunner(ctx, await handleGateIntake(stageInput([admitted(host, p)], { streamSeq: ++seq, subject: 'crawl.frontier.0' }), ctx));
}

describe('why hosts wait', () => {
  test('robots.txt unavailable (with its retry and give-up times), crawl delay, request in flight; idle hosts are not listed', async () => {
    const ctx = createFakeContext({ respond: robots, settings: { minDelayMs: 1000, adaptiveDelayFactor: 0, robotsRetryMs: 10_000, robotsGiveUpMs: 60_000, maxCrawlDelayMs: 60_000 } });
    await queue(ctx, 'down.example', '/a', '/b');
    await queue(ctx, 'slow.example', '/a', '/b');
    await queue(ctx, 'busy.example', '/a');
    for (const host of ['down.example', 'slow.example', 'busy.example']) await serveHost(ctx, host); // each fetches robots.txt
    ctx.clock.advance(5000);
    assert.deepEqual(await serveHost(ctx, 'busy.example'), { kind: 'granted' });
    const start = ctx.clock.now() - 5000;

    const waits = await listHostWaits(hostWaitSources(ctx.kv, ctx.streams, ctx.settings), ctx.clock.now());
    const by = new Map(waits.map((w) => [w.host, w]));
    assert.deepEqual([...by.keys()].sort(), ['busy.example', 'down.example', 'slow.example']);
    const down = by.get('down.example')!;
    assert.equal(down.reason, 'robots.txt unavailable');
    assert.equal(down.givesUpAt, start + 60_000, 'given up on 60 s after the first failure');
    assert.ok(down.until! >= start + 10_000 && down.until! <= down.givesUpAt!, `tried again after the retry interval (${down.until! - start} ms)`);
    assert.match(down.detail, /http 503/);
    assert.equal(by.get('slow.example')!.reason, 'crawl delay');
    assert.ok(by.get('slow.example')!.until! > ctx.clock.now());
    assert.equal(by.get('busy.example')!.reason, 'request in flight');

    const summary = summarizeWaits(waits);
    assert.equal(summary.hosts, 3);
    assert.equal(summary.queued, null, 'URL counts need the server: not counted here');
    assert.deepEqual(summary.byReason, { 'robots.txt unavailable': 1, 'crawl delay': 1, 'request in flight': 1 });
    assert.match(formatWaitSummary(summary, ctx.clock.now()), /^waiting: 3 hosts \(crawl delay: 1, request in flight: 1, robots\.txt unavailable: 1\), next try in \d+s$/);
  });

  test('a host whose every address refused: it gives up at the next try, a few seconds later, not after the give-up time', async () => {
    const refusing: Responder = (req) => {
      throw new HttpFetchError('connect', `fetching ${req.url}: connecting: connect ECONNREFUSED 192.0.2.1:443`, {
        cause: Object.assign(new Error('connect ECONNREFUSED 192.0.2.1:443'), { code: 'ECONNREFUSED' }),
        everyAddressRefused: true,
      });
    };
    const ctx = createFakeContext({ respond: refusing, settings: { minDelayMs: 1000, adaptiveDelayFactor: 0, robotsGiveUpMs: 1_200_000 } });
    await queue(ctx, 'gone.example', '/a');
    const start = ctx.clock.now();
    await serveHost(ctx, 'gone.example');
    const [gone] = await listHostWaits(hostWaitSources(ctx.kv, ctx.streams, ctx.settings), ctx.clock.now());
    assert.equal(gone?.reason, 'robots.txt unavailable');
    assert.equal(gone.givesUpAt, start + REFUSED_RECHECK_MS);
    assert.match(gone.detail, /ECONNREFUSED/);
  });

  test('durations read as a person says them', () => {
    assert.deepEqual([250, 4000, 250_000, 7_500_000, -5].map(formatDuration), ['0s', '4s', '4m10s', '2h05m', '0s']);
    assert.equal(formatWaitSummary({ hosts: 0, queued: 0, byReason: {}, nextTryAt: null }, 0), 'waiting: no hosts');
  });
});
