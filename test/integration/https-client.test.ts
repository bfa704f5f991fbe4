// The crawler's HTTP client over TLS, against real servers on 127.0.0.1 (host names are mapped
// there by --resolve rules): HTTP/2 where the server offers it and HTTP/1.1 where not, every
// behaviour of the client kept over HTTP/2 (port swap with the name kept for SNI and
// :authority, remote address, decompression, the body cap, the timeouts, one kept-alive
// connection), whom it trusts (--ca-file, NODE_EXTRA_CA_CERTS beside it, --insecure-host),
// the test web's bad-certificate hosts judged by the failure policy, and a WARC written from
// an HTTP/2 exchange as warcio reads it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { WARCParser } from 'warcio';
import { createHttpClient } from '../../pipeline/adapters/http/client.js';
import { parseResolveRule } from '../../pipeline/adapters/resolve-map.js';
import { HttpFetchError, type HttpClient, type HttpRequest, type HttpResponse } from '../../ports/http.js';
import { hostDead } from '../../stages/shared/politeness/failure-policy.js';
import { exchangeMessage } from '../../stages/shared/messages/exchange-emit.js';
import { exchangeRecords } from '../../stages/archive/exchange-records.js';
import { makeTestPki, type TestPki } from '../../testweb/test-ca.js';
import { BAD_CERT_HOSTS, HANDSHAKE_RESET_HOST, startTestWeb, type TestWeb } from '../../testweb/index.js';

const UA = 'TestCrawler/1.0 (+http://example.invalid/bot)';
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(200);

const base = (url: string): HttpRequest => ({ url, connectTimeoutMs: 3000, headersTimeoutMs: 3000, totalTimeoutMs: 6000, maxBodyBytes: 1024 * 1024 });

async function listen(server: Http2SecureServer | HttpsServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const failureOf = async (p: Promise<unknown>): Promise<HttpFetchError> => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof HttpFetchError, String(err));
    return err;
  }
  assert.fail('the request succeeded');
};

describe('https client: HTTP/2 and HTTP/1.1 over TLS', () => {
  let pki: TestPki;
  let h2server: Http2SecureServer;
  let h1server: HttpsServer;
  let h2port = 0;
  let h1port = 0;
  /** HTTP/2 sessions (connections) the h2 server accepted */
  let sessions = 0;
  const seen: Array<{ path: string; version: string; authority: string | undefined }> = [];
  let client: HttpClient;
  let dir: string;

  const handler = (req: Http2ServerRequest | import('node:http').IncomingMessage, res: Http2ServerResponse | import('node:http').ServerResponse) => {
    const url = new URL(req.url ?? '/', 'https://x');
    seen.push({ path: url.pathname, version: req.httpVersion, authority: (req.headers[':authority'] as string | undefined) ?? req.headers.host });
    switch (url.pathname) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'text/plain', 'x-multi': ['a', 'b'] });
        res.end('hello over tls');
        return;
      case '/gzip':
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
        res.end(zlib.gzipSync(TEXT));
        return;
      case '/br':
        res.writeHead(200, { 'content-encoding': 'br', 'content-type': 'text/plain' });
        res.end(zlib.brotliCompressSync(TEXT));
        return;
      case '/big':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.alloc(2 * 1024 * 1024, 0x61));
        return;
      case '/no-headers':
        return; // never answers
      case '/drip': {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const t = setInterval(() => (res as import('node:http').ServerResponse).write('.'), 50);
        res.on('close', () => clearInterval(t));
        return;
      }
      default:
        res.writeHead(404);
        res.end('nope');
    }
  };

  before(async () => {
    pki = await makeTestPki(['*.site.test', '*.h1.test']);
    h2server = createSecureServer({ key: pki.web.key, cert: pki.web.cert, allowHTTP1: true }, handler);
    h2server.on('session', () => sessions++);
    h1server = createHttpsServer({ key: pki.web.key, cert: pki.web.cert }, handler);
    h2port = await listen(h2server);
    h1port = await listen(h1server);
    dir = mkdtempSync(path.join(os.tmpdir(), 'https-client-'));
    client = createHttpClient({
      userAgent: UA,
      resolve: [parseResolveRule(`*.site.test=127.0.0.1:${h2port}`), parseResolveRule(`*.h1.test=127.0.0.1:${h1port}`)],
      allowNetworks: ['127.0.0.0/8'],
      tls: { caPems: [pki.caPem], insecureHosts: [] },
    });
  });

  after(async () => {
    await client.close();
    h2server.close();
    h1server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('speaks HTTP/2 where the server offers it: status, headers, remote address, the name kept through the port swap', async () => {
    const res = await client.request(base('https://h01.site.test/ok'));
    assert.equal(res.status, 200);
    assert.equal(Buffer.from(res.body).toString(), 'hello over tls');
    assert.equal(res.headers['x-multi'], 'a, b');
    assert.equal(res.remoteAddress, '127.0.0.1');
    assert.equal(res.protocol?.http, 'h2');
    assert.match(res.protocol?.tls ?? '', /^tls\/1\.[23]$/);
    assert.match(res.protocol?.cipher ?? '', /^TLS_/);
    assert.equal(res.protocol?.unverified, undefined);
    const last = seen.at(-1)!;
    assert.deepEqual([last.version, last.authority], ['2.0', 'h01.site.test'], 'HTTP/2 with :authority the URL\'s host');
  });

  it('speaks HTTP/1.1 over TLS where the server offers no HTTP/2', async () => {
    const res = await client.request(base('https://www.h1.test/ok'));
    assert.equal(res.status, 200);
    assert.deepEqual([res.protocol?.http, res.protocol?.tls?.startsWith('tls/')], ['http/1.1', true]);
    assert.deepEqual([seen.at(-1)!.version, seen.at(-1)!.authority], ['1.1', 'www.h1.test']);
  });

  it('decompresses gzip and br, and cuts a 2 MB body at the cap, over HTTP/2', async () => {
    for (const p of ['/gzip', '/br']) {
      const res = await client.request(base(`https://h01.site.test${p}`));
      assert.equal(Buffer.from(res.body).toString(), TEXT, p);
      assert.equal(res.protocol?.http, 'h2');
    }
    const big = await client.request({ ...base('https://h01.site.test/big'), maxBodyBytes: 100_000 });
    assert.equal(big.truncated, true);
    assert.equal(big.body.length, 100_000);
  });

  it('times out waiting for headers, and cuts off a body that drips forever, over HTTP/2', async () => {
    const t0 = Date.now();
    const headers = await failureOf(client.request({ ...base('https://h01.site.test/no-headers'), headersTimeoutMs: 400 }));
    assert.equal(headers.code, 'timeout');
    assert.match(headers.message, /headers timeout after 400 ms/);
    assert.ok(Date.now() - t0 < 2500, `took ${Date.now() - t0} ms`);
    const drip = await failureOf(client.request({ ...base('https://h01.site.test/drip'), totalTimeoutMs: 700 }));
    assert.equal(drip.code, 'timeout');
    assert.match(drip.message, /total timeout after 700 ms/);
    // the session survives a stream the client gave up on
    assert.equal((await client.request(base('https://h01.site.test/ok'))).status, 200);
  });

  it('keeps one HTTP/2 connection per origin for requests that follow one another', async () => {
    const fresh = createHttpClient({ userAgent: UA, resolve: [parseResolveRule(`*.site.test=127.0.0.1:${h2port}`)], allowNetworks: ['127.0.0.0/8'], tls: { caPems: [pki.caPem], insecureHosts: [] } });
    const before = sessions;
    try {
      for (let i = 0; i < 5; i++) assert.equal((await fresh.request(base('https://h02.site.test/ok'))).protocol?.http, 'h2');
    } finally {
      await fresh.close();
    }
    assert.equal(sessions - before, 1, 'five requests, one connection');
  });

  it('with HTTP/2 turned off, speaks HTTP/1.1 to a server that offers both', async () => {
    const h1only = createHttpClient({ userAgent: UA, resolve: [parseResolveRule(`*.site.test=127.0.0.1:${h2port}`)], allowNetworks: ['127.0.0.0/8'], tls: { caPems: [pki.caPem], insecureHosts: [] }, http2: false });
    try {
      const res = await h1only.request(base('https://h01.site.test/ok'));
      assert.deepEqual([res.status, res.protocol?.http], [200, 'http/1.1']);
    } finally {
      await h1only.close();
    }
  });

  it('trusts only the CAs it is given: unknown issuer without --ca-file, NODE_EXTRA_CA_CERTS kept beside one, --insecure-host noted', async () => {
    const rules = [parseResolveRule(`*.site.test=127.0.0.1:${h2port}`)];
    const make = (caPems: string[], insecureHosts: string[] = []) => createHttpClient({ userAgent: UA, resolve: rules, allowNetworks: ['127.0.0.0/8'], tls: { caPems, insecureHosts } });
    const untrusting = make([]);
    const other = await makeTestPki(['other.test']);
    const saved = process.env.NODE_EXTRA_CA_CERTS;
    const envFile = path.join(dir, 'extra.pem');
    writeFileSync(envFile, pki.caPem);
    process.env.NODE_EXTRA_CA_CERTS = envFile;
    const withEnv = make([other.caPem]); // an unrelated --ca-file: the environment's CA still counts
    if (saved === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = saved;
    const insecure = make([], ['*.site.test']);
    try {
      const err = await failureOf(untrusting.request(base('https://h01.site.test/ok')));
      assert.equal(err.code, 'tls');
      assert.match(hostDead(err, 'h01.site.test')?.reason ?? '', /^tls_error: unable to (get local issuer certificate|verify the first certificate)/);
      assert.equal((await withEnv.request(base('https://h01.site.test/ok'))).status, 200);
      const res = await insecure.request(base('https://h01.site.test/ok'));
      assert.equal(res.status, 200);
      assert.match(res.protocol?.unverified ?? '', /^certificate not verified \(--insecure-host\): unable to/);
    } finally {
      await Promise.all([untrusting.close(), withEnv.close(), insecure.close()]);
    }
  });

  it('an exchange over HTTP/2 is archived in a WARC that warcio reads, the protocols in WARC-Protocol', async () => {
    const url = 'https://h01.site.test/gzip';
    const res: HttpResponse = await client.request(base(url));
    const e = exchangeMessage({ kind: 'page', captureId: 'f1:0', fetchId: 'f1', url, host: 'h01.site.test', domain: 'site.test', depth: 0, fetchTime: Date.now(), durationMs: res.durationMs, requestHeaders: {}, userAgent: UA, res });
    const built = exchangeRecords(e, '<urn:uuid:00000000-0000-0000-0000-000000000000>', null);
    const parser = new WARCParser(Readable.from([Buffer.concat(built.members)]) as never);
    const records: Array<{ type: string | undefined; protocol: string | null | undefined; cipher: string | null | undefined; status: string | undefined; payload: string }> = [];
    for await (const r of parser) {
      const payload = Buffer.from(await r.readFully(true)).toString();
      records.push({ type: r.warcType, protocol: r.warcHeader('WARC-Protocol'), cipher: r.warcHeader('WARC-Cipher-Suite'), status: r.httpHeaders?.statusCode?.toString(), payload });
    }
    const response = records.find((r) => r.type === 'response')!;
    const request = records.find((r) => r.type === 'request')!;
    assert.match(response.protocol ?? '', /^h2, tls\/1\.[23]$/, 'WARC-Protocol: h2 and the TLS version, as warcio joins repeated fields');
    assert.match(response.cipher ?? '', /^TLS_/);
    assert.equal(request.protocol, response.protocol);
    assert.equal(response.status, '200', 'the HTTP message is in HTTP/1.1 form, which warcio parses');
    assert.equal(response.payload, TEXT);
  });
});

describe('https client: the test web over TLS', () => {
  let web: TestWeb;
  let client: HttpClient;
  before(async () => {
    web = await startTestWeb({ hosts: 2, pagesPerHost: 3, tls: true });
    client = createHttpClient({ userAgent: UA, resolve: web.resolveRules.map(parseResolveRule), tls: { caPems: [web.tls!.pki.caPem], insecureHosts: [] } });
  });
  after(async () => {
    await client.close();
    await web.close();
  });

  it('serves HTTP/2 where it offers it and HTTP/1.1 where not, and logs each request so', async () => {
    const h2 = await client.request(base('https://h00.site.test/'));
    const h1 = await client.request(base('https://h01.site.test/'));
    const plain = await client.request(base('http://h00.site.test/robots.txt'));
    assert.deepEqual([h2.protocol?.http, h1.protocol?.http, plain.protocol], ['h2', 'http/1.1', { http: 'http/1.1', tls: null, cipher: null }]);
    assert.match(Buffer.from(h2.body).toString(), /href="https:\/\/h0\d\.site\.test\//, 'over TLS its absolute links are https://');
    const log = web.requestLog().map((r) => `${r.host}${r.path} ${r.protocol} ${r.tls ? 'tls' : 'plain'} ${r.localAddress}`);
    assert.deepEqual(log, ['h00.site.test/ h2 tls 127.0.0.1', 'h01.site.test/ http/1.1 tls 127.0.0.1', 'h00.site.test/robots.txt http/1.1 plain 127.0.0.1']);
  });

  it('each bad-certificate host fails with the reason a user reads, and ends its host; a reset handshake may heal', async () => {
    const expected: Record<string, RegExp> = {
      [BAD_CERT_HOSTS.expired]: /^tls_error: certificate has expired$/,
      [BAD_CERT_HOSTS.unknownCa]: /^tls_error: unable to get local issuer certificate/,
      [BAD_CERT_HOSTS.wrongName]: /^tls_error: certificate is not valid for this host name \(.*wrong-name\.badtls\.test.*DNS:www\.elsewhere\.test\)$/,
      [BAD_CERT_HOSTS.incompleteChain]: /^tls_error: unable to verify the first certificate \(an incomplete chain/,
      [BAD_CERT_HOSTS.selfSigned]: /^tls_error: self-signed certificate$/,
    };
    for (const [host, reason] of Object.entries(expected)) {
      const err = await failureOf(client.request(base(`https://${host}/robots.txt`)));
      assert.equal(err.code, 'tls', host);
      const dead = hostDead(err, host);
      assert.equal(dead?.outcome, 'network_error', host);
      assert.match(dead!.reason, reason, host);
    }
    const reset = await failureOf(client.request(base(`https://${HANDSHAKE_RESET_HOST}/robots.txt`)));
    assert.equal(reset.code, 'reset');
    assert.equal(hostDead(reset, HANDSHAKE_RESET_HOST), null);
  });
});
