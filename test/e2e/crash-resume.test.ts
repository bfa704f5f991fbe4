import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { assertPolite } from '../support/politeness-audit.js';
import { killOrphanServer, runCli, startCli } from '../support/crawl-cli.js';
import { E2E, crawlArgs, expectedUrls, storedPages } from '../support/e2e-web.js';
import { assertUrlsAgreeWithFetchLog } from '../support/urls-checks.js';

describe('end to end: crawl run killed with SIGKILL midway, then started again on the same directory', () => {
  let web: TestWeb;
  let out: string;

  before(async () => {
    web = await startTestWeb({ hosts: E2E.smallHosts, pagesPerHost: E2E.pagesPerHost, seed: E2E.seed });
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-crash-'));
  });
  after(async () => {
    killOrphanServer(out);
    await web?.close();
    rmSync(out, { recursive: true, force: true });
  });

  it('finishes with the same set of pages, each exactly once, and stays polite across the kill', async () => {
    const total = expectedUrls(web).length;
    const first = startCli(['run', ...crawlArgs(web, out), '--until-idle']);
    // kill once about a third of the pages have been requested
    for (let i = 0; i < 600 && web.requestLog().filter((r) => r.path !== '/robots.txt').length < total / 3; i++) await sleep(100);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    assert.equal(killed.signal, 'SIGKILL', `the crawl ended before it was killed: ${killed.stderr}`);
    const before = web.requestLog().length;

    // resumed without seeds: everything comes from the JetStream store in the output directory
    const args = crawlArgs(web, out).filter((a, i, all) => a !== '--seed' && all[i - 1] !== '--seed');
    const second = await runCli(['run', ...args, '--until-idle']);
    assert.equal(second.code, 0, `resumed crawl failed: ${second.stderr}`);
    assert.ok(web.requestLog().length > before, 'the resumed crawl fetched the rest');

    const stored = await storedPages(out);
    assert.deepEqual(stored.urls, expectedUrls(web));
    assert.deepEqual(stored.storedTwice, [], 'pages stored more than once');
    // the per-URL view tells the same story as the log it is made from
    const checkStart = Date.now();
    const urlCount = await assertUrlsAgreeWithFetchLog(out);
    console.log(`urls: ${urlCount} URLs agree with fetch_log (checked in ${Date.now() - checkStart} ms)`);
    assert.ok(urlCount >= stored.urls.length);

    assertPolite(web.requestLog(), web.model, E2E.token, E2E.minDelayMs);
  });
});
