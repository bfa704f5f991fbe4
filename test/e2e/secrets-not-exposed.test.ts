/**
 * A crawl run with secrets everywhere a user puts them (a NATS password, an API token, a
 * session id in a seed URL's query, a password in a seed URL, a proxy password in
 * HTTP_PROXY, the crawl going through that proxy), then a scan of everything the
 * crawl leaves readable besides its output: log files, stdout/stderr, the crawl-config bucket.
 * None of the secrets may appear, and the logs carry no URL beyond its scheme and host.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kvm } from '@nats-io/kv';
import { startForwardProxy, startTestWeb, type ForwardProxy, type TestWeb } from '../../testweb/index.js';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { BUCKETS } from '../../topology/index.js';
import { freePort } from '../../ops/nats/embedded-server.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { runCli, serveApiUrl, startCli } from '../support/crawl-cli.js';
import { E2E } from '../support/e2e-web.js';
import { startConfiguredNats, type ConfiguredNats } from '../support/secure-nats.js';

const NATS_PASSWORD = 'natsPw-9f3b1c77e2';
const API_TOKEN = 'apiTok-6a2d9e51c08b44f7';
const SESSION = 'sessSecret-41d7c2b9';
const URL_PASSWORD = 'urlPw-8e0a6b3f';
const PROXY_PASSWORD = 'proxyPw-2c9d7e15';
const SECRETS = [NATS_PASSWORD, API_TOKEN, SESSION, URL_PASSWORD, PROXY_PASSWORD, Buffer.from(`crawler:${PROXY_PASSWORD}`).toString('base64')];

describe('no secret and no URL in logs or crawl-config after a crawl with secrets', () => {
  let web: TestWeb;
  let dir: string;
  let nats: ConfiguredNats;
  let proxy: ForwardProxy;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    web = await startTestWeb({ hosts: 2, pagesPerHost: 8, seed: E2E.seed });
    proxy = await startForwardProxy({ credentials: { user: 'crawler', password: PROXY_PASSWORD } });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-secrets-'));
    nats = await startConfiguredNats(path.join(dir, 'nats'), [`authorization { users = [ { user: crawler, password: ${JSON.stringify(NATS_PASSWORD)} } ] }`, 'max_payload: 8388608']);
    const proxyUrl = `http://crawler:${PROXY_PASSWORD}@127.0.0.1:${proxy.port}`;
    env = { NATS_URL: nats.url, NATS_USER: 'crawler', NATS_PASSWORD, NATS_TOKEN: '', NATS_CREDS: '', NATS_NKEY: '', LOG_LEVEL: 'debug', CRAWL_API_TOKEN: API_TOKEN, HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl, NO_PROXY: '' };
  });
  after(async () => {
    await web?.close();
    await proxy?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('scans the logs, stdout/stderr and crawl-config bucket of a crawl and a service', async () => {
    const out = path.join(dir, 'out');
    const [h1, h2] = web.model.siteHostNames;
    const runLog = path.join(dir, 'run.log');
    const args = ['run', '--out', out, '--until-idle', '--max-depth', '2', '--min-delay-ms', '20', '--user-agent', E2E.userAgent, '--log-file', runLog, '--log-level', 'debug'];
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    args.push('--seed', `http://${h1}/?session=${SESSION}`, '--seed', `http://crawler:${URL_PASSWORD}@${h2}/`);
    const run = await runCli(args, env, 180_000);
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    // the secret went through the crawl: it is in the output (where URLs belong), so the scan below means something
    const db = await openOutputDatabase(out);
    try {
      const rows = (await db.run(`SELECT count(*) FROM fetch_log WHERE url LIKE '%${SESSION}%'`)).rows;
      assert.ok(Number(rows[0]![0]) > 0, 'the seed with the session id was fetched');
    } finally {
      await db.close();
    }
    // ... through the proxy, with the password
    assert.ok(proxy.log().length > 0 && proxy.log().every((r) => r.authorized && r.status === 200), JSON.stringify(proxy.log().slice(0, 3)));

    // the service: a job whose seed carries a secret, created with the token
    const serveLog = path.join(dir, 'serve.log');
    const metricsPort = await freePort();
    const serve = startCli(['serve', '--out', out, '--port', '0', '--stages', 'none', '--log-file', serveLog, '--log-level', 'debug', '--metrics-port', String(metricsPort)], env);
    // all of it, for the scan below (the helper keeps only the tail)
    let serveErr = '';
    serve.child.stderr!.on('data', (c: Buffer) => (serveErr += c.toString()));
    const base = await serveApiUrl(serve);
    const created = await fetch(`${base}/api/v1/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ seeds: [`http://${h1}/?session=${SESSION}`], schedule: { kind: 'interval', every: '1d' } }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const refused = await fetch(`${base}/api/v1/jobs`, { headers: { authorization: `Bearer ${API_TOKEN}x` } });
    assert.equal(refused.status, 401);
    // what a scraper sees: the service's metrics (counted the job and the refusal above)
    const scraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    assert.match(scraped, /crawler_/);
    serve.child.kill('SIGTERM');
    const served = await serve.done;

    const nc = await connectNats(nats.url, 'scan', { user: 'crawler', password: NATS_PASSWORD });
    const config: string[] = [];
    try {
      const kv = await new Kvm(nc).open(BUCKETS.config);
      for await (const key of await kv.keys()) config.push(`${key}=${new TextDecoder().decode((await kv.get(key))?.value)}`);
    } finally {
      await nc.close();
    }
    assert.ok(config.length > 0 && config.some((c) => c.startsWith('settings=')), 'the bucket holds the settings');

    const places: Array<[string, string]> = [
      ['run log file', readFileSync(runLog, 'utf8')],
      ['run stdout', run.stdout],
      ['run stderr', run.stderr],
      ['serve log file', readFileSync(serveLog, 'utf8')],
      ['serve stdout+stderr', served.stdout + serveErr],
      ['crawl-config bucket', config.join('\n')],
      ['/metrics of crawl serve', scraped],
    ];
    assert.ok(places[0]![1].length > 1000, 'the crawl logged at debug level');
    for (const [where, text] of places) {
      for (const secret of SECRETS) assert.ok(!text.includes(secret), `${where} contains the secret ${secret}`);
      if (where.includes('log') || where.includes('metrics')) {
        const urls = text.match(/\bhttps?:\/\/[^\s"'/]+\/[^\s"'…][^\s"']*/g) ?? [];
        assert.deepEqual(urls, [], `${where} carries URLs`);
      }
    }
  });
});
