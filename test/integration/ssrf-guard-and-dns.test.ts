/**
 * The SSRF guard and the DNS cache against real sockets and a real (test) DNS server, all
 * on loopback. 127.0.0.2 plays a "public" address by being allowed with --allow-network;
 * 127.0.0.1 is the forbidden one. Nothing here touches any other address.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpClient } from '../../pipeline/adapters/http/client.js';
import { HttpFetchError, type HttpRequest } from '../../ports/http.js';
import { DnsCache, DnsLookupError } from '../../pipeline/adapters/dns-cache.js';
import { parseResolveRule } from '../../pipeline/adapters/resolve-map.js';
import { startTestDns, type TestDns } from '../../testweb/index.js';

const base = (url: string): HttpRequest => ({ url, connectTimeoutMs: 2000, headersTimeoutMs: 2000, totalTimeoutMs: 4000, maxBodyBytes: 100_000 });

async function listen(server: Server, host: string, port = 0): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return (server.address() as AddressInfo).port;
}

describe('SSRF guard and DNS cache', () => {
  let dns: TestDns;
  const servers: Server[] = [];
  let port = 0;
  let connections = 0;

  before(async () => {
    dns = await startTestDns({ 'internal.test': { a: ['127.0.0.1'], ttl: 300 }, 'public.test': { a: ['127.0.0.2'], ttl: 1 } });
    const handler = (_req: unknown, res: import('node:http').ServerResponse) => res.end('hello');
    const a = createServer(handler);
    a.on('connection', () => connections++);
    port = await listen(a, '127.0.0.1');
    const b = createServer(handler);
    b.on('connection', () => connections++);
    await listen(b, '127.0.0.2', port);
    servers.push(a, b);
  });
  after(async () => {
    await dns?.close();
    for (const s of servers) await new Promise((r) => s.close(r));
  });

  const client = (opts: { allow?: string[]; resolve?: string[] } = {}) =>
    createHttpClient({
      userAgent: 'guardtest/1.0',
      resolve: (opts.resolve ?? []).map(parseResolveRule),
      allowNetworks: opts.allow ?? [],
      dns: new DnsCache({ minTtlMs: 0, maxTtlMs: 60_000, negativeTtlMs: 1000, servers: [`127.0.0.1:${dns.port}`] }),
    });

  async function refused(c: ReturnType<typeof client>, url: string): Promise<string> {
    const before = connections;
    const err = await c.request(base(url)).then(
      () => assert.fail(`${url} was fetched`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof HttpFetchError, String(err));
    assert.equal(err.code, 'refused', err.message);
    assert.equal(connections, before, 'no connection reached the server');
    return err.message;
  }

  it('refuses loopback as an IP literal, in IPv4-mapped IPv6 form, and through DNS', async () => {
    const c = client();
    try {
      assert.match(await refused(c, `http://127.0.0.1:${port}/`), /refused to connect to 127\.0\.0\.1: loopback address/);
      assert.match(await refused(c, `http://[::ffff:127.0.0.1]:${port}/`), /loopback \(in IPv6 form\) address/);
      assert.match(await refused(c, `http://internal.test:${port}/`), /internal\.test resolves to 127\.0\.0\.1: .*loopback/);
    } finally {
      await c.close();
    }
  });

  it('lets through a --resolve target and an --allow-network range', async () => {
    const viaRule = client({ resolve: [`internal.test=127.0.0.1:${port}`] });
    const viaAllow = client({ allow: ['127.0.0.0/8'] });
    try {
      assert.equal((await viaRule.request(base('http://internal.test/'))).status, 200);
      assert.equal((await viaAllow.request(base(`http://internal.test:${port}/`))).status, 200);
    } finally {
      await viaRule.close();
      await viaAllow.close();
    }
  });

  it('DNS rebinding does not slip through: a name that turns private is refused on the next connection', async () => {
    let now = 1_000_000;
    const cache = new DnsCache({ minTtlMs: 0, maxTtlMs: 60_000, negativeTtlMs: 1000, servers: [`127.0.0.1:${dns.port}`], now: () => now });
    const make = () => createHttpClient({ userAgent: 'guardtest/1.0', resolve: [], allowNetworks: ['127.0.0.2/32'], dns: cache });
    const first = make();
    const second = make(); // a fresh connection pool, the same process-wide DNS cache
    try {
      assert.equal((await first.request(base(`http://public.test:${port}/`))).status, 200);
      dns.set('public.test', { a: ['127.0.0.1'], ttl: 1 });
      now += 1500; // past the record's TTL
      assert.match(await refused(second, `http://public.test:${port}/`), /public\.test resolves to 127\.0\.0\.1/);
    } finally {
      dns.set('public.test', { a: ['127.0.0.2'], ttl: 1 });
      await first.close();
      await second.close();
    }
  });

  it('the DNS cache keeps answers for their TTL (clamped), failures briefly, and asks once for concurrent lookups', async () => {
    let now = 5_000_000;
    const cache = new DnsCache({ minTtlMs: 10_000, maxTtlMs: 100_000, negativeTtlMs: 2000, servers: [`127.0.0.1:${dns.port}`], now: () => now });
    dns.set('ttl.test', { a: ['127.0.0.5'], ttl: 1 }); // 1 s, clamped up to 10 s
    dns.set('long.test', { a: ['127.0.0.6'], ttl: 86_400 }); // a day, clamped down to 100 s
    dns.clearQueries();
    const asked = (name: string) => dns.queries().filter((q) => q.name === name && q.type === 'A').length;

    const all = await Promise.all([cache.lookup('ttl.test'), cache.lookup('ttl.test'), cache.lookup('TTL.test.')]);
    assert.deepEqual(all, [['127.0.0.5'], ['127.0.0.5'], ['127.0.0.5']]);
    assert.equal(asked('ttl.test'), 1, 'concurrent lookups share one query');
    dns.set('ttl.test', { a: ['127.0.0.7'], ttl: 1 });
    now += 9000;
    assert.deepEqual(await cache.lookup('ttl.test'), ['127.0.0.5'], 'within the minimum TTL: cached');
    now += 2000;
    assert.deepEqual(await cache.lookup('ttl.test'), ['127.0.0.7'], 'past it: asked again');

    await cache.lookup('long.test');
    now += 99_000;
    await cache.lookup('long.test');
    assert.equal(asked('long.test'), 1);
    now += 2000;
    await cache.lookup('long.test');
    assert.equal(asked('long.test'), 2, 'a day-long TTL is held at most the maximum');

    await assert.rejects(cache.lookup('nowhere.test'), (e: unknown) => e instanceof DnsLookupError && e.code === 'ENOTFOUND');
    await assert.rejects(cache.lookup('nowhere.test'), DnsLookupError);
    assert.equal(asked('nowhere.test'), 1, 'a failure is cached');
    now += 2500;
    await assert.rejects(cache.lookup('nowhere.test'), DnsLookupError);
    assert.equal(asked('nowhere.test'), 2, 'briefly');
  });
});
