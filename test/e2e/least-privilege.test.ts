/**
 * The per-role users of ops/nats/permissions.ts on a real nats-server: a crawl by one worker
 * per stage, each connected as its role's user, completes with no permission violation (so
 * the lists are enough); the seeding user can publish seeds and nothing else; a fetch worker
 * whose user may not publish its pages gets a clear permission error, and once a worker with
 * the right user takes over, every page is there: nothing was lost. The server has a stock
 * max_payload (1 MiB) and the crawl includes big.test's 5 and 6 MiB pages, so the bodies
 * stored beside their messages (CRAWL_BODIES) are written and read under the roles too.
 * A stage module's worker runs under its `custom:<stage>:<input>` role beside them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { BIG_PAGE_HOST, BIG_PAGE_PATHS, expectedCrawl, startTestWeb, type TestWeb } from '../../testweb/index.js';
import { accountsConfig, ROLES, rolePermissions, STAGE_ROLES } from '../../ops/nats/permissions.js';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { runCli, startCli, type CliRun } from '../support/crawl-cli.js';
import { E2E, storedPages } from '../support/e2e-web.js';
import { waitUntilIdle } from '../support/worker-crawl.js';
import { roleEnv, startConfiguredNats, type ConfiguredNats } from '../support/secure-nats.js';
import { installedPackage } from '../support/user-package.js';
import { queryOutput } from '../support/e2e-web.js';
import { customStageInputOf } from '../../topology/index.js';

const password = (role: string) => `pw-${role}-7c41e9`;
/** a fetch user that may do everything fetch does except publish the pages it fetched */
const NARROW_FETCH = 'fetch-narrow';
const MAX_DEPTH = 2;
/** the role of the stage module the crawl runs beside the built-in stages (test/fixtures/stage-package/page-sizes.js) */
const MODULE_ROLE = 'custom:page-sizes:pages';

describe('least privilege: one user per role', () => {
  let web: TestWeb;
  let dir: string;
  let nats: ConfiguredNats;
  let pkg: string;
  const workers: CliRun[] = [];
  const as = (role: string): NodeJS.ProcessEnv => roleEnv(nats.url, role, password(role));
  before(async () => {
    web = await startTestWeb({ hosts: 2, pagesPerHost: 8, seed: E2E.seed, bigPages: true });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-roles-'));
    const accounts = accountsConfig((role) => (role === NARROW_FETCH ? '' : `password: ${JSON.stringify(password(role))}`), [...ROLES, MODULE_ROLE]);
    pkg = installedPackage('test/fixtures/stage-package');
    // the narrow fetch user: fetch's permissions without crawl.fetched.*
    const narrow = rolePermissions('fetch').publish.filter((s) => s !== 'crawl.fetched.*');
    const narrowUser = `      { user: "${NARROW_FETCH}", password: ${JSON.stringify(password(NARROW_FETCH))}, permissions: { publish: { allow: ${JSON.stringify(narrow)} }, subscribe: { allow: ["_INBOX.>"] } } },\n`;
    nats = await startConfiguredNats(path.join(dir, 'nats'), ['max_payload: 1048576', accounts.replace('    users: [\n', `    users: [\n${narrowUser}`)], { jetstream: true });
  });
  after(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await web?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (pkg) rmSync(pkg, { recursive: true, force: true });
  });

  it('the seeder publishes crawl.seeds and nothing else; a stage user cannot seed or manage streams', async () => {
    const seeder = await connectNats(nats.url, 'seeder-test', { user: 'seeder', password: password('seeder') });
    const denied: string[] = [];
    void (async () => {
      for await (const s of seeder.status()) if (s.type === 'error') denied.push(String((s.error as Error).message));
    })();
    seeder.publish('crawl.links.0', new Uint8Array([1]));
    seeder.publish('$JS.API.STREAM.DELETE.CRAWL_DISCOVERED', new Uint8Array());
    await seeder.flush();
    await sleep(300);
    assert.equal(denied.length, 2, denied.join('\n'));
    assert.match(denied.join('\n'), /Permissions Violation for Publish to "crawl\.links\.0"/);
    await seeder.close();

    // topology first (operator), then `crawl seed` as the fetch user: one clear line, exit 2
    const args = ['topology', 'apply', '--partitions', '2', '--max-depth', String(MAX_DEPTH), '--min-delay-ms', '20', '--user-agent', E2E.userAgent];
    for (const r of web.resolveRules) args.push('--resolve', r);
    const applied = await runCli(args, as('operator'), 60_000);
    assert.equal(applied.code, 0, applied.stderr);
    const wrong = await runCli(['seed', 'http://h01.site.test/'], as('fetch'), 60_000);
    assert.equal(wrong.code, 2, wrong.stderr);
    assert.equal(wrong.stderr.trim(), 'crawl: permission denied: this NATS user may not publish to crawl.seeds');
    const asSeeder = await runCli(['topology', 'apply'], as('seeder'), 60_000);
    assert.equal(asSeeder.code, 2, asSeeder.stderr);
    assert.match(asSeeder.stderr.trim(), /^crawl: permission denied: this NATS user may not publish to \$JS\.API\.\S+ \(applying the topology needs the operator role/);
  });

  it('a crawl with every worker under its role: a denied publish is a clear error, retried until a worker may publish it, and no page is lost', async () => {
    const out = path.join(dir, 'out');
    for (const stage of Object.keys(STAGE_ROLES)) {
      if (stage === 'fetch') continue;
      workers.push(startCli(['worker', '--stage', stage, '--out', out], as(stage)));
    }
    // it declares its own consumer on CRAWL_RESULTS, which its role allows for that one durable only
    workers.push(startCli(['worker', '--stage-module', path.join(pkg, 'page-sizes.js'), '--out', out], as(MODULE_ROLE)));
    const narrow = startCli(['worker', '--stage', 'fetch', '--out', out], as(NARROW_FETCH));
    let narrowErr = '';
    narrow.child.stderr!.on('data', (c: Buffer) => (narrowErr += c.toString()));
    workers.push(narrow);
    const seeds = web.model.siteHostNames.map((h) => `http://${h}/`);
    const seeded = await runCli(['seed', ...seeds, `http://${BIG_PAGE_HOST}/`], as('seeder'), 60_000);
    assert.equal(seeded.code, 0, seeded.stderr);

    for (let i = 0; i < 300 && !/permission denied/.test(narrowErr); i++) await sleep(100);
    assert.match(narrowErr, /permission denied: this NATS user may not publish to crawl\.fetched\.\d+: its messages are retried until the user's permissions allow it/);
    // the grants it could not finish are still the consumer's: unacked or waiting, not gone
    const nc = await connectNats(nats.url, 'observer', { user: 'operator', password: password('operator') });
    const info = await (await jetstreamManager(nc)).consumers.info('CRAWL_READY', 'fetch');
    assert.ok(info.num_ack_pending + info.num_pending + info.num_redelivered > 0, JSON.stringify(info));
    await nc.close();

    narrow.child.kill('SIGTERM');
    await narrow.done;
    let fetchErr = '';
    const fetch = startCli(['worker', '--stage', 'fetch', '--out', out], as('fetch'));
    fetch.child.stderr!.on('data', (c: Buffer) => (fetchErr += c.toString()));
    workers.push(fetch);
    const idle = await waitUntilIdle(nats.url.replace('nats://', `nats://operator:${password('operator')}@`), {
      timeoutMs: 120_000,
      extraInputs: [customStageInputOf('page-sizes', 'pages', 30_000, 64)],
    });
    assert.ok(idle, 'the crawl finished');
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.done));

    const bigPages = BIG_PAGE_PATHS.map((p) => `http://${BIG_PAGE_HOST}${p}`);
    const expected = [...expectedCrawl(web.model, { userAgentToken: E2E.token, maxDepth: MAX_DEPTH, seeds, redirectHopCost: 0 }).pages.keys(), ...bigPages].sort();
    const stored = await storedPages(out);
    assert.deepEqual(stored.urls, expected, 'every page once');
    assert.deepEqual(stored.storedTwice, [], 'pages stored more than once');
    assert.equal(Number((await queryOutput(out, 'SELECT count(*) FROM page_sizes'))[0]![0]), stored.rows, "the stage module's row of every page");
    assert.doesNotMatch(fetchErr, /permission denied/);
    assert.match(nats.log(), new RegExp(`Publish Violation - User "${NARROW_FETCH}", Subject "crawl\\.fetched\\.\\d+"`), 'the server log is read');
    // besides the fetch user's `crawl seed` above, denied on the seeds' scope and on crawl.seeds
    const violations = nats.log().split('\n').filter((l) => /Violation/.test(l) && !l.includes(NARROW_FETCH) && !l.includes('"seeder"') && !/User "(fetch|seeder)".*crawl\.seeds/.test(l) && !/User "fetch".*\$KV\.crawl-scope\./.test(l));
    assert.deepEqual(violations, [], 'the roles allow everything the stages do');
  });

  it('every role is in the configuration', () => {
    const config = accountsConfig((r) => `password: $X_${r.length}`);
    for (const role of ROLES) assert.match(config, new RegExp(`# ${role}\\n`));
    assert.ok(connect, 'the client is importable');
  });
});
