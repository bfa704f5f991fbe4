/**
 * What one host costs in each process's memory: `node --expose-gc dist/bench/host-state-cost.js [N]`
 * (default N = 20,000 hosts). Each part runs the real code over N hosts of the broad test web
 * and reports the heap it holds afterwards, per host (heap used after a full GC, before and
 * after):
 *
 * - the gate's timetable (HostScheduler): N hosts with a turn to come;
 * - the gate's robots.txt cache (RobotsCache): N hosts' rules fetched and stored;
 * - the DNS cache: N names resolved (against the web's DNS server, in another process);
 * - the HTTP client: one request to each of N origins, pools and sockets while their
 *   connections are kept alive, and again once the keep-alive time has passed.
 *
 * KV bytes per host come from `npm run bench:broad` (the buckets' stream sizes after a crawl).
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { HostScheduler } from '../stages/politeness-gate/host-scheduler.js';
import { RobotsCache } from '../stages/shared/robots/robots-cache.js';
import type { RobotsRecord } from '../stages/shared/robots/robots-rules.js';
import { DnsCache } from '../pipeline/adapters/dns-cache.js';
import { createHttpClient } from '../pipeline/adapters/http/client.js';
import type { KvStore } from '../ports/kv.js';
import type { BackgroundContext } from '../pipeline/stage.js';
import { BROAD_ROBOTS } from '../testweb/broad-hosts.js';

const N = Number(process.argv[2] ?? 20_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function heapUsed(): number {
  for (let i = 0; i < 3; i++) gc!();
  return process.memoryUsage().heapUsed;
}

/** open file descriptors of this process: its sockets, besides a fixed few */
const openFds = () => readdirSync('/proc/self/fd').length;

function report(what: string, before: number, after: number, hosts: number, extra = ''): void {
  console.log(`| ${what} | ${hosts} | ${((after - before) / 1024 / 1024).toFixed(1)} MB | ${Math.round((after - before) / hosts)} B |${extra ? ` ${extra}` : ''}`);
}

/** The broad web (N domains) in a child process: its port, DNS server and domain names. */
async function startBroadWeb(domains: number): Promise<{ port: number; dns: string; names: string[]; stop(): void }> {
  const main = fileURLToPath(new URL('../cli/main.js', import.meta.url));
  const child = spawn(process.execPath, [main, 'testweb', '--hosts', '1', '--broad', String(domains)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  let port = 0;
  for await (const line of lines) {
    const p = /listening on 127\.0\.0\.1:(\d+)/.exec(line);
    if (p) port = Number(p[1]);
    const d = /--dns-server (\S+)/.exec(line);
    if (d) {
      const digits = Math.max(5, String(domains - 1).length);
      const names = Array.from({ length: domains }, (_, i) => `d${String(i).padStart(digits, '0')}.test`);
      return { port, dns: d[1]!, names, stop: () => child.kill() };
    }
  }
  throw new Error('the broad web did not start');
}

/** Resolves every name, 50 at a time (the test DNS server is one UDP socket in a busy process), retrying a timeout. */
async function resolveAll(dns: DnsCache, names: string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(
      names.slice(i, i + 50).map(async (n) => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await dns.lookup(n);
          } catch (err) {
            if (attempt >= 3) throw err;
          }
        }
      }),
    );
  }
}

async function timetable(names: string[]): Promise<void> {
  const before = heapUsed();
  const scheduler = new HostScheduler({} as BackgroundContext, 0);
  const later = Date.now() + 3_600_000;
  for (const host of names) scheduler.notify(host, later);
  report("gate timetable (HostScheduler), hosts with a turn to come", before, heapUsed(), names.length, `(${scheduler.size} entries)`);
}

async function robots(names: string[]): Promise<void> {
  // a bucket that keeps nothing: only the cache's own memory is measured
  const store = { get: async () => null, put: async () => 1 } as unknown as KvStore;
  const before = heapUsed();
  const cache = new RobotsCache(store, 'crawler', { maxTtlMs: 86_400_000, errorRetryMs: 60_000 });
  const now = Date.now();
  for (const host of names) {
    const record: RobotsRecord = { kind: 'rules', body: BROAD_ROBOTS, status: 200, fetchedAt: now, reason: 'http 200' };
    await cache.put(host, record);
    await cache.lookup(host, now);
  }
  const held = heapUsed();
  report(`gate robots.txt cache (RobotsCache), rules fetched; ${cache.size} hosts held`, before, held, names.length, `(${Math.round((held - before) / Math.max(1, cache.size))} B per host held; at most ${RobotsCache.LOCAL_MAX} held)`);
}

async function dnsCache(names: string[], server: string): Promise<void> {
  const before = heapUsed();
  const dns = new DnsCache({ minTtlMs: 60_000, maxTtlMs: 3_600_000, negativeTtlMs: 60_000, servers: [server] });
  await resolveAll(dns, names);
  report('DNS cache, names resolved', before, heapUsed(), names.length, `(${dns.stats().resolved} names resolved by DNS)`);
}

async function httpPools(names: string[], port: number, server: string): Promise<void> {
  const dns = new DnsCache({ minTtlMs: 60_000, maxTtlMs: 3_600_000, negativeTtlMs: 60_000, servers: [server] });
  await resolveAll(dns, names);
  const keepAliveMs = 4000;
  const client = createHttpClient({ userAgent: 'host-state-cost/1.0', resolve: [], dns, allowNetworks: ['127.0.0.0/8'], keepAliveMs });
  const get = (n: string) => client.request({ url: `http://${n}:${port}/robots.txt`, connectTimeoutMs: 5000, headersTimeoutMs: 5000, totalTimeoutMs: 10_000, maxBodyBytes: 1 << 20 });
  // the first requests load and compile the client's code: not a host's cost
  const warm = Math.min(500, Math.floor(names.length / 10));
  await Promise.all(names.slice(0, warm).map(get));
  await new Promise((r) => setTimeout(r, keepAliveMs + 2000));
  const measured = names.slice(warm);
  const fdsBefore = openFds();
  const before = heapUsed();
  // all at once, 200 in flight: every origin's connection is still kept alive at the end
  let failed = 0;
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: 200 }, async () => {
      while (next < measured.length) await get(measured[next++]!).catch(() => (failed += 1));
    }),
  );
  const requestedIn = Date.now() - started;
  const open = openFds() - fdsBefore;
  const held = heapUsed();
  report(`HTTP client, one request per origin, ${open} connections still kept alive`, before, held, Math.max(1, open), `(per open connection; ${measured.length} origins in ${requestedIn} ms, ${failed} failed)`);
  await new Promise((r) => setTimeout(r, keepAliveMs + 2000));
  report(`HTTP client, ${keepAliveMs + 2000} ms later, ${openFds() - fdsBefore} connections open`, before, heapUsed(), measured.length, '(per origin requested)');
  await client.close();
}

async function main() {
  console.log(`host-state-cost: ${N} hosts of the broad test web\n`);
  console.log('| what | hosts | heap held | per host |');
  console.log('|---|---|---|---|');
  const web = await startBroadWeb(N);
  try {
    await timetable(web.names);
    await robots(web.names);
    await dnsCache(web.names, web.dns);
    await httpPools(web.names, web.port, web.dns);
  } finally {
    web.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
