/**
 * The politeness audit: a real crawl of the local test web's politeness hosts (robots.txt
 * 503 for the whole run, 503 then 200, one that turns stricter after the cache expires,
 * 429 with Retry-After, a slow host, 50 hosts on one IP) plus ordinary site hosts with
 * Disallow rules and Crawl-delays, judged from the server's own request log: what a site
 * operator would see. Run once with every stage in one process, and once with three gate
 * and three fetch processes, one of which is SIGKILLed in the middle of the crawl.
 *
 * Both crawls are of the web over HTTPS, as most of the web is now: HTTP/2 offered first, the
 * sharedip hosts and h01.site.test offering HTTP/1.1 only, the test web's CA trusted through
 * --ca-file (the workers get it from the crawl's stored settings). The server's log also says
 * every request used HTTP/2 where it was offered and HTTP/1.1 where not. (Plain HTTP crawls
 * are audited by the other e2e tests.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { politenessSeedUrls, startTestWeb, ROBOTS_503_HOST, SLOW_HOST, type TestWeb } from '../../testweb/index.js';
import { mustStore, MIN_DELAY_MS, PER_IP, POLITENESS, politenessSettingsArgs as settingsArgs, SITE, TOKEN, withScheme } from '../support/politeness-crawl.js';
import { assertRequestLogPolite } from '../support/politeness-audit.js';
import { runCli } from '../support/crawl-cli.js';
import { startWorkers, useWorkerCrawl, waitUntilIdle } from '../support/worker-crawl.js';
import { storedPages } from '../support/e2e-web.js';

function seeds(web: TestWeb): string[] {
  return [...web.model.siteHostNames.map((h) => `https://${h}/`), ...politenessSeedUrls(POLITENESS).map((u) => withScheme(u, 'https'))];
}

/** The web over TLS as well as plain HTTP: the crawl is seeded with https:// URLs. */
const startWeb = () => startTestWeb({ ...SITE, politeness: POLITENESS, tls: true });

async function auditAndCheckPages(web: TestWeb, out: string): Promise<void> {
  const log = web.requestLog();
  const findings = assertRequestLogPolite(log, { token: TOKEN, minDelayMs: MIN_DELAY_MS, perIpCap: PER_IP });
  // from the server's own log: every request over TLS, in HTTP/2 where the host offers it
  const offered = (host: string) => (web.tls!.http1Only(host) ? 'http/1.1' : 'h2');
  assert.deepEqual(log.filter((r) => !r.tls || r.protocol !== offered(r.host)).map((r) => `${r.host}${r.path} ${r.tls ? 'tls' : 'plain'} ${r.protocol}`), [], 'every request over TLS in the version offered');
  assert.ok(log.some((r) => r.protocol === 'h2') && log.some((r) => r.protocol === 'http/1.1'), 'both versions were spoken');
  assert.ok(findings.counts.requests > 200, `a real crawl happened (${findings.counts.requests} requests)`);
  assert.deepEqual(
    log.filter((r) => r.host === ROBOTS_503_HOST && r.path !== '/robots.txt').map((r) => r.path),
    [],
    'no request but robots.txt to the host whose robots.txt answers 503',
  );
  assert.ok(log.some((r) => r.host === ROBOTS_503_HOST), 'its robots.txt was asked for');
  assert.ok(Math.max(...Object.values(findings.maxInFlightByAddress)) <= PER_IP);
  const stored = new Set((await storedPages(out)).urls);
  const { must, forbidden } = mustStore(web, 'https');
  assert.deepEqual([...must].filter((u) => !stored.has(u)), [], 'every page a polite crawl may fetch is stored');
  assert.deepEqual([...forbidden].filter((u) => stored.has(u)), [], 'no page robots.txt keeps out is stored');
}

describe('politeness audit: one process', () => {
  let web: TestWeb;
  let out: string;
  before(async () => {
    web = await startWeb();
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-audit-'));
  });
  after(async () => {
    await web?.close();
    rmSync(out, { recursive: true, force: true });
  });

  it('crawls everything allowed and nothing else, within every per-host, per-IP and Retry-After limit', async () => {
    const args = ['run', '--out', out, '--until-idle', ...settingsArgs(web)];
    for (const s of seeds(web)) args.push('--seed', s);
    const run = await runCli(args, {}, 240_000);
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    await auditAndCheckPages(web, out);
  });
});

describe('politeness audit: three gates, three fetchers SIGKILLed in the middle of a request and replaced', () => {
  const crawl = useWorkerCrawl(startWeb, 'crawl-audit-workers-');

  it('stays polite and complete', async () => {
    const { web, out, nats, env, workers } = crawl;
    const applied = await runCli(['topology', 'apply', ...settingsArgs(web)], env);
    assert.equal(applied.code, 0, applied.stderr);
    const fetchers = startWorkers(['fetch', 'fetch', 'fetch'], out, env);
    workers.push(...fetchers, ...startWorkers(['normalize', 'seen-filter', 'politeness-gate', 'politeness-gate', 'politeness-gate', 'extract', 'simhash', 'persist', 'archive'], out, env));
    const seeded = await runCli(['seed', ...seeds(web)], env);
    assert.equal(seeded.code, 0, seeded.stderr);

    // SIGKILL every fetcher while a request to the slow host (700 ms) is in flight, so one of
    // them certainly dies mid-request; then start three fresh ones
    let caught = false;
    for (let i = 0; i < 600 && !caught; i++) {
      caught = web.inFlight().some((r) => r.host === SLOW_HOST && r.path !== '/robots.txt');
      if (!caught) await sleep(50);
    }
    assert.ok(caught, 'a request to the slow host was seen in flight');
    for (const f of fetchers) f.child.kill('SIGKILL');
    await Promise.all(fetchers.map((f) => f.done));
    workers.push(...startWorkers(['fetch', 'fetch', 'fetch'], out, env));

    assert.ok(await waitUntilIdle(nats.url, { timeoutMs: 240_000 }), 'the crawl did not become idle');
    const alive = workers.filter((w) => !fetchers.includes(w));
    for (const w of alive) w.child.kill('SIGTERM');
    for (const e of await Promise.all(alive.map((w) => w.done))) assert.equal(e.code, 0, `a worker did not stop cleanly: ${e.stderr.slice(-500)}`);
    workers.length = 0;
    await auditAndCheckPages(web, out);
  });
});
