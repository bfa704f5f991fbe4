import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { runCli, startCli, type CliRun } from '../support/crawl-cli.js';
import { E2E, FAST_PACING, queryOutput } from '../support/e2e-web.js';
import { startTestNats } from '../support/nats-server.js';
import { freePort } from '../../ops/nats/embedded-server.js';
import { installedPackage } from '../support/user-package.js';

const count = async (out: string, sql: string) => Number((await queryOutput(out, sql))[0]![0]);

describe('stage modules: a user package, run in-process and as a worker, replayed, and its bugs contained', () => {
  let web: TestWeb;
  let pkg: string;
  let out: string;
  let nats: Awaited<ReturnType<typeof startTestNats>>;
  let worker: CliRun | undefined;
  const mod = (name: string) => path.join(pkg, name);

  before(async () => {
    web = await startTestWeb({ hosts: 2, pagesPerHost: 12, seed: E2E.seed });
    // a user's stages as a package of their own, importing the crawler by name
    pkg = installedPackage('test/fixtures/stage-package');
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-stage-modules-'));
    nats = await startTestNats();
  });
  after(async () => {
    worker?.child.kill('SIGKILL');
    await nats.cleanup();
    await web.close();
    rmSync(pkg, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  it('refuses a missing module, one without a stage and a bad definition with exit 2, before crawling', async () => {
    const cases: Array<[string, RegExp]> = [
      ['missing.js', /stage module .*missing\.js: not found/],
      ['no-stage.js', /stage module .*no-stage\.js: exports no stage \(its exports: answer, handle\)/],
      ['bad-definition.js', /stage module .*bad-definition\.js: failed to load: stage name must be lower-case/],
    ];
    for (const [file, message] of cases) {
      const run = await runCli(['run', '--out', path.join(out, 'refused'), '--seed', 'http://www.site0.test/', '--stage-module', mod(file)], {}, 30_000);
      assert.equal(run.code, 2, `${file}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(run.stderr.trim().split('\n').length, 1, `one line for ${file}: ${run.stderr}`);
    }
    assert.equal(web.requestLog().length, 0, 'nothing was fetched');
  });

  it('runs the stages in the crawl; a throwing, hanging or confused stage dead-letters its messages and the crawl completes', async () => {
    const env = { NATS_URL: nats.url };
    const args = ['run', '--out', out, '--until-idle', '--no-compact', '--crawl-id', 'modules', ...FAST_PACING, '--max-depth', '3', '--user-agent', E2E.userAgent];
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    for (const host of web.model.siteHostNames) args.push('--seed', `http://${host}/`);
    for (const m of ['titles-buggy.js', 'throws.js', 'hangs.js', 'not-an-outcome.js']) args.push('--stage-module', mod(m));
    const run = await runCli(args, env, 120_000);
    assert.equal(run.code, 0, run.stderr.slice(-2000));

    const pages = await count(out, 'SELECT count(*) FROM pages');
    assert.ok(pages > 10, `the built-in stages stored the crawl (${pages} pages)`);
    // the buggy stage's rows: one per page, each title lower-cased
    assert.equal(await count(out, 'SELECT count(*) FROM page_titles'), pages);
    assert.equal(await count(out, 'SELECT count(*) FROM page_titles t JOIN pages p ON t.source_url = p.url WHERE t.title = lower(p.title)'), pages);

    const letters = JSON.parse((await runCli(['dead-letters', '--format', 'json', '--limit', '1000'], env)).stdout) as Array<{ stage: string; reason: string; subject: string }>;
    const of = (stage: string) => letters.filter((l) => l.stage === stage);
    const docs = await count(out, "SELECT count(*) FROM pages WHERE url LIKE '%/docs/%'");
    assert.ok(docs > 0);
    assert.equal(of('thrower').length, docs, 'every /docs/ page of the throwing stage is dead-lettered');
    assert.match(of('thrower')[0]!.reason, /^stage module .*throws\.js: the handler threw: cannot handle http:\/\//);
    assert.equal(await count(out, 'SELECT count(*) FROM thrower_rows'), pages - docs, 'its other pages have rows');
    assert.equal(of('hanger').length, web.model.siteHostNames.length, 'each seed page hung and was given up on');
    assert.match(of('hanger')[0]!.reason, /hangs\.js: the handler did not finish within the stage's ack wait \(1000 ms\)/);
    assert.equal(of('confused').length, pages);
    assert.match(of('confused')[0]!.reason, /not-an-outcome\.js: the handler returned \{"ok":true\}, not an outcome/);
    assert.deepEqual([...new Set(letters.map((l) => l.stage))].sort(), ['confused', 'hanger', 'thrower'], 'no built-in stage dead-lettered anything');
  });

  it('runs a stage as a worker of its own, on its own consumer of the retained stream', async () => {
    const pages = await count(out, 'SELECT count(*) FROM pages');
    const metricsPort = await freePort();
    worker = startCli(['worker', '--out', out, '--stage-module', mod('page-sizes.js'), '--metrics-port', String(metricsPort)], { NATS_URL: nats.url });
    let exited = false;
    void worker.done.then(() => (exited = true));
    const deadline = Date.now() + 20_000;
    let rows = 0;
    while (Date.now() < deadline && !exited) {
      rows = await count(out, 'SELECT count(*) FROM page_sizes').catch(() => 0);
      if (rows >= pages) break;
      await sleep(300);
    }
    // the runner's metrics, under the stage's name: its rows written, every message handled
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text(), () => '');
    worker.child.kill('SIGTERM');
    const exit = await worker.done;
    assert.match(metrics, new RegExp(`crawler_stage_messages_total\\{stage="page-sizes",outcome="emitted"\\} ${pages}\\b`));
    assert.match(metrics, new RegExp(`crawler_page_sizes_rows_total\\{outcome="written"\\} ${pages}\\b`));
    worker = undefined;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(rows, pages, 'one row per page the crawl stored');
    assert.equal(await count(out, 'SELECT count(*) FROM page_sizes s JOIN pages p ON s.source_url = p.url AND s.bytes = p.content_length AND s.status = p.fetch_status'), pages);
  });

  it('replays the fixed stage into a new version of its table, fetching nothing', async () => {
    const requests = web.requestLog().length;
    const pages = await count(out, 'SELECT count(*) FROM pages');
    const replay = await runCli(['replay', '--out', out, '--stage-module', mod('titles.js'), '--since', '1h'], { NATS_URL: nats.url }, 60_000);
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, new RegExp(`replay of titles: \\d+ messages .*, ${pages} rows into page_titles, 0 failed .*-> version 1 in`));
    assert.equal(web.requestLog().length, requests, 'no request reached the test web');
    assert.equal(await count(out, 'SELECT count(*) FROM page_titles WHERE version = 1'), pages);
    assert.equal(await count(out, 'SELECT count(*) FROM page_titles t JOIN pages p ON t.source_url = p.url WHERE t.title = p.title'), pages, 'the view shows the fixed rows');
    assert.equal(await count(out, 'SELECT count(*) FROM page_titles_all'), 2 * pages, 'both versions are kept');
    const sql = await runCli(['sql', '--out', out, '--format', 'csv', 'SELECT max(version) FROM page_titles'], {});
    assert.equal(sql.stdout.trim().split('\n').at(-1), '1', sql.stderr);
  });
});
