import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestWeb } from '../../testweb/index.js';
import { assertPolite } from '../support/politeness-audit.js';
import { runCli } from '../support/crawl-cli.js';
import { startWorkers, useWorkerCrawl, waitUntilIdle } from '../support/worker-crawl.js';
import { E2E, crawlArgs, expectedUrls, storedPages } from '../support/e2e-web.js';

describe('end to end: every stage in its own process (two fetch and two seen-filter workers) against one server', () => {
  const crawl = useWorkerCrawl(() => startTestWeb({ hosts: E2E.smallHosts, pagesPerHost: E2E.pagesPerHost, seed: E2E.seed }), 'crawl-workers-');

  it('stays polite and stores the same set of pages as one process does', async () => {
    const { web, out, nats, env, workers } = crawl;
    const settingsArgs = crawlArgs(web, out).filter((a, i, all) => a !== '--seed' && all[i - 1] !== '--seed');
    const applied = await runCli(['topology', 'apply', ...settingsArgs.filter((a, i, all) => a !== '--out' && all[i - 1] !== '--out')], env);
    assert.equal(applied.code, 0, applied.stderr);

    workers.push(...startWorkers(['normalize', 'seen-filter', 'seen-filter', 'politeness-gate', 'fetch', 'fetch', 'extract', 'simhash', 'persist', 'archive'], out, env));
    const seeded = await runCli(['seed', ...web.model.siteHostNames.map((h) => `http://${h}/`)], env);
    assert.equal(seeded.code, 0, seeded.stderr);

    assert.ok(await waitUntilIdle(nats.url, { timeoutMs: 1_200_000, started: () => web.requestLog().length > 0 }), 'the crawl did not become idle');
    for (const w of workers) w.child.kill('SIGTERM');
    const exits = await Promise.all(workers.map((w) => w.done));
    for (const e of exits) assert.equal(e.code, 0, `a worker did not shut down cleanly: ${e.stderr}`);
    workers.length = 0;

    const stored = await storedPages(out);
    assert.deepEqual(stored.urls, expectedUrls(web));
    assert.deepEqual(stored.storedTwice, [], 'pages stored more than once');

    assertPolite(web.requestLog(), web.model, E2E.token, E2E.minDelayMs);
  });
});
