/**
 * `npm run bench:long`: does a crawl's cost grow with its size? One `crawl run` of 200,000
 * pages (200 bench hosts × 1,000 pages, delays off, the same crawl as `npm run bench`),
 * reported per window of 20,000 stored pages: pages/s, peak RSS, CPU per page (crawl and
 * nats-server), and at the end the stream storage per page. A crawl whose per-URL state
 * leaked into memory, or whose KV or stream costs grew with their size, shows as a trend
 * from the first window to the last.
 *
 * BENCH_LONG_PAGES_PER_HOST and BENCH_LONG_WINDOW make it smaller for a quick check. The crawl
 * runs with --no-compact: the merge of the output at the end is not the crawl's growth.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb } from '../testweb/index.js';
import { cpuSeconds, rssMb } from './proc-stats.js';
import { freePort, startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { streamTraffic } from './stream-traffic.js';
import { sumOf } from './metrics-text.js';
import { benchSeeds, spawnBenchCrawl } from './bench-crawl.js';
import { startMachineProbe } from './machine-probe.js';
import { median } from './stats.js';

const HOSTS = 200;
const PAGES_PER_HOST = Number(process.env.BENCH_LONG_PAGES_PER_HOST ?? 1000);
const WINDOW = Number(process.env.BENCH_LONG_WINDOW ?? 20_000);

interface Window {
  pages: number;
  /** responses fetched in the window (fetch may run ahead of storing) */
  fetched: number;
  /** new URLs the gate queued for their hosts in the window: the intake's load */
  queued: number;
  seconds: number;
  peakRssMb: number;
  crawlCpu: number;
  natsCpu: number;
  /** the machine probe's median in the window, ms (machine-probe.ts): higher is a slower machine */
  probeMs: number;
}

/**
 * Pages the crawl's persist stage has taken (`crawler_persist_rows_total{outcome="page"}`),
 * responses fetch has had (`crawler_fetch_responses_total`) and URLs the gate queued
 * (`crawler_politeness_gate_urls_total{outcome="queued"}`), or null when unreadable.
 */
async function progress(metricsPort: number): Promise<{ stored: number; fetched: number; queued: number } | null> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return {
      stored: sumOf(text, 'crawler_persist_rows_total', (l) => l['outcome'] === 'page'),
      fetched: sumOf(text, 'crawler_fetch_responses_total'),
      queued: sumOf(text, 'crawler_politeness_gate_urls_total', (l) => l['outcome'] === 'queued'),
    };
  } catch {
    return null;
  }
}

/** When a scrape was asked for, and the two processes' CPU seconds then. */
interface Sample {
  at: number;
  crawlCpu: number;
  natsCpu: number;
}

async function main() {
  const total = HOSTS * PAGES_PER_HOST;
  const web = await startTestWeb({ hosts: 1, benchHosts: HOSTS, benchPagesPerHost: PAGES_PER_HOST, seed: 7 });
  const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-long-'));
  const server = await startEmbeddedServer(path.join(out, '.nats'));
  const metricsPort = await freePort();
  process.stdout.write(`bench:long: ${total} pages (${HOSTS} hosts × ${PAGES_PER_HOST}), windows of ${WINDOW}\n`);
  const probe = startMachineProbe();
  try {
    const crawl = spawnBenchCrawl({ out, webPort: web.port, natsUrl: server.url, metricsPort, seeds: benchSeeds(HOSTS), extraArgs: ['--no-compact'] });
    const pid = crawl.child.pid!;
    const windows: Window[] = [];
    const started = performance.now();
    let mark: Sample & { pages: number; fetched: number; queued: number } = { at: started, pages: 0, fetched: 0, queued: 0, crawlCpu: 0, natsCpu: cpuSeconds(server.pid) ?? 0 };
    let peak = 0;
    let overallPeak = 0;
    let exited = false;
    void crawl.exited.then(() => (exited = true));
    // `asked`: the time and CPU when the scrape was asked for, which is when the crawl read its
    // counters (prom-client reads them all as the scrape begins); an answer can take seconds
    // (a gauge that scans every busy host), and the pages it counts are those of its start
    const closeWindow = ({ stored: pages, fetched, queued }: { stored: number; fetched: number; queued: number }, asked: Sample) => {
      const w: Window = { pages: pages - mark.pages, fetched: fetched - mark.fetched, queued: queued - mark.queued, seconds: (asked.at - mark.at) / 1000, peakRssMb: peak, crawlCpu: asked.crawlCpu - mark.crawlCpu, natsCpu: asked.natsCpu - mark.natsCpu, probeMs: median(probe.take()) };
      windows.push(w);
      process.stdout.write(`${formatWindow(windows.length, pages, w)}\n`);
      mark = { ...asked, pages, fetched, queued };
      peak = 0;
    };
    while (!exited) {
      await new Promise((r) => setTimeout(r, 500));
      const rss = rssMb(pid);
      peak = Math.max(peak, rss);
      overallPeak = Math.max(overallPeak, rss);
      const asked: Sample = { at: performance.now(), crawlCpu: cpuSeconds(pid) ?? mark.crawlCpu, natsCpu: cpuSeconds(server.pid) ?? mark.natsCpu };
      const p = await progress(metricsPort);
      // the last window closes with the crawl: its CPU is read while the process still exists
      if (p !== null && p.stored > mark.pages && (p.stored - mark.pages >= WINDOW || p.stored >= total)) closeWindow(p, asked);
    }
    const code = await crawl.exited;
    if (code !== 0) throw new Error(`crawl run exited ${code}: ${crawl.stderr()}`);
    const seconds = (performance.now() - started) / 1000;
    const traffic = await streamTraffic(server.url);
    const stored = mark.pages;
    printSummary(windows, { stored, seconds, overallPeak, streamBytes: traffic.bytes, messages: traffic.messages });
  } finally {
    probe.stop();
    await server.stop();
    await web.close();
    rmSync(out, { recursive: true, force: true });
  }
}

function formatWindow(i: number, pages: number, w: Window): string {
  const rate = w.pages / w.seconds;
  return (
    `window ${String(i).padStart(2)} (to ${pages} pages): ${rate.toFixed(0)} pages/s (${w.fetched} fetched, ${(w.queued / w.pages).toFixed(1)} URLs queued a page), peak RSS ${w.peakRssMb.toFixed(0)} MB, ` +
    `CPU per page ${((1000 * w.crawlCpu) / w.pages).toFixed(1)} ms crawl + ${((1000 * w.natsCpu) / w.pages).toFixed(1)} ms nats-server, machine probe ${w.probeMs.toFixed(1)} ms`
  );
}

function printSummary(windows: Window[], t: { stored: number; seconds: number; overallPeak: number; streamBytes: number; messages: number }): void {
  // the first and last full windows; a short tail window (the drain) is shown but not compared
  const full = windows.filter((w) => w.pages >= WINDOW * 0.9);
  const first = full[0];
  const last = full[full.length - 1];
  console.log(`\n${t.stored} pages in ${t.seconds.toFixed(0)} s (${(t.stored / t.seconds).toFixed(0)} pages/s), peak RSS ${t.overallPeak.toFixed(0)} MB`);
  console.log(`stream storage: ${(t.streamBytes / t.stored / 1024).toFixed(1)} KB per page (${(t.streamBytes / 1e9).toFixed(2)} GB), ${(t.messages / t.stored).toFixed(1)} messages per page`);
  if (first && last && full.length > 1) {
    const rate = (w: Window) => w.pages / w.seconds;
    const rates = full.map(rate);
    const rss = full.map((w) => w.peakRssMb);
    console.log(`last full window / first: pages/s ${(rate(last) / rate(first)).toFixed(2)}, peak RSS ${(last.peakRssMb / first.peakRssMb).toFixed(2)}`);
    console.log(`spread over full windows (max/min): pages/s ${(Math.max(...rates) / Math.min(...rates)).toFixed(2)}, peak RSS ${(Math.max(...rss) / Math.min(...rss)).toFixed(2)}`);
    // pages/s as if each window had the first one's machine: a CPU-bound crawl's rate scales
    // with the machine's speed, which the probe's CPU time for fixed work is the inverse of
    const atFirstSpeed = (w: Window) => (rate(w) * w.probeMs) / first.probeMs;
    console.log(`machine probe, last full window / first: ${(last.probeMs / first.probeMs).toFixed(2)}; pages/s at the first window's machine speed, last / first: ${(atFirstSpeed(last) / rate(first)).toFixed(2)}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
