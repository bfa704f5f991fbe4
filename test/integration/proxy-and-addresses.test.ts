/**
 * The HTTP client against real sockets on loopback: through the test web's forward proxy
 * (CONNECT tunnels to the address the crawler resolved and checked, Proxy-Authorization, a
 * proxy that refuses or is down, a private target refused before the proxy is asked, NO_PROXY),
 * over TLS inside a tunnel, to a host's other addresses when one does not answer (IPv6 loopback,
 * a silent first address, A and AAAA from the test DNS server), and stopping at the headers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import { createHttpClient, type HttpClientOptions } from '../../pipeline/adapters/http/client.js';
import { HttpFetchError, type HttpClient, type HttpRequest } from '../../ports/http.js';
import { AddressHealth } from '../../pipeline/adapters/address-health.js';
import { ConnectTargets } from '../../pipeline/adapters/connect-targets.js';
import { DnsCache } from '../../pipeline/adapters/dns-cache.js';
import { hostAddressResolver } from '../../pipeline/adapters/host-address.js';
import { parseResolveRule } from '../../pipeline/adapters/resolve-map.js';
import { parseProxyUrl } from '../../pipeline/adapters/http/proxy-config.js';
import { guardedConnector } from '../../pipeline/adapters/http/ssrf-connector.js';
import { connectTls } from '../../pipeline/adapters/http/tls-options.js';
import { freePort } from '../../ops/nats/embedded-server.js';
import { startForwardProxy, startTestDns, startTestWeb, FALLBACK_HOST, SILENT_ADDRESS, V6_HOST, VIDEO_BYTES, VIDEO_PATH, type ForwardProxy, type TestDns, type TestWeb } from '../../testweb/index.js';

const req = (url: string, over: Partial<HttpRequest> = {}): HttpRequest => ({ url, connectTimeoutMs: 3000, headersTimeoutMs: 3000, totalTimeoutMs: 8000, maxBodyBytes: 1_000_000, ...over });
const CRED = { user: 'crawler', password: 'proxyPw-5b1e9' };

async function failure(c: HttpClient, r: HttpRequest): Promise<HttpFetchError> {
  const err = await c.request(r).then(
    () => assert.fail(`${r.url} was fetched`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof HttpFetchError, String(err));
  return err;
}

let web: TestWeb;
let proxy: ForwardProxy;
let open: ForwardProxy;
let dns: TestDns;
const clients: HttpClient[] = [];

before(async () => {
  web = await startTestWeb({ hosts: 2, pagesPerHost: 3, network: true, politeness: true });
  proxy = await startForwardProxy({ credentials: CRED });
  open = await startForwardProxy();
  dns = await startTestDns({
    'internal.test': { a: ['127.0.0.1'], ttl: 300 },
    'mixed.test': { a: ['127.0.0.1', '127.0.0.2'], ttl: 300 },
    'dual.test': { a: ['127.0.0.5'], aaaa: ['::1'], ttl: 300 },
  });
});
after(async () => {
  for (const c of clients) await c.close();
  await web?.close();
  await proxy?.close();
  await open?.close();
  await dns?.close();
});

function client(over: Partial<HttpClientOptions> = {}): HttpClient {
  const c = createHttpClient({
    userAgent: 'proxytest/1.0',
    resolve: web.resolveRules.map(parseResolveRule),
    dns: new DnsCache({ minTtlMs: 0, maxTtlMs: 60_000, negativeTtlMs: 1000, servers: [`127.0.0.1:${dns.port}`] }),
    ...over,
  });
  clients.push(c);
  return c;
}

const via = (p: ForwardProxy, noProxy: string[] = []) => ({ proxy: { httpProxy: p.url, httpsProxy: p.url, noProxy } });

describe('through a forward proxy', () => {
  it('an http:// URL goes through a CONNECT tunnel to the address the crawler resolved; the server sees only the proxy', async () => {
    const host = web.model.siteHostNames[0]!;
    const c = client({ ...via(proxy), proxyCredentials: new Map([[proxy.url, CRED]]) });
    proxy.clearLog();
    web.clearLog();
    const res = await c.request(req(`http://${host}/`));
    assert.equal(res.status, 200);
    assert.match(new TextDecoder().decode(res.body), /<html/i);
    assert.equal(res.remoteAddress, '127.0.0.1', 'the server address, not the proxy (WARC-IP-Address, per-IP cap)');
    assert.equal((await c.request(req(`http://${host}/robots.txt`))).status, 200);
    const asked = proxy.log();
    assert.equal(asked.length, 1, 'one tunnel, kept alive for the second request');
    assert.deepEqual({ ...asked[0], at: 0, outboundPort: 0 }, { method: 'CONNECT', target: `127.0.0.1:${web.port}`, sentAuthorization: true, authorized: true, status: 200, at: 0, outboundPort: 0 });
    const seen = web.requestLog().filter((r) => r.host === host);
    assert.equal(seen.length, 2);
    for (const r of seen) assert.ok(proxy.outboundPorts().has(r.remotePort!), `request ${r.path} came from port ${r.remotePort}, not the proxy`);
  });

  it('407 without credentials or with wrong ones: a proxy error saying so, with no secret in it', async () => {
    const host = web.model.siteHostNames[0]!;
    const none = await failure(client(via(proxy)), req(`http://${host}/`));
    assert.equal(none.code, 'proxy');
    assert.match(none.message, new RegExp(`proxy http://127\\.0\\.0\\.1:${proxy.port} answered 407 Proxy Authentication Required to CONNECT 127\\.0\\.0\\.1:${web.port}: the proxy requires credentials`));
    const wrong = await failure(client({ ...via(proxy), proxyCredentials: new Map([[proxy.url, { user: 'crawler', password: 'wrongPw-77' }]]) }), req(`http://${host}/`));
    assert.equal(wrong.code, 'proxy');
    assert.match(wrong.message, /407 .* the proxy refused the credentials given/);
    for (const secret of ['wrongPw-77', Buffer.from('crawler:wrongPw-77').toString('base64')]) assert.ok(!wrong.message.includes(secret) && !String(wrong.stack).includes(secret));
  });

  it('a proxy that is down: a connect failure naming the proxy (retryable, like any refused connection)', async () => {
    const closed = await freePort();
    const err = await failure(client({ proxy: { httpProxy: `http://127.0.0.1:${closed}`, httpsProxy: null, noProxy: [] } }), req(`http://${web.model.siteHostNames[0]}/`));
    assert.equal(err.code, 'connect');
    assert.match(err.message, new RegExp(`proxy http://127\\.0\\.0\\.1:${closed}: connect ECONNREFUSED`));
    assert.equal(err.everyAddressRefused, false, "the proxy's refusal says nothing about the host");
  });

  it('a private target is refused before the proxy is asked; of a name with a private and an allowed address, only the allowed one is asked for', async () => {
    const c = client({ resolve: [], ...via(open), allowNetworks: ['127.0.0.2/32'] });
    open.clearLog();
    for (const url of [`http://internal.test:${web.port}/`, `http://127.0.0.1:${web.port}/`, `http://[::1]:${web.port}/`]) {
      const err = await failure(c, req(url));
      assert.equal(err.code, 'refused', `${url}: ${err.message}`);
    }
    assert.deepEqual(open.log(), [], 'the proxy was never asked');
    const res = await c.request(req(`http://mixed.test:${web.port}/`));
    assert.equal(res.status, 421, 'the test web answers for an unknown host: it was reached, on 127.0.0.2');
    assert.deepEqual(open.log().map((r) => r.target), [`127.0.0.2:${web.port}`]);
    assert.equal(web.requestLog().find((r) => r.host === 'mixed.test')?.localAddress, '127.0.0.2');
  });

  it('hosts on the exclusion list go direct', async () => {
    const host = web.model.siteHostNames[1]!;
    const c = client(via(open, ['site.test']));
    open.clearLog();
    web.clearLog();
    assert.equal((await c.request(req(`http://${host}/`))).status, 200);
    assert.deepEqual(open.log(), []);
    assert.ok(!open.outboundPorts().has(web.requestLog()[0]!.remotePort!));
  });

  it('an address the proxy cannot reach (502): the next address is asked for, through the proxy', async () => {
    const c = client({ resolve: [parseResolveRule(`multi.test=127.0.0.4:${web.port},127.0.0.1:${web.port}`)], ...via(open) });
    open.clearLog();
    assert.equal((await c.request(req('http://multi.test/'))).status, 421);
    assert.deepEqual(
      open.log().map((r) => [r.target, r.status]),
      [
        [`127.0.0.4:${web.port}`, 502],
        [`127.0.0.1:${web.port}`, 200],
      ],
    );
  });

  it("https:// inside the tunnel: the crawler's own TLS, with the name's SNI and certificate", async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'proxy-tls-'));
    try {
      try {
        execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=secure.test', '-addext', 'subjectAltName=DNS:secure.test', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
      } catch {
        t.skip('openssl is not installed');
        return;
      }
      const cert = readFileSync(path.join(dir, 'cert.pem'));
      const names: Array<string | false | null> = [];
      const server = createHttpsServer({ key: readFileSync(path.join(dir, 'key.pem')), cert }, (_req, res) => res.end('secret page'));
      server.on('secureConnection', (s: TLSSocket) => names.push(s.servername));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      const health = new AddressHealth();
      const agent = new Agent({
        connect: guardedConnector({
          targets: new ConnectTargets([parseResolveRule(`secure.test=127.0.0.1:${port}`)], new DnsCache({ minTtlMs: 0, maxTtlMs: 1, negativeTtlMs: 1 }), null, health),
          health,
          recheck: () => null,
          proxyFor: () => ({ url: parseProxyUrl(open.url, 'proxy').url, authorization: null }),
          timeoutFor: () => 3000,
          tlsFor: connectTls({ caPems: [cert.toString('utf8')], insecureHosts: [] }),
        }),
      });
      open.clearLog();
      try {
        const res = await agent.request({ origin: 'https://secure.test', path: '/', method: 'GET' });
        assert.equal(res.statusCode, 200);
        assert.equal(await res.body.text(), 'secret page');
      } finally {
        await agent.close();
        await new Promise((resolve) => server.close(resolve));
      }
      assert.deepEqual(open.log().map((r) => r.target), [`127.0.0.1:${port}`]);
      assert.deepEqual(names, ['secure.test']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a host's addresses", () => {
  it('the IPv6 loopback host', async () => {
    const res = await client().request(req(`http://${V6_HOST}/`));
    assert.equal(res.status, 200);
    assert.equal(res.remoteAddress, '::1');
    assert.equal(web.requestLog().find((r) => r.host === V6_HOST)?.localAddress, '::1');
  });

  it('a first address that never answers: the second serves the host within a fraction of the connect timeout, and goes first from then on', async () => {
    const health = new AddressHealth();
    const started = Date.now();
    const res = await client({ addressHealth: health }).request(req(`http://${FALLBACK_HOST}/`, { connectTimeoutMs: 5000, address: SILENT_ADDRESS }));
    const took = Date.now() - started;
    assert.equal(res.status, 200);
    assert.equal(res.remoteAddress, '127.0.0.1');
    assert.ok(took < 2500, `took ${took} ms`);
    assert.equal(health.failedLately(SILENT_ADDRESS), true);
    const charge = hostAddressResolver(web.resolveRules.map(parseResolveRule), new DnsCache({ minTtlMs: 0, maxTtlMs: 1, negativeTtlMs: 1 }), [], health);
    assert.equal(await charge(FALLBACK_HOST), '127.0.0.1', 'the gate now charges the address that answers');
  });

  it('A and AAAA from DNS: the AAAA address serves when the A address refuses', async () => {
    const res = await client({ resolve: [], allowNetworks: ['127.0.0.0/8', '::1/128'] }).request(req(`http://dual.test:${web.port}/`));
    assert.equal(res.status, 421);
    assert.equal(res.remoteAddress, '::1');
    assert.equal(web.requestLog().find((r) => r.host === 'dual.test')?.localAddress, '::1');
  });

  it('no address connects: one error naming each; a silent address alone: the connect timeout', async () => {
    const dead = await failure(client({ resolve: [parseResolveRule(`dead.test=127.0.0.4:${web.port},127.0.0.5:${web.port}`)] }), req('http://dead.test/'));
    assert.equal(dead.code, 'connect');
    assert.equal(dead.everyAddressRefused, true, 'both addresses refused');
    assert.match(dead.message, new RegExp(`none of 2 addresses connected \\(127\\.0\\.0\\.4:${web.port}: connect ECONNREFUSED [^;]*; 127\\.0\\.0\\.5:${web.port}: connect ECONNREFUSED`));
    const silent = await failure(client({ resolve: [parseResolveRule(`silent.test=${SILENT_ADDRESS}:${web.port}`)] }), req('http://silent.test/', { connectTimeoutMs: 600 }));
    assert.equal(silent.code, 'timeout');
    assert.match(silent.message, /connect timeout after 600 ms/);
  });
});

describe('stopping at the headers', () => {
  it('a body the caller does not want is not downloaded', async () => {
    const total = 64 * 1024 * 1024;
    let written = 0;
    let closed!: () => void;
    const done = new Promise<void>((resolve) => (closed = resolve));
    const server: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': total });
      const chunk = Buffer.alloc(64 * 1024);
      const pump = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', closed);
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const c = client({ resolve: [], allowNetworks: ['127.0.0.0/8'] });
      const res = await c.request(req(`http://127.0.0.1:${port}/clip.mp4`, { maxBodyBytes: total, wantBody: (status, headers) => !(status === 200 && headers['content-type'] === 'video/mp4') }));
      assert.equal(res.status, 200);
      assert.equal(res.bodyNotRead, true);
      assert.equal(res.body.length, 0);
      assert.equal(res.headers['content-length'], String(total));
      await done;
      // what the kernel's socket buffers took before the connection closed, not the body
      assert.ok(written < total / 4, `the server wrote ${written} of ${total} bytes`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("the test web's video: headers only", async () => {
    const res = await client().request(req(`http://${V6_HOST}${VIDEO_PATH}`, { maxBodyBytes: VIDEO_BYTES, wantBody: () => false }));
    assert.equal(res.bodyNotRead, true);
    assert.equal(res.headers['content-type'], 'video/mp4');
    assert.equal(res.headers['content-length'], String(VIDEO_BYTES));
  });
});
