/**
 * `npm run bench:dns`: what the cap on DNS lookups in flight (`--dns-max-in-flight`) buys when
 * a crawl meets thousands of new hosts at once. The project's DNS server answers DNS_NAMES
 * (default 20,000) names `h<N>.broad.test` over real UDP on loopback (every tenth NXDOMAIN,
 * its zone with an SOA); the crawler's DNS cache looks them all up at once, once for each cap
 * in DNS_CAPS (default 64,256,1024,10000), then again from the cache. Reported per cap:
 * lookups a second, answers lost (timeouts: the queries the flood pushed out of a socket's
 * buffer), the queries the server received, and how long the second pass took from the cache.
 */
import { DnsCache } from '../pipeline/adapters/dns-cache.js';
import { numberedNames, startTestDns } from '../testweb/index.js';

const NAMES = Number(process.env.DNS_NAMES ?? 20_000);
const CAPS = (process.env.DNS_CAPS ?? '64,256,1024,10000').split(',').map(Number);

async function once(cap: number): Promise<string> {
  const names = numberedNames({ zone: 'broad.test', ttl: 300, nxdomainEvery: 10 });
  // a millisecond per answer: a resolver on the machine or the LAN, not one across the world
  const dns = await startTestDns({}, { fallback: names.answer, zones: { 'broad.test': { minimum: 120 } }, delayMs: 1 });
  try {
    const cache = new DnsCache({ minTtlMs: 60_000, maxTtlMs: 3_600_000, negativeTtlMs: 30_000, maxInFlight: cap, servers: [`${dns.address}:${dns.port}`] });
    const codes = new Map<string, number>();
    let lost = 0; // names whose answer was not the server's: an address or NXDOMAIN
    const started = performance.now();
    await Promise.all(
      Array.from({ length: NAMES }, (_, n) =>
        cache.lookup(names.host(n)).then(
          () => names.expected(n) === 'nxdomain' && lost++,
          (e: { code: string }) => {
            codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
            if (e.code !== 'ENOTFOUND' || names.expected(n) !== 'nxdomain') lost++;
          },
        ),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const cachedStart = performance.now();
    await Promise.all(Array.from({ length: NAMES }, (_, n) => cache.lookup(names.host(n)).catch(() => undefined)));
    const cachedMs = performance.now() - cachedStart;
    const failures = [...codes].filter(([c]) => c !== 'ENOTFOUND').map(([c, n]) => `${c} ${n}`).join(', ') || 'none';
    return `${String(cap).padStart(6)} ${(NAMES / seconds).toFixed(0).padStart(10)} ${String(lost).padStart(6)} ${failures.padEnd(20)} ${String(dns.queries().length).padStart(8)} ${cachedMs.toFixed(0).padStart(10)}`;
  } finally {
    await dns.close();
  }
}

async function main() {
  console.log(`bench:dns: ${NAMES} names looked up at once (every tenth NXDOMAIN), once per cap on lookups in flight`);
  console.log(`${'cap'.padStart(6)} ${'lookups/s'.padStart(10)} ${'lost'.padStart(6)} ${'failures'.padEnd(20)} ${'queries'.padStart(8)} ${'cached ms'.padStart(10)}`);
  for (const cap of CAPS) console.log(await once(cap));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
