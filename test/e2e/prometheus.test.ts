/**
 * Metrics as an operator meets them: a real Prometheus scrapes a running `crawl run`, and
 * PromQL through its HTTP API answers the crawl's page rate and a consumer's lag. The same
 * scrape holds every metric the shipped Grafana dashboard and alert rules query, and no
 * label in it names a URL or a host.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseYaml } from 'yaml';
import { freePort } from '../../ops/nats/embedded-server.js';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { killOrphanServer, startCli, type CliRun } from '../support/crawl-cli.js';
import { crawlArgs, E2E } from '../support/e2e-web.js';
import { metricNamesIn, metricNamesOf, startTestPrometheus, type TestPrometheus } from '../support/prometheus.js';

const OPS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../ops');

/** Every PromQL expression of the dashboard's panels and of the alert rules. */
function shippedQueries(): string[] {
  const dashboard = JSON.parse(readFileSync(path.join(OPS, 'grafana/crawler-dashboard.json'), 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
  const alerts = parseYaml(readFileSync(path.join(OPS, 'prometheus/alerts.yml'), 'utf8')) as { groups: Array<{ rules: Array<{ expr: string }> }> };
  return [...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)), ...alerts.groups.flatMap((g) => g.rules.map((r) => r.expr))];
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

describe('metrics: Prometheus scrapes a running crawl', () => {
  let web: TestWeb;
  let dir: string;
  let crawl: CliRun | undefined;
  let prometheus: TestPrometheus | undefined;
  before(async () => {
    web = await startTestWeb({ hosts: E2E.smallHosts, pagesPerHost: E2E.pagesPerHost, seed: E2E.seed });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-prometheus-'));
  });
  after(async () => {
    if (crawl) {
      crawl.child.kill('SIGKILL');
      await crawl.done;
      killOrphanServer(path.join(dir, 'out'));
    }
    await prometheus?.stop();
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the page rate and a consumer lag through PromQL, for every metric the dashboard uses', async () => {
    const port = await freePort();
    const metrics = `http://127.0.0.1:${port}`;
    crawl = startCli(['run', ...crawlArgs(web, path.join(dir, 'out')), '--metrics-port', String(port)]);
    await until('/readyz', 60_000, async () => ((await fetch(`${metrics}/readyz`)).status === 200 ? true : undefined));
    assert.equal((await fetch(`${metrics}/healthz`)).status, 200);

    prometheus = await startTestPrometheus(dir, [`127.0.0.1:${port}`]);
    const rate = await until('a page rate above 0', 120_000, async () => {
      const r = await prometheus!.query('sum(rate(crawler_fetch_responses_total[5s]))');
      return r.length === 1 && r[0]!.value > 0 ? r[0]!.value : undefined;
    });
    assert.ok(rate > 0, `pages per second: ${rate}`);
    const lag = await prometheus.query('crawler_consumer_lag_messages{consumer="fetch", stream="CRAWL_READY"}');
    assert.equal(lag.length, 1, 'one lag series for the fetch consumer');
    assert.ok(Number.isFinite(lag[0]!.value) && lag[0]!.value >= 0, `the fetch consumer's lag: ${lag[0]!.value}`);
    const up = await prometheus.query('up{job="crawler"}');
    assert.deepEqual(up.map((s) => s.value), [1]);

    // what the dashboard and the alerts ask for is in a real scrape
    const scrape = await (await fetch(`${metrics}/metrics`)).text();
    const names = metricNamesOf(scrape);
    const missing = [...new Set(shippedQueries().flatMap(metricNamesIn))].filter((n) => !names.has(n));
    assert.deepEqual(missing, [], 'every metric the dashboard and alerts query is served');

    // and docs/operations.md names every family of ours the scrape has
    const documented = readFileSync(path.join(OPS, '../docs/operations.md'), 'utf8');
    const ours = [...scrape.matchAll(/^# TYPE (crawler_\S+)/gm)].map((m) => m[1]!);
    assert.ok(ours.length > 20, `our metrics are served (${ours.length})`);
    assert.deepEqual(ours.filter((n) => !documented.includes(n)), [], 'every metric is in docs/operations.md');

    // no label carries a URL or a host of the crawl
    const series = scrape.split('\n').filter((l) => l && !l.startsWith('#'));
    const leaks = series.filter((l) => l.includes('://') || web.model.siteHostNames.some((h) => l.includes(h)));
    assert.deepEqual(leaks, [], 'no URL or host in any series');

    crawl.child.kill('SIGTERM');
    const done = await crawl.done;
    assert.equal(done.code, 0, done.stderr.slice(-1000));
    crawl = undefined;
    assert.equal(await fetch(`${metrics}/metrics`).then(() => 'served', () => 'closed'), 'closed', 'the server stops with the crawl');
  });
});
