// Real node:http servers on 127.0.0.1 only; no other address is ever contacted
// (host names like h01.site.test are always mapped to 127.0.0.1 by --resolve rules).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import zlib from 'node:zlib';
import { createHttpClient } from '../../pipeline/adapters/http/client.js';
import { HttpFetchError, type HttpClient, type HttpRequest } from '../../ports/http.js';
import { matchResolve, parseResolveRule } from '../../pipeline/adapters/resolve-map.js';

const UA = 'TestCrawler/1.0 (+http://example.invalid/bot)';
const TWO_MB = 2 * 1024 * 1024;
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(200);

interface Seen {
  host: string | undefined;
  ua: string | undefined;
  ae: string | undefined;
  remotePort: number | undefined;
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function stopServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

function base(): Omit<HttpRequest, 'url'> {
  return { connectTimeoutMs: 2000, headersTimeoutMs: 2000, totalTimeoutMs: 5000, maxBodyBytes: 1024 * 1024 };
}

describe('http-client (loopback servers)', () => {
  const seen: Record<string, Seen> = {};
  const sockets = new Set<Socket>();
  let port = 0;
  let server: http.Server;
  let client: HttpClient;

  before(async () => {
    server = http.createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      seen[path] = { host: req.headers.host, ua: req.headers['user-agent'], ae: req.headers['accept-encoding'], remotePort: req.socket.remotePort };
      switch (path) {
        case '/ok':
          res.writeHead(200, { 'content-type': 'text/plain', 'x-multi': ['a', 'b'], 'set-cookie': ['s=1', 't=2'] });
          res.end('hello world');
          return;
        case '/host-check': {
          const ok = req.headers.host === 'h01.site.test';
          res.writeHead(ok ? 200 : 421, { 'content-type': 'text/plain' });
          res.end(`host=${req.headers.host}`);
          return;
        }
        case '/redirect':
          res.writeHead(301, { location: 'http://127.0.0.1:1/elsewhere' });
          res.end('moved');
          return;
        case '/big': {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(TWO_MB) });
          const chunk = Buffer.alloc(64 * 1024, 0x61);
          let sent = 0;
          const pump = (): void => {
            while (sent < TWO_MB) {
              sent += chunk.length;
              if (!res.write(chunk)) {
                res.once('drain', pump);
                return;
              }
            }
            res.end();
          };
          res.on('error', () => {});
          pump();
          return;
        }
        case '/gzip':
          res.writeHead(200, { 'content-encoding': 'gzip' });
          res.end(zlib.gzipSync(TEXT));
          return;
        case '/br':
          res.writeHead(200, { 'content-encoding': 'br' });
          res.end(zlib.brotliCompressSync(TEXT));
          return;
        case '/deflate':
          res.writeHead(200, { 'content-encoding': 'deflate' });
          res.end(zlib.deflateSync(TEXT));
          return;
        case '/deflate-raw':
          res.writeHead(200, { 'content-encoding': 'deflate' });
          res.end(zlib.deflateRawSync(TEXT));
          return;
        case '/gzip-bomb':
          // ~10 MB of zeros compressed to a few KB; must stop at the cap.
          res.writeHead(200, { 'content-encoding': 'gzip' });
          res.end(zlib.gzipSync(Buffer.alloc(10 * 1024 * 1024)));
          return;
        case '/gzip-empty':
          res.writeHead(204, { 'content-encoding': 'gzip' });
          res.end();
          return;
        case '/no-headers':
          return; // never answers
        case '/drip': {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const t = setInterval(() => res.write('.'), 50);
          res.on('close', () => clearInterval(t));
          return;
        }
        case '/ka':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('keep');
          return;
        default:
          res.writeHead(404);
          res.end('nope');
      }
    });
    server.on('connection', (s) => {
      sockets.add(s);
    });
    port = await listen(server);
    client = createHttpClient({
      userAgent: UA,
      resolve: [parseResolveRule(`*.site.test=127.0.0.1:${port}`)],
      // these tests talk to loopback servers by address too: the guard has its own tests
      allowNetworks: ['127.0.0.0/8'],
      keepAliveMs: 5000,
    });
  });

  after(async () => {
    await stopServer(server);
    await client.close();
  });

  it('returns a 200 with body, headers, remote address, UA and accept-encoding', async () => {
    const res = await client.request({ url: `http://127.0.0.1:${port}/ok`, ...base() });
    assert.equal(res.status, 200);
    assert.equal(Buffer.from(res.body).toString(), 'hello world');
    assert.equal(res.truncated, false);
    assert.equal(res.headers['content-type'], 'text/plain');
    assert.equal(res.headers['x-multi'], 'a, b');
    // the lines of a field sent twice, apart (X-Robots-Tag's bot prefix covers its line only); none for set-cookie
    assert.deepEqual(res.headerLines, { 'x-multi': ['a', 'b'] });
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(res.remoteAddress, '127.0.0.1');
    assert.equal(res.url, `http://127.0.0.1:${port}/ok`);
    assert.ok(res.durationMs >= 0);
    assert.equal(seen['/ok']?.ua, UA);
    assert.equal(seen['/ok']?.ae, 'gzip, deflate, br');
  });

  it('applies a wildcard --resolve rule with port rewrite, keeping the Host header', async () => {
    const res = await client.request({ url: 'http://h01.site.test/host-check', ...base() });
    assert.equal(Buffer.from(res.body).toString(), 'host=h01.site.test');
    assert.equal(res.status, 200);
    assert.equal(seen['/host-check']?.host, 'h01.site.test');
    assert.equal(res.remoteAddress, '127.0.0.1');
    assert.equal(res.url, 'http://h01.site.test/host-check');
  });

  it('does not follow redirects', async () => {
    const res = await client.request({ url: `http://h02.site.test/redirect`, ...base() });
    assert.equal(res.status, 301);
    assert.equal(res.headers['location'], 'http://127.0.0.1:1/elsewhere');
    assert.equal(Buffer.from(res.body).toString(), 'moved');
  });

  it('truncates a 2 MB body at the cap', async () => {
    const cap = 100 * 1024;
    const res = await client.request({ url: `http://127.0.0.1:${port}/big`, ...base(), maxBodyBytes: cap });
    assert.equal(res.status, 200);
    assert.equal(res.truncated, true);
    assert.equal(res.body.byteLength, cap);
    assert.ok(res.body.every((b) => b === 0x61));
  });

  it('decompresses gzip, br and deflate (zlib and raw)', async () => {
    for (const p of ['/gzip', '/br', '/deflate', '/deflate-raw']) {
      const res = await client.request({ url: `http://127.0.0.1:${port}${p}`, ...base() });
      assert.equal(res.status, 200, p);
      assert.equal(Buffer.from(res.body).toString(), TEXT, p);
      assert.equal(res.truncated, false, p);
    }
  });

  it('counts decoded bytes toward the cap (gzip bomb)', async () => {
    const res = await client.request({ url: `http://127.0.0.1:${port}/gzip-bomb`, ...base(), maxBodyBytes: 50_000 });
    assert.equal(res.truncated, true);
    assert.equal(res.body.byteLength, 50_000);
  });

  it('handles an empty body with a content-encoding', async () => {
    const res = await client.request({ url: `http://127.0.0.1:${port}/gzip-empty`, ...base() });
    assert.equal(res.status, 204);
    assert.equal(res.body.byteLength, 0);
  });

  it('supports HEAD', async () => {
    const res = await client.request({ url: `http://127.0.0.1:${port}/ok`, method: 'HEAD', ...base() });
    assert.equal(res.status, 200);
    assert.equal(res.body.byteLength, 0);
  });

  it('maps a refused connection to code connect', async () => {
    const tmp = http.createServer();
    const freePort = await listen(tmp);
    await stopServer(tmp);
    await assert.rejects(
      client.request({ url: `http://127.0.0.1:${freePort}/`, ...base() }),
      (err: unknown) => {
        assert.ok(err instanceof HttpFetchError);
        assert.equal(err.name, 'HttpFetchError');
        assert.equal(err.code, 'connect');
        assert.equal(err.everyAddressRefused, true, 'nothing listens there: the address refused');
        assert.match(err.message, new RegExp(`^fetching http://127\\.0\\.0\\.1:${freePort}/: `));
        assert.ok(err.cause);
        return true;
      },
    );
  });

  it('times out when the server never sends headers', async () => {
    const t0 = Date.now();
    await assert.rejects(
      client.request({ url: `http://127.0.0.1:${port}/no-headers`, ...base(), headersTimeoutMs: 300, totalTimeoutMs: 5000 }),
      (err: unknown) => {
        assert.ok(err instanceof HttpFetchError);
        assert.equal(err.code, 'timeout');
        assert.match(err.message, /headers timeout after 300 ms/);
        return true;
      },
    );
    const elapsed = Date.now() - t0;
    assert.ok(elapsed < 2000, `took ${elapsed} ms`);
  });

  it('enforces the total timeout on a body that drips forever', async () => {
    const t0 = Date.now();
    await assert.rejects(
      client.request({ url: `http://127.0.0.1:${port}/drip`, ...base(), totalTimeoutMs: 500 }),
      (err: unknown) => {
        assert.ok(err instanceof HttpFetchError);
        assert.equal(err.code, 'timeout');
        assert.match(err.message, /total timeout after 500 ms/);
        return true;
      },
    );
    const elapsed = Date.now() - t0;
    assert.ok(elapsed >= 450 && elapsed < 2000, `took ${elapsed} ms`);
  });

  it('reuses one keep-alive connection for sequential requests', async () => {
    const ports = new Set<number | undefined>();
    for (let i = 0; i < 4; i++) {
      const res = await client.request({ url: 'http://ka.site.test/ka', ...base() });
      assert.equal(res.status, 200);
      ports.add(seen['/ka']?.remotePort);
    }
    assert.equal(ports.size, 1);
  });
});

describe('http-client connection limit', () => {
  it('opens at most maxConnectionsPerOrigin sockets per origin', async () => {
    let connections = 0;
    let active = 0;
    let maxActive = 0;
    const server = http.createServer((_req, res) => {
      active++;
      maxActive = Math.max(maxActive, active);
      setTimeout(() => {
        active--;
        res.end('x');
      }, 60);
    });
    server.on('connection', () => connections++);
    const port = await listen(server);
    const client = createHttpClient({ userAgent: UA, resolve: [], maxConnectionsPerOrigin: 2, allowNetworks: ['127.0.0.0/8'] });
    try {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => client.request({ url: `http://127.0.0.1:${port}/${i}`, ...base() })),
      );
      assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 200, 200, 200]);
      assert.equal(connections, 2);
      assert.equal(maxActive, 2);
    } finally {
      await client.close();
      await stopServer(server);
    }
  });
});

describe('parseResolveRule / matchResolve', () => {
  it('parses the accepted forms', () => {
    assert.deepEqual(parseResolveRule('h01.site.test=127.0.0.1'), { pattern: 'h01.site.test', address: '127.0.0.1' });
    assert.deepEqual(parseResolveRule('*.Site.Test=127.0.0.1:8080'), { pattern: '*.site.test', address: '127.0.0.1', port: 8080 });
    assert.deepEqual(parseResolveRule('*=::1'), { pattern: '*', address: '::1' });
    assert.deepEqual(parseResolveRule('*=[::1]:8080'), { pattern: '*', address: '::1', port: 8080 });
    assert.deepEqual(parseResolveRule('a.b=[::1]'), { pattern: 'a.b', address: '::1' });
  });

  it('rejects bad values with a clear message', () => {
    const bad = ['x', '=127.0.0.1', 'a.b=', 'a.b=localhost', 'a.b=127.0.0.1:0', 'a.b=127.0.0.1:99999', 'a.b=127.0.0.1:x', 'a.b=[::1', 'a.b=[127.0.0.1]:80', 'a b=127.0.0.1', 'a.*.b=127.0.0.1', 'a.b=1.2.3'];
    for (const s of bad) {
      assert.throws(() => parseResolveRule(s), (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.ok(err.message.startsWith(`invalid --resolve ${JSON.stringify(s)}: `), err.message);
        return true;
      }, s);
    }
    assert.throws(() => parseResolveRule('x'), { message: 'invalid --resolve "x": expected PATTERN=ADDRESS[:PORT]' });
  });

  it('matches first rule, case-insensitively, wildcard needing at least one label', () => {
    const rules = ['h01.site.test=127.0.0.2', '*.site.test=127.0.0.1:8080', '*=::1'].map(parseResolveRule);
    assert.equal(matchResolve(rules, 'H01.Site.Test')?.address, '127.0.0.2');
    assert.equal(matchResolve(rules, 'a.b.site.test')?.port, 8080);
    assert.equal(matchResolve(rules, 'site.test')?.address, '::1');
    assert.equal(matchResolve(rules.slice(0, 2), 'site.test'), undefined);
    assert.equal(matchResolve(rules.slice(0, 2), 'xsite.test'), undefined);
    assert.equal(matchResolve(rules, '127.0.0.1'), undefined);
  });
});
