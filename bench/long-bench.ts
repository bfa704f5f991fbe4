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
import { freePort, startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { streamTraffic } from './stream-traffic.js';
import { sumOf } from './metrics-text.js';
import { benchSeeds, spawnBenchCrawl } from './bench-crawl.js';
import { startMachineProbe } from './machine-probe.js';
import { compareFirstAndLast, describeWindow, scrapeCounters, watchCrawlWindows } from './crawl-windows.js';

const HOSTS = 200;
const PAGES_PER_HOST = Number(process.env.BENCH_LONG_PAGES_PER_HOST ?? 1000);
const WINDOW = Number(process.env.BENCH_LONG_WINDOW ?? 20_000);

/** besides pages stored and responses: new URLs the gate queued for their hosts (the intake's load) */
const queuedUrls = (text: string) => ({ queued: sumOf(text, 'crawler_politeness_gate_urls_total', (l) => l['outcome'] === 'queued') });

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
    const watch = await watchCrawlWindows({
      crawlPid: crawl.child.pid!,
      natsPid: server.pid,
      exited: crawl.exited,
      windowPages: WINDOW,
      total,
      probe,
      read: () => scrapeCounters(metricsPort, queuedUrls),
      report: (i, stored, w) => console.log(describeWindow(i, stored, w, `, ${(w.delta['queued']! / w.delta.stored).toFixed(1)} URLs queued a page`)),
    });
    const code = await crawl.exited;
    if (code !== 0) throw new Error(`crawl run exited ${code}: ${crawl.stderr()}`);
    const seconds = (performance.now() - watch.startedAt) / 1000;
    const traffic = await streamTraffic(server.url);
    const stored = watch.windows.reduce((s, w) => s + w.delta.stored, 0);
    console.log(`\n${stored} pages in ${seconds.toFixed(0)} s (${(stored / seconds).toFixed(0)} pages/s), peak RSS ${watch.overallPeakRssMb.toFixed(0)} MB`);
    console.log(`stream storage: ${(traffic.bytes / stored / 1024).toFixed(1)} KB per page (${(traffic.bytes / 1e9).toFixed(2)} GB), ${(traffic.messages / stored).toFixed(1)} messages per page`);
    compareFirstAndLast(watch.windows, WINDOW);
  } finally {
    probe.stop();
    await server.stop();
    await web.close();
    rmSync(out, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
