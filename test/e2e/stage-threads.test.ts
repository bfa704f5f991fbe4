/**
 * `crawl run --stage-threads 2`: the stages that handle fetched pages run on a second thread
 * of the process. What a user checks: the crawl stores the same pages as with one thread,
 * each once with its capture; one `/metrics` scrape shows both threads' counters (fetch on
 * the main thread, persist on the other); and it ends cleanly with --until-idle.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../ops/nats/embedded-server.js';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { startCli } from '../support/crawl-cli.js';
import { crawlArgs, E2E, expectedUrls, FAST_PACING, queryOutput, storedPages } from '../support/e2e-web.js';

/** `name{labels} value` lines of a Prometheus text page, summed by metric name. */
function sums(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m) out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return out;
}

describe('crawl run --stage-threads 2', () => {
  let web: TestWeb;
  let dir: string;
  before(async () => {
    web = await startTestWeb({ hosts: E2E.smallHosts, pagesPerHost: E2E.pagesPerHost, seed: E2E.seed });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-stage-threads-'));
  });
  after(async () => {
    await web?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stores every reachable page once with its capture, and serves both threads\' metrics in one scrape', async () => {
    const out = path.join(dir, 'out');
    const port = await freePort();
    const run = startCli(['run', ...crawlArgs(web, out), ...FAST_PACING, '--stage-threads', '2', '--until-idle', '--metrics-port', String(port)]);
    let exited = false;
    const done = run.done.finally(() => (exited = true));
    // scraped until one page shows a page fetched (main thread) and a page row persisted (the other)
    let both: Map<string, number> | null = null;
    while (!exited && !both) {
      const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
      const s = sums(text);
      if ((s.get('crawler_fetch_responses_total') ?? 0) > 0 && (s.get('crawler_persist_rows_total') ?? 0) > 0) both = s;
      else await sleep(100);
    }
    const result = await done;
    assert.equal(result.code, 0, result.stderr.slice(-2000));
    assert.ok(both, 'a scrape during the crawl showed fetch (main thread) and persist (stage thread) counters');
    assert.ok(both.get('crawler_stage_messages_total')! > 0);

    const stored = await storedPages(out);
    assert.deepEqual(stored.urls, expectedUrls(web));
    assert.deepEqual(stored.storedTwice, [], 'pages stored more than once');
    const [[captured]] = (await queryOutput(out, "SELECT count(DISTINCT c.url) FROM captures c JOIN pages p ON p.url = c.url")) as [[bigint]];
    assert.equal(Number(captured), stored.rows, 'every stored page has its WARC capture');
  });
});
