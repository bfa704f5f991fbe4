/**
 * `npm run bench:broad`: the open web's shape, many hosts with a few pages each. One `crawl run`
 * over the broad test web (testweb/broad-hosts.ts: 20,000 registrable domains × 5 pages, cross
 * links, 128 loopback addresses named by the web's DNS server) from one seed, `--scope open`,
 * robots.txt on, default politeness (1 s a host, 4 requests in flight an IP, adaptive delay):
 * the crawler's defaults, nothing turned off. Reported as `npm run bench` and `bench:long` do:
 * per window of 20,000 stored pages, pages/s, CPU per page (crawl + nats-server), peak RSS and
 * the machine probe; at the end KV and stream bytes per host, and whether peak RSS stayed flat
 * (last full window within 15 % of the first).
 *
 * A `crawl run` without `--scope` (before open scope existed) gets every domain's home page as a
 * seed instead, in a seeds file, and no sitemaps: the report says which it ran.
 *
 * Once every page is stored the crawl gets a minute to end by itself (`--until-idle`), then is
 * stopped: a host whose robots.txt keeps failing transiently is retried for 20 minutes before
 * its URLs end (the web's dead hosts end at once: NXDOMAIN, and refused connections).
 *
 * Every page of the web is within depth 5 of the seed by its shortest path, but a crawl gives a
 * URL the depth of the link it was first found by, and a domain-fair order finds many pages
 * first through a cross link deeper than their shortest path: at the default --max-depth 5
 * about one page in a thousand is then out of reach. The bench runs with --max-depth 10, so
 * every page of the web is in reach and "every page stored" is what ends it.
 *
 * The CPU target is against `npm run bench` on the same machine at the same time: one run of
 * its crawl is made first (BENCH_BROAD_REFERENCE=0 skips it), with the machine probe beside both.
 *
 * BENCH_BROAD_DOMAINS and BENCH_BROAD_WINDOW make it smaller for a quick check;
 * BENCH_CRAWL_ARGS adds `crawl run` flags, BENCH_NODE_ARGS node flags (`--cpu-prof`); BENCH_KEEP_OUT=1 keeps the crawl's output directory
 * (printed) for queries after the run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { startTestWeb } from '../testweb/index.js';
import { crawlProcessArgs } from '../cli/node-flags.js';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { freePort, startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { seriesOf, sumOf } from './metrics-text.js';
import { crawlCli, exited as exitOf } from './crawl-cli.js';
import { startMachineProbe } from './machine-probe.js';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { benchSeeds } from './bench-crawl.js';
import { runOnce } from './bench-run.js';
import { median } from './stats.js';
import { compareFirstAndLast, cpuMsPerPage, describeWindow, FLAT_WITHIN, scrapeCounters, watchCrawlWindows } from './crawl-windows.js';

const DOMAINS = Number(process.env.BENCH_BROAD_DOMAINS ?? 20_000);
const WINDOW = Number(process.env.BENCH_BROAD_WINDOW ?? 20_000);
const STOP_AFTER_ALL_STORED_MS = 60_000;
const MAX_DEPTH = 10;

/** KV operations so far: gets, and everything else (create, update, put, delete) */
function kvOperations(text: string): Record<string, number> {
  const kvReads = sumOf(text, 'crawler_kv_operation_seconds_count', (l) => l['op'] === 'get' || l['op'] === 'get_latest');
  const byBucketAndOp: Record<string, number> = {};
  for (const { labels, value } of seriesOf(text, 'crawler_kv_operation_seconds_count')) {
    const key = `kv ${labels['bucket']} ${labels['op']}`;
    byBucketAndOp[key] = (byBucketAndOp[key] ?? 0) + value;
  }
  return { ...byBucketAndOp, kvReads, kvWrites: sumOf(text, 'crawler_kv_operation_seconds_count') - kvReads };
}

/** `crawl-hosts get 2.1, crawl-hosts update 1.9, …`: each bucket's operations a page, most first. */
function kvOperationsByBucket(last: Record<string, number>, stored: number): string {
  return Object.entries(last)
    .filter(([key]) => key.startsWith('kv '))
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${key.slice(3)} ${(n / stored).toFixed(2)}`)
    .join(', ');
}

/** Bytes and messages held by each stream, KV buckets (KV_*) apart. */
async function storage(natsUrl: string): Promise<{ kv: Record<string, { bytes: number; keys: number }>; streams: Record<string, number> }> {
  const nc = await connectNats(natsUrl, 'bench-broad-storage');
  try {
    const jsm = await jetstreamManager(nc);
    const kv: Record<string, { bytes: number; keys: number }> = {};
    const streams: Record<string, number> = {};
    for await (const info of jsm.streams.list()) {
      const name = info.config.name;
      if (name.startsWith('KV_')) kv[name.slice(3)] = { bytes: Number(info.state.bytes), keys: Number(info.state.messages) };
      else streams[name] = Number(info.state.bytes);
    }
    return { kv, streams };
  } finally {
    await nc.close();
  }
}

/** `npm run bench`'s crawl once (200 hosts × 55 pages, delays off): its CPU ms a page (crawl + nats-server) and the machine probe. */
async function referenceCpu(): Promise<{ cpuMs: number; probeMs: number; pagesPerSecond: number } | null> {
  if (process.env.BENCH_BROAD_REFERENCE === '0') return null;
  const web = await startTestWeb({ hosts: 1, benchHosts: 200, benchPagesPerHost: 55, seed: 7, prerender: true });
  try {
    const r = await runOnce(web.port, benchSeeds(200));
    const ref = { cpuMs: (1000 * (r.crawlCpu + r.natsCpu)) / r.pages, probeMs: r.probeMs, pagesPerSecond: r.pages / r.seconds };
    console.log(`reference, npm run bench's crawl: ${r.pages} pages, ${ref.pagesPerSecond.toFixed(0)} pages/s, CPU ${ref.cpuMs.toFixed(1)} ms a page (crawl + nats-server), machine probe ${ref.probeMs.toFixed(1)} ms`);
    return ref;
  } finally {
    await web.close();
  }
}

function hasScopeFlag(): boolean {
  const r = spawnSync(process.execPath, crawlProcessArgs(['run', '--help']), { encoding: 'utf8' });
  return /--scope\b/.test(r.stdout);
}

async function main() {
  const reference = await referenceCpu();
  const web = await startTestWeb({ hosts: 1, broad: { domains: DOMAINS } });
  const broad = web.broad!;
  const total = DOMAINS * broad.options.pagesPerDomain;
  const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-broad-'));
  const server = await startEmbeddedServer(path.join(out, '.nats'));
  const metricsPort = await freePort();
  const open = hasScopeFlag();
  const seedArgs = open ? ['--scope', 'open', '--seed', broad.seedUrl()] : ['--seeds-file', path.join(out, 'seeds.txt'), '--no-sitemaps'];
  if (!open) writeFileSync(path.join(out, 'seeds.txt'), `${Array.from({ length: DOMAINS }, (_, i) => broad.url(i)).join('\n')}\n`);
  process.stdout.write(
    `bench:broad: ${total} pages (${DOMAINS} registrable domains × ${broad.options.pagesPerDomain} on ${broad.options.addresses} addresses), ` +
      `${open ? 'one seed, --scope open' : `no --scope in this build: ${DOMAINS} seeds (every home page), --no-sitemaps`}; robots.txt on, default politeness, --max-depth ${MAX_DEPTH}; windows of ${WINDOW}\n`,
  );
  const probe = startMachineProbe();
  try {
    const args = ['run', '--out', out, ...broad.crawlArgs(), ...seedArgs, '--max-depth', String(MAX_DEPTH), '--until-idle', '--no-compact', '--metrics-port', String(metricsPort), ...(process.env.BENCH_CRAWL_ARGS ?? '').split(' ').filter(Boolean)];
    const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const child = crawlCli(args, { NATS_URL: server.url }, { stdio: ['ignore', 'ignore', 'pipe'], nodeArgs });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-5000)));
    const exitCode = exitOf(child);
    let stopAsked = false;
    const watch = await watchCrawlWindows({
      crawlPid: child.pid!,
      natsPid: server.pid,
      exited: exitCode,
      windowPages: WINDOW,
      total,
      probe,
      read: () => scrapeCounters(metricsPort, kvOperations),
      report: (i, stored, w) => console.log(describeWindow(i, stored, w)),
      // every page stored: what is left is hosts that never answer (a robots.txt that keeps
      // failing transiently is retried until --robots-give-up-ms, 20 min), which is not
      // throughput; the crawl is asked to stop (SIGTERM: it finishes what is in flight and
      // flushes its output)
      onSample: (_c, w) => {
        if (w.totalReachedAt === null || stopAsked || performance.now() - w.totalReachedAt < STOP_AFTER_ALL_STORED_MS) return;
        stopAsked = true;
        console.log(`every page stored ${STOP_AFTER_ALL_STORED_MS / 1000} s ago and the crawl not idle: stopping it`);
        child.kill('SIGTERM');
      },
    });
    const code = await exitCode;
    if (code !== 0 && !stopAsked) throw new Error(`crawl run exited ${code}: ${stderr}`);
    // throughput up to the last page stored, not the wait for hosts that never answer
    const seconds = ((watch.totalReachedAt ?? performance.now()) - watch.startedAt) / 1000;
    const { kv, streams } = await storage(server.url);
    const db = await openOutputDatabase(out);
    const res = await db.run('SELECT count(*), count(DISTINCT url_host_registered_domain) FROM pages');
    await db.close();
    console.log(`\noutput: ${Number(res.rows[0]![0])} pages of ${Number(res.rows[0]![1])} registrable domains (the web has ${total} of ${DOMAINS})`);
    const stored = watch.windows.reduce((s, w) => s + w.delta.stored, 0);
    const rate = stored / seconds;
    const cpu = cpuMsPerPage(watch.windows);
    const cpuRatio = reference ? cpu / reference.cpuMs : null;
    const probeMs = median(watch.windows.map((w) => w.probeMs));
    console.log(
      `${stored} of ${total} pages in ${seconds.toFixed(0)} s (${rate.toFixed(0)} pages/s), peak RSS ${watch.overallPeakRssMb.toFixed(0)} MB, CPU ${cpu.toFixed(1)} ms a page (crawl + nats-server` +
        `${reference ? `; ${cpuRatio!.toFixed(2)}× npm run bench's ${reference.cpuMs.toFixed(1)}; machine probe ${probeMs.toFixed(1)} ms here, ${reference.probeMs.toFixed(1)} ms there` : ''})`,
    );
    printStorage(kv, streams, DOMAINS, stored);
    const last = watch.last;
    if (last) console.log(`KV operations per page: ${(last['kvWrites']! / stored).toFixed(1)} writes + ${(last['kvReads']! / stored).toFixed(1)} reads (${kvOperationsByBucket(last, stored)})`);
    const rssRatio = compareFirstAndLast(watch.windows, WINDOW);
    const verdict = (ok: boolean) => (ok ? 'met' : 'missed');
    console.log(
      `targets: >= 150 pages/s: ${verdict(rate >= 150)}; CPU a page <= 1.3× bench's: ${cpuRatio === null ? 'not measured (BENCH_BROAD_REFERENCE=0)' : verdict(cpuRatio <= 1.3)}; ` +
        `peak RSS <= 600 MB: ${verdict(watch.overallPeakRssMb <= 600)}; flat within ${FLAT_WITHIN * 100} %: ${rssRatio === null ? 'fewer than two full windows' : verdict(Math.abs(rssRatio - 1) <= FLAT_WITHIN)}`,
    );
  } finally {
    probe.stop();
    await server.stop();
    await web.close();
    if (process.env.BENCH_KEEP_OUT === '1') console.log(`output kept in ${out} (the nats-server's store in ${path.join(out, '.nats')})`);
    else rmSync(out, { recursive: true, force: true });
  }
}

function printStorage(kv: Record<string, { bytes: number; keys: number }>, streams: Record<string, number>, hosts: number, stored: number): void {
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const kvBytes = sum(Object.values(kv).map((b) => b.bytes));
  const streamBytes = sum(Object.values(streams));
  console.log(`KV: ${(kvBytes / hosts).toFixed(0)} bytes per host (${Object.entries(kv).map(([name, b]) => `${name} ${(b.bytes / hosts).toFixed(0)} B, ${b.keys} keys`).join('; ')})`);
  console.log(`streams: ${(streamBytes / hosts / 1024).toFixed(1)} KB per host, ${(streamBytes / stored / 1024).toFixed(1)} KB per page (${Object.entries(streams).map(([name, b]) => `${name} ${(b / hosts / 1024).toFixed(1)} KB`).join('; ')})`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
