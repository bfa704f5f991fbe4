/**
 * A crawl behind an egress proxy, end to end through the CLI: `crawl run --proxy` with a
 * forward proxy the test starts, which requires credentials (given in a file). From the test
 * web's own log, every request came on a connection the proxy opened; the crawl completes;
 * two private targets (a name that resolves to loopback, a loopback IP literal) are refused
 * with their reason, and the proxy was never asked to reach their port. The same crawl takes
 * an IPv6-only host and a host whose first address never answers, and stops at the headers
 * of a 64 MiB video (its outcome, its WARC capture). One site is crawled over HTTPS: TLS and
 * HTTP/2 inside the tunnel, the certificate checked against the web's CA.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  startForwardProxy,
  startTestDns,
  startTestWeb,
  FALLBACK_HOST,
  NETWORK_PAGES,
  V6_HOST,
  VIDEO_BYTES,
  VIDEO_PATH,
  type ForwardProxy,
  type TestDns,
  type TestWeb,
} from '../../testweb/index.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E, queryOutput } from '../support/e2e-web.js';

const CRED = { user: 'crawler', password: 'proxyPw-e2e-31c7' };

describe('a crawl through a forward proxy', () => {
  let web: TestWeb;
  let proxy: ForwardProxy;
  let dns: TestDns;
  let dir: string;
  /** a loopback server the private seeds point at: nothing may ever connect to it */
  let privateServer: Server;
  let privatePort = 0;
  let privateConnections = 0;

  before(async () => {
    web = await startTestWeb({ hosts: 2, pagesPerHost: 6, seed: E2E.seed, network: true, tls: true });
    proxy = await startForwardProxy({ credentials: CRED });
    dns = await startTestDns({ 'intranet.test': { a: ['127.0.0.1'], ttl: 60 } });
    privateServer = createServer((s) => {
      privateConnections++;
      s.destroy();
    });
    await new Promise<void>((resolve) => privateServer.listen(0, '127.0.0.1', resolve));
    privatePort = (privateServer.address() as { port: number }).port;
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-proxy-'));
  });
  after(async () => {
    await web?.close();
    await proxy?.close();
    await dns?.close();
    await new Promise((resolve) => privateServer?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('completes with every request through the proxy; private targets refused before it is asked', async () => {
    const out = path.join(dir, 'out');
    const credentials = path.join(dir, 'proxy-credentials');
    writeFileSync(credentials, `${CRED.user}:${CRED.password}\n`, { mode: 0o600 });
    // h00 over HTTPS (HTTP/2 offered), h01 over plain HTTP
    const sites = web.model.siteHostNames.map((h, i) => `${i === 0 ? 'https' : 'http'}://${h}/`);
    const privateSeeds = [`http://intranet.test:${privatePort}/`, `http://127.0.0.1:${privatePort}/secret`];
    const args = ['run', '--out', out, '--until-idle', '--max-depth', '2', '--min-delay-ms', '50', '--user-agent', E2E.userAgent];
    args.push('--proxy', proxy.url, '--proxy-credentials-file', credentials, '--dns-server', `127.0.0.1:${dns.port}`, '--ca-file', web.tls!.caFile);
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    for (const seed of [...sites, `http://${V6_HOST}/`, `http://${FALLBACK_HOST}/`, ...privateSeeds]) args.push('--seed', seed);
    const run = await runCli(args, { NATS_URL: '' }, 180_000);
    assert.equal(run.code, 0, run.stderr.slice(-2000));

    // from the server's side: every request, robots.txt included, came on a proxy connection
    const requests = web.requestLog();
    assert.ok(requests.length > 10, `${requests.length} requests`);
    const direct = requests.filter((r) => !r.tls && !proxy.outboundPorts().has(r.remotePort!));
    assert.deepEqual(direct.map((r) => `${r.host}${r.path}`), [], 'requests that did not come through the proxy');
    // TLS requests too: every TCP connection the web accepted was one the proxy opened
    const connections = web.connectionPorts();
    assert.ok(connections.length > 0);
    assert.deepEqual(connections.filter((p) => !proxy.outboundPorts().has(p)), [], 'connections not opened by the proxy');
    const overTls = requests.filter((r) => r.tls);
    assert.ok(overTls.length > 3, `${overTls.length} requests over TLS`);
    // h00's https:// links to h01 are followed too: h01 offers HTTP/1.1 only (the test web's http1Only)
    const [h00, h01] = web.model.siteHostNames;
    assert.deepEqual([...new Set(overTls.map((r) => `${r.host} ${r.protocol}`))].sort(), [`${h00} h2`, `${h01} http/1.1`], 'HTTP/2 inside the tunnel where offered, HTTP/1.1 where not');
    assert.ok(proxy.log().every((r) => r.method === 'CONNECT' && r.authorized), 'every tunnel was asked for with the credentials');

    // the crawl completed: every page of the network hosts, and each site host's pages
    const stored = (await queryOutput(out, 'SELECT url FROM pages ORDER BY url')).map((r) => String(r[0]));
    for (const host of [V6_HOST, FALLBACK_HOST]) for (const p of NETWORK_PAGES) assert.ok(stored.includes(`http://${host}${p}`), `http://${host}${p} stored`);
    for (const site of sites) assert.ok(stored.includes(site), `${site} stored`);
    const ips = Object.fromEntries((await queryOutput(out, `SELECT url_host_name, min(remote_ip), max(remote_ip) FROM captures WHERE url_host_name LIKE '%.net.test' GROUP BY 1`)).map((r) => [r[0], [r[1], r[2]]]));
    assert.deepEqual(ips, { [V6_HOST]: ['::1', '::1'], [FALLBACK_HOST]: ['127.0.0.1', '127.0.0.1'] }, 'the address the server was reached at, through the proxy');

    // the private targets: refused with the guard's reason; the proxy never asked to reach their port
    const refused = await queryOutput(out, `SELECT url, outcome, reason FROM fetch_log WHERE url LIKE '%:${privatePort}/%' ORDER BY url`);
    assert.deepEqual(refused.map((r) => [r[0], r[1]]), privateSeeds.map((s) => [s, 'refused']).sort());
    assert.match(String(refused.find((r) => String(r[0]).includes('intranet'))![2]), /intranet\.test resolves to 127\.0\.0\.1: refused to connect to 127\.0\.0\.1: loopback address/);
    assert.deepEqual(proxy.log().filter((r) => r.target.endsWith(`:${privatePort}`)), []);
    assert.equal(privateConnections, 0);

    // the video: not downloaded, said so, and archived as headers only
    const video = await queryOutput(out, `SELECT f.outcome, f.reason, c.content_truncated, c.warc_type FROM fetch_log f JOIN captures c ON c.fetch_id = f.fetch_id WHERE f.url = 'http://${V6_HOST}${VIDEO_PATH}'`);
    assert.deepEqual(video, [['unsupported_content', `content type video/mp4 is not HTML (not stored; --page-type adds types); body not downloaded (Content-Length ${VIDEO_BYTES} bytes)`, 'unspecified', 'response']]);
  });
});
