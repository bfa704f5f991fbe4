/**
 * A crawl job's pages rendered, end to end: `crawl serve --render` against a NATS server of
 * the test's, a once job over HTTP seeded with the test web's app.render.test (whose pages
 * are empty shells until their script builds them). The job's rows must come out as the
 * job's (crawl id = job id) and rendered: the page went through the render stage with its
 * job fields, and so did the captures of its DOM and of the requests the page made.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { APP_HOST, APP_PAGES, appTextMarker, startTestWeb, type TestWeb } from '../../testweb/index.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import type { JobRecord } from '../../schemas/index.js';
import type { JobStatus } from '../../app/service/job-status.js';
import { startCli, type CliRun, serveApiUrl } from '../support/crawl-cli.js';
import { startTestNats } from '../support/nats-server.js';
import { E2E } from '../support/e2e-web.js';

/** a once job is done some 20 s after its host queues empty; the crawl itself takes seconds */
const DONE_WITHIN_MS = 120_000;

describe('crawl serve: a job whose pages are rendered', () => {
  let web: TestWeb;
  let nats: Awaited<ReturnType<typeof startTestNats>>;
  let dir: string;
  let serve: CliRun | undefined;
  before(async () => {
    web = await startTestWeb({ hosts: 1, render: true });
    nats = await startTestNats();
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-render-job-'));
  });
  after(async () => {
    serve?.child.kill('SIGKILL');
    await web?.close();
    await nats?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("stores the job's pages rendered, under the job's crawl id, with their DOM and requests archived as the job's", async () => {
    const out = path.join(dir, 'out');
    const args = ['serve', '--out', out, '--port', '0', '--min-delay-ms', String(E2E.minDelayMs), '--user-agent', E2E.userAgent, '--render', `http://${APP_HOST}/*`];
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    serve = startCli(args, { NATS_URL: nats.url });
    const api = await serveApiUrl(serve);
    const job = (await (await fetch(`${api}/api/v1/jobs`, { method: 'POST', body: JSON.stringify({ name: 'app', seeds: [`http://${APP_HOST}/`], max_depth: 3 }) })).json()) as JobRecord;
    assert.match(job.id, /^job-/);
    const started = Date.now();
    let status: JobStatus | null = null;
    while (Date.now() - started < DONE_WITHIN_MS) {
      status = (await (await fetch(`${api}/api/v1/jobs/${job.id}`)).json()) as JobStatus;
      if (status.state === 'done') break;
      await sleep(1000);
    }
    assert.equal(status?.state, 'done', `the job ran once and is done: ${JSON.stringify(status)}`);
    serve.child.kill('SIGINT');
    const ended = await serve.done;
    assert.equal(ended.code, 0, ended.stderr.slice(-2000));

    const db = await openOutputDatabase(out);
    try {
      const q = async (sql: string) => (await db.run(sql)).rows;
      const pages = await q(`SELECT url, rendered, text_full FROM raw_pages WHERE crawl_id = '${job.id}' ORDER BY url`);
      assert.deepEqual(
        pages.map((r) => r[0]),
        Object.keys(APP_PAGES).map((p) => `http://${APP_HOST}${p}`).sort(),
        'every page of the app, the ones linked only from rendered pages too, under the job',
      );
      for (const [url, rendered, text] of pages) {
        assert.equal(rendered, true, `${url} rendered`);
        assert.match(String(text), new RegExp(appTextMarker(new URL(String(url)).pathname)));
      }
      assert.deepEqual(await q(`SELECT count(*) FROM raw_pages WHERE crawl_id <> '${job.id}'`), [[0]], 'no page under another crawl id');
      const captures = await q(`SELECT subset, count(DISTINCT url) FROM raw_captures WHERE crawl_id = '${job.id}' AND subset = 'rendered' GROUP BY 1`);
      assert.deepEqual(captures, [['rendered', Object.keys(APP_PAGES).length]], "each page's DOM archived under the job");
      const script = await q(`SELECT DISTINCT crawl_id FROM raw_captures WHERE url = 'http://${APP_HOST}/static/app.js'`);
      assert.deepEqual(script, [[job.id]], "the page's script archived under the job");
    } finally {
      await db.close();
    }
  });
});
