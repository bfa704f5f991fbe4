// The test DNS server over real UDP on loopback, through Node's own dns.Resolver (c-ares):
// A and AAAA answers with their TTLs, NXDOMAIN, SERVFAIL, empty answers, and answers that
// change between queries (DNS rebinding).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { createSocket } from 'node:dgram';
import { dnsResponse, ipv6Bytes, numberedNames, startTestDns, type TestDns } from '../../testweb/index.js';

/** A resolver that asks only the test server, once, with a short timeout (a test can't hang). */
function resolverFor(dns: TestDns): Resolver {
  const r = new Resolver({ timeout: 1000, tries: 1 });
  r.setServers([`${dns.address}:${dns.port}`]);
  return r;
}

async function withDns(records: Parameters<typeof startTestDns>[0], body: (dns: TestDns, r: Resolver) => Promise<void>): Promise<void> {
  const dns = await startTestDns(records);
  try {
    await body(dns, resolverFor(dns));
  } finally {
    await dns.close();
  }
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (err: NodeJS.ErrnoException) => err.code,
  );

test('A and AAAA answers with their TTLs; every query is logged', async () => {
  await withDns(
    {
      'multi.example.test': { a: ['127.0.0.1', '10.0.0.5'], aaaa: ['::1', '2001:db8::5', '::ffff:10.1.2.3'], ttl: 300 },
      'Short.Example.TEST.': { a: ['169.254.169.254'], ttl: 1 },
    },
    async (dns, r) => {
      assert.match(String(dns.port), /^\d+$/);
      assert.equal(dns.address, '127.0.0.1');
      const before = Date.now();
      assert.deepEqual(await r.resolve4('multi.example.test', { ttl: true }), [
        { address: '127.0.0.1', ttl: 300 },
        { address: '10.0.0.5', ttl: 300 },
      ]);
      assert.deepEqual(await r.resolve4('multi.example.test'), ['127.0.0.1', '10.0.0.5']);
      assert.deepEqual(await r.resolve6('multi.example.test', { ttl: true }), [
        { address: '::1', ttl: 300 },
        { address: '2001:db8::5', ttl: 300 },
        { address: '::ffff:10.1.2.3', ttl: 300 },
      ]);
      assert.deepEqual(await r.resolve6('multi.example.test'), ['::1', '2001:db8::5', '::ffff:10.1.2.3']);
      // Names are case-insensitive and the trailing dot of the map's key doesn't matter.
      assert.deepEqual(await r.resolve4('SHORT.example.test', { ttl: true }), [{ address: '169.254.169.254', ttl: 1 }]);
      const q = dns.queries();
      assert.deepEqual(
        q.map(({ name, type }) => `${type} ${name}`),
        ['A multi.example.test', 'A multi.example.test', 'AAAA multi.example.test', 'AAAA multi.example.test', 'A short.example.test'],
      );
      assert.ok(q.every((e) => e.at >= before - 1 && e.at <= Date.now() + 1));
      dns.clearQueries();
      assert.deepEqual(dns.queries(), []);
    },
  );
});

test('NXDOMAIN (unknown or set so) is ENOTFOUND, SERVFAIL is ESERVFAIL, an empty answer is ENODATA', async () => {
  await withDns(
    {
      'gone.example.test': 'nxdomain',
      'broken.example.test': 'servfail',
      'v4only.example.test': { a: ['127.0.0.1'], ttl: 60 },
      'empty.example.test': { ttl: 60 },
    },
    async (dns, r) => {
      assert.equal(await code(r.resolve4('unknown.example.test')), 'ENOTFOUND');
      assert.equal(await code(r.resolve6('unknown.example.test')), 'ENOTFOUND');
      assert.equal(await code(r.resolve4('gone.example.test')), 'ENOTFOUND');
      assert.equal(await code(r.resolve4('broken.example.test')), 'ESERVFAIL');
      assert.equal(await code(r.resolve6('broken.example.test')), 'ESERVFAIL');
      assert.equal(await code(r.resolve6('v4only.example.test')), 'ENODATA');
      assert.equal(await code(r.resolve4('empty.example.test')), 'ENODATA');
      // Other types: an empty NOERROR.
      assert.equal(await code(r.resolveMx('v4only.example.test')), 'ENODATA');
      assert.equal(await code(r.resolveTxt('v4only.example.test')), 'ENODATA');
      assert.deepEqual(
        dns.queries().slice(-2).map((e) => e.type),
        ['MX', 'TXT'],
      );
    },
  );
});

test('set() changes the answer for the next query (DNS rebinding), delete() makes it NXDOMAIN', async () => {
  await withDns({ 'rebind.example.test': { a: ['127.0.0.1'], ttl: 0 } }, async (dns, r) => {
    assert.deepEqual(await r.resolve4('rebind.example.test', { ttl: true }), [{ address: '127.0.0.1', ttl: 0 }]);
    dns.set('rebind.example.test', { a: ['10.0.0.5'], ttl: 0 });
    assert.deepEqual(await r.resolve4('rebind.example.test', { ttl: true }), [{ address: '10.0.0.5', ttl: 0 }]);
    dns.set('rebind.example.test', { a: ['169.254.169.254'], aaaa: ['fd00::1'], ttl: 5 });
    assert.deepEqual(await r.resolve4('rebind.example.test', { ttl: true }), [{ address: '169.254.169.254', ttl: 5 }]);
    // Even with a TTL in the last answer, a fresh resolver sees a change at once (nothing caches in between).
    dns.set('rebind.example.test', { a: ['127.0.0.1'], ttl: 5 });
    assert.deepEqual(await resolverFor(dns).resolve4('rebind.example.test', { ttl: true }), [{ address: '127.0.0.1', ttl: 5 }]);
    dns.set('rebind.example.test', 'servfail');
    assert.equal(await code(resolverFor(dns).resolve4('rebind.example.test')), 'ESERVFAIL');
    dns.set('new.example.test', { aaaa: ['fd00::2'], ttl: 7 });
    assert.deepEqual(await r.resolve6('new.example.test', { ttl: true }), [{ address: 'fd00::2', ttl: 7 }]);
    dns.delete('new.example.test');
    assert.equal(await code(resolverFor(dns).resolve6('new.example.test')), 'ENOTFOUND');
    assert.ok(dns.queries().length >= 7, 'every lookup reached the server');
  });
});

test('bad input is refused; close() is idempotent', async () => {
  await assert.rejects(startTestDns({ 'x.test': { a: ['not-an-ip'], ttl: 1 } }), /not an IPv4 address/);
  await assert.rejects(startTestDns({ 'x.test': { aaaa: ['1.2.3.4'], ttl: 1 } }), /not an IPv6 address/);
  await assert.rejects(startTestDns({ 'x.test': { a: [], ttl: -1 } }), /ttl must be/);
  const dns = await startTestDns();
  await dns.close();
  await dns.close();
});

test('wire format: header flags, echoed question, compression pointer, IPv6 forms; malformed input ignored', async () => {
  // A hand-built query: id 0xbeef, RD, one question "A.b" type A class IN.
  const q = Buffer.from([0xbe, 0xef, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0x41, 1, 0x62, 0, 0, 1, 0, 1]);
  const res = dnsResponse(q, (name) => (name === 'a.b' ? { a: ['10.0.0.5'], ttl: 0x01020304 } : undefined))!;
  assert.equal(res.readUInt16BE(0), 0xbeef);
  assert.equal(res.readUInt16BE(2), 0x8580, 'QR AA RD RA, NOERROR');
  assert.deepEqual([res.readUInt16BE(4), res.readUInt16BE(6), res.readUInt16BE(8), res.readUInt16BE(10)], [1, 1, 0, 0]);
  assert.deepEqual(res.subarray(12, 21), q.subarray(12), 'question echoed as sent');
  assert.deepEqual([...res.subarray(21)], [0xc0, 0x0c, 0, 1, 0, 1, 1, 2, 3, 4, 0, 4, 10, 0, 0, 5]);
  const nx = dnsResponse(q, () => undefined)!;
  assert.equal(nx.readUInt16BE(2) & 0xf, 3);
  assert.equal(dnsResponse(Buffer.from([1, 2, 3]), () => undefined), null);
  assert.equal(dnsResponse(Buffer.from([0, 1, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0]), () => undefined), null, 'a response is not answered');
  assert.deepEqual([...ipv6Bytes('::')], new Array(16).fill(0));
  assert.equal(ipv6Bytes('2001:db8::1:0:0:1').toString('hex'), '20010db8000000000001000000000001');
  assert.equal(ipv6Bytes('::ffff:127.0.0.1').toString('hex'), '00000000000000000000ffff7f000001');
  assert.equal(ipv6Bytes('1:2:3:4:5:6:7:8').toString('hex'), '00010002000300040005000600070008');

  // Over UDP, garbage gets no answer and doesn't break the server.
  const dns = await startTestDns({ 'ok.test': { a: ['127.0.0.1'], ttl: 9 } });
  const sock = createSocket('udp4');
  try {
    await new Promise<void>((resolve) => sock.send(Buffer.from('garbage'), dns.port, '127.0.0.1', () => resolve()));
    const reply = new Promise<Buffer>((resolve) => sock.once('message', (m) => resolve(m)));
    const query = Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 2, 0x6f, 0x6b, 4, 0x74, 0x65, 0x73, 0x74, 0, 0, 1, 0, 1]);
    sock.send(query, dns.port, '127.0.0.1');
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no reply')), 2000).unref());
    const m = await Promise.race([reply, timeout]);
    assert.equal(m.readUInt16BE(0), 0x1234);
    assert.equal(m.readUInt16BE(6), 1);
    assert.deepEqual([...m.subarray(m.length - 4)], [127, 0, 0, 1]);
    assert.deepEqual(dns.queries().map((e) => e.name), ['ok.test']);
  } finally {
    sock.close();
    await dns.close();
  }
});

test('names by pattern, a zone SOA at its apex, and answers held back to count queries out at once', async () => {
  const names = numberedNames({ zone: 'broad.test', ttl: 120, nxdomainEvery: 3 });
  const dns = await startTestDns({}, { fallback: names.answer, zones: { 'broad.test': { minimum: 45 } }, delayMs: 20 });
  try {
    const r = resolverFor(dns);
    assert.deepEqual(await r.resolve4('h0.broad.test', { ttl: true }), [{ address: '127.0.0.1', ttl: 120 }]);
    assert.deepEqual(await r.resolve4('h300.broad.test'), ['127.0.1.45']);
    assert.equal(await code(r.resolve4('h2.broad.test')), 'ENOTFOUND', 'every third name does not exist');
    assert.equal(await code(r.resolve4('www.h0.broad.test')), 'ENOTFOUND', 'nor does a name off the pattern');
    const soa = await r.resolveSoa('broad.test');
    assert.equal(soa.minttl, 45);
    assert.equal(soa.nsname, 'ns.broad.test');
    assert.equal(await code(r.resolve4('broad.test')), 'ENODATA', 'the apex exists without an address');
    assert.equal(await code(r.resolveSoa('h0.broad.test')), 'ENODATA', 'only the apex has an SOA');
    await Promise.all(Array.from({ length: 10 }, (_, n) => r.resolve4(names.host(n)).catch(() => null)));
    assert.equal(dns.peakOutstanding(), 10, 'ten queries sent at once were all out at once');
  } finally {
    await dns.close();
  }
});

test('a negative answer carries the zone SOA in its authority section (RFC 2308)', () => {
  const query = Buffer.concat([Buffer.from([0, 7, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), Buffer.from('\x04gone\x05broad\x04test\x00', 'latin1'), Buffer.from([0, 1, 0, 1])]);
  const zone = { name: 'broad.test', minimum: 45, ttl: 60 };
  const reply = dnsResponse(query, () => undefined, () => zone)!;
  assert.equal(reply.readUInt16BE(2) & 0xf, 3, 'NXDOMAIN');
  assert.equal(reply.readUInt16BE(6), 0, 'no answers');
  assert.equal(reply.readUInt16BE(8), 1, 'one authority record');
  assert.equal(reply.readUInt32BE(reply.length - 4), 45, 'the SOA MINIMUM ends the record');
  const without = dnsResponse(query, () => undefined)!;
  assert.equal(without.readUInt16BE(8), 0, 'no zone, no SOA');
});
