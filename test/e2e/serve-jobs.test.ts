/**
 * Crawl jobs through `crawl serve`, end to end, with a scaled-down clock (intervals in
 * seconds): a job created over HTTP revisits the fresh hosts (pages that change every few
 * seconds, and pages that never do) adaptively, while a job created over a NATS request
 * crawls a site host and one fresh host it shares with the first. Mid-run the service is
 * killed (SIGKILL) and started again, and an extra fetch worker is killed. Checked from the
 * output and the test web's own request log.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expectedCrawl, startTestWeb, type TestWeb } from '../../testweb/index.js';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { assertUrlsAgreeWithFetchLog } from '../support/urls-checks.js';
import type { JobRecord } from '../../schemas/index.js';
import type { JobStatus } from '../../app/service/job-status.js';
import { startCli, type CliRun, serveApiUrl } from '../support/crawl-cli.js';
import { startTestNats } from '../support/nats-server.js';
import { assertRequestLogPolite } from '../support/politeness-audit.js';
import { E2E } from '../support/e2e-web.js';

const MIN_DELAY_MS = 300;
const RUN_MS = 75_000;
const KILL_SERVE_AT_MS = 25_000;
const KILL_WORKER_AT_MS = 40_000;

describe('crawl serve: jobs over HTTP and NATS, adaptive revisits, a service killed mid-run', () => {
  let web: TestWeb;
  let nats: Awaited<ReturnType<typeof startTestNats>>;
  let dir: string;
  const procs: CliRun[] = [];
  before(async () => {
    web = await startTestWeb({ hosts: 2, pagesPerHost: 8, seed: 9, fresh: { hosts: 2, pagesPerHost: 6, periodsSeconds: [3, 8] } });
    nats = await startTestNats();
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-serve-'));
  });
  after(async () => {
    for (const p of procs) p.child.kill('SIGKILL');
    await web?.close();
    await nats?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs both jobs apart, revisits changing pages more often, keeps every job and revisit, stays polite', async () => {
    const out = path.join(dir, 'out');
    const env = { NATS_URL: nats.url };
    const args = ['serve', '--out', out, '--port', '0', '--min-delay-ms', String(MIN_DELAY_MS), '--revisit-slot-ms', '1000', '--user-agent', E2E.userAgent];
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    let serve = startCli(args, env);
    procs.push(serve);
    let api = await serveApiUrl(serve);
    const started = Date.now();

    // job A over HTTP: the fresh hosts, revisited adaptively
    const jobA = (await (
      await fetch(`${api}/api/v1/jobs`, {
        method: 'POST',
        body: JSON.stringify({ name: 'fresh', seeds: ['http://f0.fresh.test/', 'http://f1.fresh.test/'], max_depth: 2, revisit: { initial: '3s', min: '2s', max: '30s' } }),
      })
    ).json()) as JobRecord;
    assert.match(jobA.id, /^job-/);
    // a bad request names its field
    const bad = await fetch(`${api}/api/v1/jobs`, { method: 'POST', body: JSON.stringify({ seeds: ['http://f0.fresh.test/'], schedule: { kind: 'cron', cron: 'nope' } }) });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { field: string } }).error.field, 'schedule.cron');

    // job B over NATS: a site host and a fresh host the first job also crawls
    const nc = await connectNats(nats.url, 'test-client');
    const reply = await nc.request('crawl.api.jobs.create', JSON.stringify({ seeds: ['http://h00.site.test/', 'http://f1.fresh.test/'], max_depth: 2 }), { timeout: 10_000 });
    const created = JSON.parse(reply.string()) as { status: number; body: JobRecord };
    assert.equal(created.status, 201);
    const jobB = created.body;

    // an extra fetch worker, killed later
    const worker = startCli(['worker', '--stage', 'fetch', '--out', out], env);
    procs.push(worker);

    await sleep(KILL_SERVE_AT_MS - (Date.now() - started));
    serve.child.kill('SIGKILL');
    await serve.done;
    const restartedAt = Date.now();
    serve = startCli(args, env);
    procs.push(serve);
    api = await serveApiUrl(serve);
    await sleep(Math.max(0, KILL_WORKER_AT_MS - (Date.now() - started)));
    worker.child.kill('SIGKILL');
    await sleep(Math.max(0, RUN_MS - (Date.now() - started)));

    // both jobs outlived the killed service
    const jobs = ((await (await fetch(`${api}/api/v1/jobs`)).json()) as { jobs: JobRecord[] }).jobs;
    assert.deepEqual(jobs.map((j) => j.id).sort(), [jobA.id, jobB.id].sort());
    const statusA = (await (await fetch(`${api}/api/v1/jobs/${jobA.id}`)).json()) as JobStatus;
    assert.ok(statusA.due_for_revisit > 0, `job A keeps revisits scheduled: ${JSON.stringify(statusA)}`);
    const statusB = JSON.parse((await nc.request('crawl.api.jobs.get', JSON.stringify({ id: jobB.id }), { timeout: 10_000 })).string()) as { body: JobStatus };
    assert.equal(statusB.body.state, 'done', `job B ran once and is done: ${JSON.stringify(statusB.body)}`);
    await nc.close();
    serve.child.kill('SIGINT');
    await serve.done;

    const db = await openOutputDatabase(out);
    try {
      const q = async (sql: string) => (await db.run(sql)).rows;
      // outputs apart: each job's rows carry its id as crawl id, and only its own hosts
      const hostsOf = async (id: string) => (await q(`SELECT DISTINCT url_host_name FROM raw_pages WHERE crawl_id = '${id}' ORDER BY 1`)).map((r) => String(r[0]));
      // (a job's scope is its seeds' registered domains: job B may follow links to other site.test hosts)
      assert.deepEqual(await hostsOf(jobA.id), ['f0.fresh.test', 'f1.fresh.test']);
      const hostsB = await hostsOf(jobB.id);
      assert.ok(hostsB.includes('f1.fresh.test') && hostsB.includes('h00.site.test'), `job B: ${hostsB}`);
      assert.ok(hostsB.every((h) => /\.(site|fresh)\.test$/.test(h)), `job B stays in its scope: ${hostsB}`);
      const expectedB = expectedCrawl(web.model, { userAgentToken: E2E.token, maxDepth: 2, seeds: ['http://h00.site.test/'], redirectHopCost: 0 });
      const storedB = new Set((await q(`SELECT url FROM raw_pages WHERE crawl_id = '${jobB.id}'`)).map((r) => String(r[0])));
      assert.deepEqual([...expectedB.pages.keys()].filter((u) => !storedB.has(u)), [], 'job B crawled its site host completely');

      // revisits: changing pages fetched more often than pages that never change; unchanged ones answer 304
      const fetches = new Map((await q(`SELECT url, count(*) FROM raw_fetch_log WHERE crawl_id = '${jobA.id}' AND outcome IN ('fetched', 'not_modified') GROUP BY 1`)).map((r) => [String(r[0]), Number(r[1])]));
      const pages = web.fresh!.pageUrls();
      const changing = pages.filter((u) => web.fresh!.changePeriodMs(u) === 3000);
      const never = pages.filter((u) => web.fresh!.changePeriodMs(u) === null);
      const mean = (urls: string[]) => urls.reduce((n, u) => n + (fetches.get(u) ?? 0), 0) / urls.length;
      assert.ok(changing.length > 0 && never.length > 0);
      console.log(`fetches per page: every 3 s ${mean(changing).toFixed(1)}, never ${mean(never).toFixed(1)}`);
      assert.ok(mean(changing) > mean(never) * 1.3, `changing pages are fetched more often: ${mean(changing)} vs ${mean(never)}`);
      const notModified = await q(`SELECT url, reason FROM raw_fetch_log WHERE crawl_id = '${jobA.id}' AND outcome = 'not_modified'`);
      assert.ok(notModified.some((r) => never.includes(String(r[0]))), 'a page that never changes answers 304 when revisited');
      assert.ok(notModified.every((r) => /^not modified since the fetch of /.test(String(r[1]))), 'every 304 row says why');
      const refetched = await q(`SELECT url, reason FROM raw_fetch_log WHERE crawl_id = '${jobA.id}' AND outcome = 'fetched' AND reason LIKE '%revisit: %'`);
      assert.ok(refetched.some((r) => changing.includes(String(r[0])) && /; revisit: changed since the fetch of .*; next in /.test(String(r[1]))), 'a changed page stored again says so');
      // no due revisit lost with the service: every page of job A was fetched again after the restart
      const after = new Set((await q(`SELECT DISTINCT url FROM raw_fetch_log WHERE crawl_id = '${jobA.id}' AND outcome IN ('fetched', 'not_modified') AND fetch_time > make_timestamp(${(restartedAt + 5000) * 1000})`)).map((r) => String(r[0])));
      const missed = pages.filter((u) => !after.has(u));
      if (missed.length > 0) {
        // what those pages went through, for the reader of a failed run
        const list = missed.map((u) => `'${u}'`).join(', ');
        const rows = await q(`SELECT url, outcome, epoch_ms(fetch_time) - ${restartedAt}, reason FROM raw_fetch_log WHERE crawl_id = '${jobA.id}' AND url IN (${list}) ORDER BY fetch_time`);
        console.log(`restart at ${new Date(restartedAt).toISOString()}; rows of the pages not revisited after it (ms after the restart):`);
        for (const r of rows) console.log(`  ${r.join('  ')}`);
      }
      assert.deepEqual(missed, [], 'every page of job A revisited after the restart');

      // the urls view: every page of job A is due again after its last fetch, and pages that
      // change every 3 s are estimated to change more often than pages that never change
      const state = new Map((await q(`SELECT url, epoch_ms(next_due_at), epoch_ms(last_fetched), change_rate FROM urls WHERE crawl_id = '${jobA.id}'`)).map((r) => [String(r[0]), r.slice(1)]));
      for (const u of pages) {
        const [due, fetched] = state.get(u) ?? [];
        assert.ok(due !== null && due !== undefined && Number(due) > Number(fetched), `${u} is scheduled after its last fetch: ${JSON.stringify(state.get(u))}`);
      }
      const rate = (urls: string[]) => urls.map((u) => state.get(u)?.[2]).filter((x) => x !== null && x !== undefined).map(Number);
      const meanRate = (xs: number[]) => xs.reduce((n, x) => n + x, 0) / xs.length;
      const [rateChanging, rateNever] = [rate(changing), rate(never)];
      console.log(`change_rate (per day): every 3 s ${meanRate(rateChanging).toFixed(0)} over ${rateChanging.length} pages, never ${meanRate(rateNever).toFixed(0)} over ${rateNever.length}`);
      assert.ok(rateChanging.length > 0 && rateNever.length > 0, 'revisits that compared two copies have a change estimate');
      assert.ok(meanRate(rateChanging) > meanRate(rateNever), 'pages that change have the higher estimate');
    } finally {
      await db.close();
    }
    // the per-URL view tells the same story as the log, after the service was killed and started again
    const urlCount = await assertUrlsAgreeWithFetchLog(out);
    console.log(`urls: ${urlCount} URLs agree with fetch_log`);

    // politeness, from the server's side, for both jobs at once (one request in flight per host, the delay)
    assertRequestLogPolite(web.requestLog(), { token: E2E.token, minDelayMs: MIN_DELAY_MS, perIpCap: 4 });
  });
});
