/**
 * The render stage under least privilege: a crawl of the test web's app.render.test and
 * escape.render.test (whose requests go to another origin, so the render stage fetches and
 * stores a robots.txt of its own) with `--render`, one worker per stage, each connected as its role's user of
 * ops/nats/permissions.ts, on a nats-server configured with those users. Every page of the
 * app must come out rendered, and the server must log no permission violation: the render
 * role's list (its consumer, crawl.fetched.rendered and crawl.exchanges, the hosts and robots
 * buckets) and extract's crawl.render are enough for what the stages do.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { APP_HOST, APP_PAGES, appTextMarker, ESCAPE_HOST, startTestWeb, type TestWeb } from '../../testweb/index.js';
import { accountsConfig, STAGE_ROLES } from '../../ops/nats/permissions.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { runCli, startCli, type CliRun } from '../support/crawl-cli.js';
import { E2E } from '../support/e2e-web.js';
import { waitUntilIdle } from '../support/worker-crawl.js';
import { roleEnv, startConfiguredNats, type ConfiguredNats } from '../support/secure-nats.js';

const password = (role: string) => `pw-${role}-3d92a0`;

describe('least privilege: the render stage under its role', () => {
  let web: TestWeb;
  let dir: string;
  let nats: ConfiguredNats;
  const workers: CliRun[] = [];
  const as = (role: string): NodeJS.ProcessEnv => roleEnv(nats.url, role, password(role));
  before(async () => {
    web = await startTestWeb({ hosts: 1, render: true });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-render-roles-'));
    const accounts = accountsConfig((role) => `password: ${JSON.stringify(password(role))}`);
    nats = await startConfiguredNats(path.join(dir, 'nats'), ['max_payload: 8388608', accounts], { jetstream: true });
  });
  after(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await web?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a rendering crawl by one worker per role: every app page rendered, no permission violation', async () => {
    const out = path.join(dir, 'out');
    const args = ['topology', 'apply', '--partitions', '2', '--min-delay-ms', String(E2E.minDelayMs), '--user-agent', E2E.userAgent, '--render', 'http://*.render.test/*'];
    for (const r of web.resolveRules) args.push('--resolve', r);
    const applied = await runCli(args, as('operator'), 60_000);
    assert.equal(applied.code, 0, applied.stderr);
    for (const stage of Object.keys(STAGE_ROLES)) workers.push(startCli(['worker', '--stage', stage, '--out', out], as(stage)));
    // seeded as the operator: the seeder role is not what this test is about (main's least-privilege test covers it)
    const seeded = await runCli(['seed', `http://${APP_HOST}/`, `http://${ESCAPE_HOST}/`], as('operator'), 60_000);
    assert.equal(seeded.code, 0, seeded.stderr);
    const idle = await waitUntilIdle(nats.url.replace('nats://', `nats://operator:${password('operator')}@`), { timeoutMs: 120_000 });
    assert.ok(idle, `the crawl finished; the workers said: ${workers.map((w) => w.stderrSoFar().slice(-400)).join('\n')}`);
    for (const w of workers) w.child.kill('SIGTERM');
    const ended = await Promise.all(workers.map((w) => w.done));
    const violations = nats.log().split('\n').filter((l) => /Violation/.test(l));
    assert.deepEqual(violations, [], 'the roles allow everything the stages do');
    assert.ok(!ended.some((e) => /permission denied/.test(e.stderr)), ended.map((e) => e.stderr).join('\n').slice(-3000));

    const db = await openOutputDatabase(out);
    try {
      const pages = (await db.run(`SELECT url, rendered, text_full FROM pages WHERE url_host_name = '${APP_HOST}' ORDER BY url`)).rows;
      assert.deepEqual(pages.map((r) => r[0]), Object.keys(APP_PAGES).map((p) => `http://${APP_HOST}${p}`).sort());
      for (const [url, rendered, text] of pages) {
        assert.equal(rendered, true, `${url} rendered`);
        assert.match(String(text), new RegExp(appTextMarker(new URL(String(url)).pathname)));
      }
      const escape = (await db.run(`SELECT rendered FROM pages WHERE url_host_name = '${ESCAPE_HOST}'`)).rows;
      assert.deepEqual(escape, [[true]]);
    } finally {
      await db.close();
    }
  });
});
