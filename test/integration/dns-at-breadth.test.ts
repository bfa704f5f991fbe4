/**
 * The DNS cache at breadth, against the project's DNS server over real UDP on loopback:
 * thousands of names each asked once within its TTL, negative answers kept for the zone's SOA
 * minimum (RFC 2308) and failures for less, never more lookups out than the cap, and a cache
 * that stays within its size. The cache's clock is a fake one, so TTLs pass without waiting.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DnsCache, DnsLookupError, type DnsCacheOptions } from '../../pipeline/adapters/dns-cache.js';
import { numberedNames, startTestDns, type DnsQueryRecord, type TestDns, type TestDnsOptions } from '../../testweb/index.js';

const NAMES = 3000;
const CAP = 32;
const names = numberedNames({ zone: 'broad.test', ttl: 300, nxdomainEvery: 10, servfailEvery: 25 });
const kind = (n: number) => {
  const e = names.expected(n);
  return typeof e === 'string' ? e : 'address';
};

async function withDns(options: TestDnsOptions, body: (dns: TestDns) => Promise<void>): Promise<void> {
  const dns = await startTestDns({}, options);
  try {
    await body(dns);
  } finally {
    await dns.close();
  }
}

function cacheFor(dns: TestDns, clock: { now: number }, opts: Partial<DnsCacheOptions> = {}): DnsCache {
  return new DnsCache({ minTtlMs: 0, maxTtlMs: 3_600_000, negativeTtlMs: 1000, negativeMaxTtlMs: 3_600_000, failureTtlMs: 5000, maxInFlight: CAP, servers: [`${dns.address}:${dns.port}`], now: () => clock.now, ...opts });
}

/** Looks every name up at once; what each gave: an address or an error code. */
async function lookAll(cache: DnsCache, count = NAMES): Promise<string[]> {
  const all = Array.from({ length: count }, (_, n) =>
    cache.lookup(names.host(n)).then(
      (a) => a.join(','),
      (e: unknown) => (e instanceof DnsLookupError ? e.code : `unexpected ${String(e)}`),
    ),
  );
  return Promise.all(all);
}

/**
 * The queries the server received, a query resent with its ID counted once: the resolver
 * resends one whose answer is late (a loaded machine), and that is the same question, not
 * the cache asking again.
 */
function distinctQueries(dns: TestDns): DnsQueryRecord[] {
  const seen = new Set<string>();
  return dns.queries().filter((q) => {
    const key = `${q.type} ${q.name} ${q.id}`;
    return !seen.has(key) && seen.add(key);
  });
}

/** The names (by number) the server was asked an A question for, in order. */
function askedA(dns: TestDns): number[] {
  return distinctQueries(dns)
    .filter((q) => q.type === 'A')
    .map((q) => Number(/^h(\d+)\./.exec(q.name)?.[1] ?? -1));
}

describe('DNS at breadth', () => {
  it(`${NAMES} names: each asked once within its TTL, negatives for the SOA minimum, failures briefly, never more than ${CAP} lookups out`, async () => {
    await withDns({ fallback: names.answer, zones: { 'broad.test': { minimum: 120 } }, delayMs: 2 }, async (dns) => {
      const clock = { now: 1_000_000 };
      const cache = cacheFor(dns, clock);
      const first = lookAll(cache);
      assert.equal(cache.stats().queued, NAMES - CAP, 'all but the cap wait for a slot');
      const answers = await first;
      for (let n = 0; n < NAMES; n++) {
        const expected = names.expected(n);
        const want = expected === 'nxdomain' ? 'ENOTFOUND' : expected === 'servfail' ? 'ESERVFAIL' : expected.a!.join(',');
        assert.equal(answers[n], want, names.host(n));
      }
      // each lookup asks A and AAAA at once (and a negative one the zone's SOA): 2 queries per slot
      assert.ok(dns.peakOutstanding() <= 2 * CAP, `the server had ${dns.peakOutstanding()} queries out at once; the cap allows ${2 * CAP}`);
      assert.ok(dns.peakOutstanding() >= CAP, `the cap was used (${dns.peakOutstanding()} at once)`);
      const once = askedA(dns).filter((n) => kind(n) !== 'servfail');
      assert.equal(once.length, new Set(once).size, 'no name that answered was asked twice');
      assert.equal(new Set(askedA(dns)).size, NAMES, 'every name was asked');
      const soa = distinctQueries(dns).filter((q) => q.type === 'SOA');
      assert.deepEqual(
        soa.map((q) => q.name),
        ['broad.test'],
        "the zone's SOA is asked once for all its missing names",
      );
      const s = cache.stats();
      assert.equal(s.resolved, NAMES);
      assert.equal(s.inFlight, 0);
      assert.equal(s.queued, 0);
      assert.equal(s.entries, NAMES);

      const pass = async (seconds: number) => {
        clock.now = 1_000_000 + seconds * 1000;
        dns.clearQueries();
        assert.deepEqual(await lookAll(cache), answers, `the same answers at +${seconds} s`);
        return new Set(askedA(dns));
      };
      assert.equal((await pass(4)).size, 0, 'within every TTL nothing is asked');
      const hits = cache.stats();
      assert.equal(hits.hits + hits.negativeHits, NAMES);
      assert.equal(hits.negativeHits, answers.filter((a) => a.startsWith('E')).length);

      const servfailAgain = await pass(100);
      assert.deepEqual([...servfailAgain].sort((a, b) => a - b), [...Array(NAMES).keys()].filter((n) => kind(n) === 'servfail'), 'at +100 s only the SERVFAIL names (kept 5 s) are asked again');
      const nxAgain = await pass(130);
      assert.deepEqual(
        [...nxAgain].sort((a, b) => a - b),
        [...Array(NAMES).keys()].filter((n) => kind(n) !== 'address'),
        "at +130 s the NXDOMAIN names (kept for the zone's SOA minimum, 120 s) are asked again too",
      );
      assert.equal((await pass(301)).size, NAMES, 'past the 300 s TTL every name is asked again');
      assert.ok(dns.peakOutstanding() <= 2 * CAP);
    });
  });

  it('a negative answer without an SOA is kept the default time; an SOA minimum is clamped to [failure TTL, negative max]', async () => {
    await withDns({ fallback: (name) => (name.startsWith('gone.') ? 'nxdomain' : undefined), zones: { 'long.test': { minimum: 86_400 }, 'zero.test': { minimum: 0 } } }, async (dns) => {
      const clock = { now: 5_000_000 };
      const cache = cacheFor(dns, clock, { negativeTtlMs: 30_000, negativeMaxTtlMs: 600_000, failureTtlMs: 2000 });
      const askedFor = (name: string) => distinctQueries(dns).filter((q) => q.name === name && q.type === 'A').length;
      const keptFor = async (name: string, within: number, past: number) => {
        const start = clock.now;
        await assert.rejects(cache.lookup(name), { code: 'ENOTFOUND' });
        clock.now = start + within;
        await assert.rejects(cache.lookup(name), { code: 'ENOTFOUND' });
        assert.equal(askedFor(name), 1, `${name}: kept ${within} ms`);
        clock.now = start + past;
        await assert.rejects(cache.lookup(name), { code: 'ENOTFOUND' });
        assert.equal(askedFor(name), 2, `${name}: not kept ${past} ms`);
      };
      await keptFor('gone.nozone.test', 29_000, 31_000); // no SOA anywhere: the default
      await keptFor('gone.long.test', 599_000, 601_000); // a day's minimum, held to the negative max
      await keptFor('gone.zero.test', 1900, 2100); // a zero minimum, kept the failure TTL at least
    });
  });

  it('the cache keeps at most maxEntries names, the least recently used leaving first, and expired ones leave', async () => {
    await withDns({ fallback: names.answer }, async (dns) => {
      const clock = { now: 9_000_000 };
      const cache = cacheFor(dns, clock, { maxEntries: 500 });
      await lookAll(cache, 2000);
      assert.equal(cache.stats().entries, 500);
      dns.clearQueries();
      // the last 500 looked up are the ones kept (their answers came back in order: one at a time per slot)
      const recent = Array.from({ length: 2000 }, (_, n) => n).slice(-400);
      for (const n of recent) await cache.lookup(names.host(n)).catch(() => undefined);
      assert.equal(askedA(dns).length, 0, 'recent names are still cached');
      await cache.lookup(names.host(0));
      assert.deepEqual(askedA(dns), [0], 'the oldest was evicted');
      clock.now += 3_600_000; // past every TTL, and past the once-a-minute sweep
      await cache.lookup(names.host(1));
      assert.equal(cache.stats().entries, 1, 'expired entries left at the sweep');
    });
  });
});
