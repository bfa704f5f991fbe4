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
 * BENCH_BROAD_DOMAINS and BENCH_BROAD_WINDOW make it smaller for a quick check;
 * BENCH_CRAWL_ARGS adds `crawl run` flags.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { startTestWeb } from '../testweb/index.js';
import { crawlProcessArgs } from '../cli/node-flags.js';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { cpuSeconds, rssMb } from './proc-stats.js';
import { freePort, startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { sumOf } from './metrics-text.js';
import { crawlCli, exited as exitOf } from './crawl-cli.js';
import { startMachineProbe } from './machine-probe.js';
import { median } from './stats.js';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';

const DOMAINS = Number(process.env.BENCH_BROAD_DOMAINS ?? 20_000);
const WINDOW = Number(process.env.BENCH_BROAD_WINDOW ?? 20_000);
const STOP_AFTER_ALL_STORED_MS = 60_000;
/** `npm run bench`'s CPU a page (crawl + nats-server), docs/performance.md, for the 1.3× target */
const BENCH_CPU_MS = 8.1;

interface Window {
  pages: number;
  fetched: number;
  seconds: number;
  peakRssMb: number;
  crawlCpu: number;
  natsCpu: number;
  probeMs: number;
}

interface Progress {
  stored: number;
  fetched: number;
  /** KV operations so far: gets, and everything else (create, update, put, delete) */
  kvReads: number;
  kvWrites: number;
}

async function progress(metricsPort: number): Promise<Progress | null> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const kvReads = sumOf(text, 'crawler_kv_operation_seconds_count', (l) => l['op'] === 'get' || l['op'] === 'get_latest');
    return { stored: sumOf(text, 'crawler_persist_rows_total', (l) => l['outcome'] === 'page'), fetched: sumOf(text, 'crawler_fetch_responses_total'), kvReads, kvWrites: sumOf(text, 'crawler_kv_operation_seconds_count') - kvReads };
  } catch {
    return null;
  }
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

/** whether this build's `crawl run` has `--scope` */
function hasScopeFlag(): boolean {
  const r = spawnSync(process.execPath, crawlProcessArgs(['run', '--help']), { encoding: 'utf8' });
  return /--scope\b/.test(r.stdout);
}

async function main() {
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
      `${open ? 'one seed, --scope open' : `no --scope in this build: ${DOMAINS} seeds (every home page), --no-sitemaps`}; robots.txt on, default politeness; windows of ${WINDOW}\n`,
  );
  const probe = startMachineProbe();
  try {
    const args = ['run', '--out', out, ...broad.crawlArgs(), ...seedArgs, '--until-idle', '--no-compact', '--metrics-port', String(metricsPort), ...(process.env.BENCH_CRAWL_ARGS ?? '').split(' ').filter(Boolean)];
    const child = crawlCli(args, { NATS_URL: server.url }, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-5000)));
    const exitCode = exitOf(child);
    const pid = child.pid!;
    const windows: Window[] = [];
    const started = performance.now();
    let mark = { at: started, pages: 0, fetched: 0, crawlCpu: 0, natsCpu: cpuSeconds(server.pid) ?? 0 };
    let peak = 0;
    let overallPeak = 0;
    let done = false;
    let stopAsked = false;
    let lastProgress: Progress | null = null;
    /** when persist had counted every page of the web */
    let allStoredAt: number | null = null;
    void exitCode.then(() => (done = true));
    while (!done) {
      await new Promise((r) => setTimeout(r, 500));
      const rss = rssMb(pid);
      peak = Math.max(peak, rss);
      overallPeak = Math.max(overallPeak, rss);
      const asked = { at: performance.now(), crawlCpu: cpuSeconds(pid) ?? mark.crawlCpu, natsCpu: cpuSeconds(server.pid) ?? mark.natsCpu };
      const p = await progress(metricsPort);
      if (p !== null) lastProgress = p;
      if (p !== null && p.stored >= total) allStoredAt ??= performance.now();
      // every page stored: what is left is hosts that never answer (a robots.txt that keeps
      // failing transiently is retried until --robots-give-up-ms, 20 min), which is not throughput; the
      // crawl is asked to stop (SIGTERM: it finishes what is in flight and flushes its output)
      if (allStoredAt !== null && performance.now() - allStoredAt > STOP_AFTER_ALL_STORED_MS && !stopAsked) {
        stopAsked = true;
        process.stdout.write(`every page stored ${STOP_AFTER_ALL_STORED_MS / 1000} s ago and the crawl not idle: stopping it\n`);
        child.kill('SIGTERM');
      }
      // a window closes at every WINDOW pages, and once at the total (persist's count may pass it: a redelivered page is counted again)
      if (p === null || p.stored <= mark.pages || (p.stored - mark.pages < WINDOW && (p.stored < total || mark.pages >= total))) continue;
      const w: Window = { pages: p.stored - mark.pages, fetched: p.fetched - mark.fetched, seconds: (asked.at - mark.at) / 1000, peakRssMb: peak, crawlCpu: asked.crawlCpu - mark.crawlCpu, natsCpu: asked.natsCpu - mark.natsCpu, probeMs: median(probe.take()) };
      windows.push(w);
      process.stdout.write(`${formatWindow(windows.length, p.stored, w)}\n`);
      mark = { ...asked, pages: p.stored, fetched: p.fetched };
      peak = 0;
    }
    // a crawl that ended before persist's count reached the total (a page missing) closes its last window here
    if (lastProgress !== null && lastProgress.stored > mark.pages) {
      const p: Progress = lastProgress;
      const w: Window = { pages: p.stored - mark.pages, fetched: p.fetched - mark.fetched, seconds: (performance.now() - mark.at) / 1000, peakRssMb: peak, crawlCpu: mark.crawlCpu, natsCpu: mark.natsCpu, probeMs: median(probe.take()) };
      // the process is gone: its CPU since the last window is not known, so the window says none
      w.crawlCpu = 0;
      w.natsCpu = 0;
      windows.push(w);
      process.stdout.write(`${formatWindow(windows.length, p.stored, w)} (the crawl ended: CPU not read)\n`);
      mark = { ...mark, pages: p.stored, fetched: p.fetched };
    }
    const code = await exitCode;
    if (code !== 0 && !stopAsked) throw new Error(`crawl run exited ${code}: ${stderr}`);
    // throughput up to the last page stored, not the wait for hosts that never answer
    const seconds = ((allStoredAt ?? performance.now()) - started) / 1000;
    const { kv, streams } = await storage(server.url);
    const db = await openOutputDatabase(out);
    const res = await db.run('SELECT count(*), count(DISTINCT url_host_registered_domain) FROM pages');
    await db.close();
    console.log(`\noutput: ${Number(res.rows[0]![0])} pages of ${Number(res.rows[0]![1])} registrable domains (the web has ${total} of ${DOMAINS})`);
    printSummary(windows, { stored: mark.pages, total, seconds, overallPeak, kv, streams, hosts: DOMAINS });
    if (lastProgress) console.log(`KV operations per page: ${(lastProgress.kvWrites / mark.pages).toFixed(1)} writes + ${(lastProgress.kvReads / mark.pages).toFixed(1)} reads (npm run bench: 11.6 + 3.4)`);
  } finally {
    probe.stop();
    await server.stop();
    await web.close();
    rmSync(out, { recursive: true, force: true });
  }
}

function formatWindow(i: number, pages: number, w: Window): string {
  return (
    `window ${String(i).padStart(2)} (to ${pages} pages): ${(w.pages / w.seconds).toFixed(0)} pages/s (${w.fetched} responses), peak RSS ${w.peakRssMb.toFixed(0)} MB, ` +
    `CPU per page ${((1000 * w.crawlCpu) / w.pages).toFixed(1)} ms crawl + ${((1000 * w.natsCpu) / w.pages).toFixed(1)} ms nats-server, machine probe ${w.probeMs.toFixed(1)} ms`
  );
}

function printSummary(windows: Window[], t: { stored: number; total: number; seconds: number; overallPeak: number; kv: Record<string, { bytes: number; keys: number }>; streams: Record<string, number>; hosts: number }): void {
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  // over the windows whose CPU was read (not a last one closed after the crawl ended)
  const measured = windows.filter((w) => w.crawlCpu > 0);
  const cpu = (sum(measured.map((w) => w.crawlCpu + w.natsCpu)) * 1000) / sum(measured.map((w) => w.pages));
  const rate = t.stored / t.seconds;
  console.log(`\n${t.stored} of ${t.total} pages in ${t.seconds.toFixed(0)} s (${rate.toFixed(0)} pages/s), peak RSS ${t.overallPeak.toFixed(0)} MB, CPU ${cpu.toFixed(1)} ms a page (crawl + nats-server; ${(cpu / BENCH_CPU_MS).toFixed(2)}× npm run bench's ${BENCH_CPU_MS})`);
  const kvBytes = sum(Object.values(t.kv).map((b) => b.bytes));
  const streamBytes = sum(Object.values(t.streams));
  console.log(`KV: ${(kvBytes / t.hosts).toFixed(0)} bytes per host (${Object.entries(t.kv).map(([name, b]) => `${name} ${(b.bytes / t.hosts).toFixed(0)} B, ${b.keys} keys`).join('; ')})`);
  console.log(`streams: ${(streamBytes / t.hosts / 1024).toFixed(1)} KB per host, ${(streamBytes / t.stored / 1024).toFixed(1)} KB per page (${Object.entries(t.streams).map(([name, b]) => `${name} ${(b / t.hosts / 1024).toFixed(1)} KB`).join('; ')})`);
  const full = windows.filter((w) => w.pages >= WINDOW * 0.9);
  const first = full[0];
  const last = full[full.length - 1];
  if (first && last && full.length > 1) {
    const rss = last.peakRssMb / first.peakRssMb;
    console.log(`last full window / first: pages/s ${(last.pages / last.seconds / (first.pages / first.seconds)).toFixed(2)}, peak RSS ${rss.toFixed(2)} (${Math.abs(rss - 1) <= 0.15 ? 'flat within 15 %' : 'NOT flat within 15 %'}); machine probe ${(last.probeMs / first.probeMs).toFixed(2)}`);
  }
  console.log(`targets: >= 150 pages/s: ${rate >= 150 ? 'met' : 'missed'}; CPU a page <= 1.3× bench's: ${cpu <= 1.3 * BENCH_CPU_MS ? 'met' : 'missed'}; peak RSS <= 600 MB: ${t.overallPeak <= 600 ? 'met' : 'missed'}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
