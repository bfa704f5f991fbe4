/**
 * One run of the throughput bench's crawl (bench-crawl.ts) against a nats-server the bench
 * starts, measured: pages stored, wall time, peak RSS, CPU of the crawl, the nats-server and
 * the test web, what went through the streams and KV, and the machine probe. `npm run bench`
 * and `npm run bench:tls` both run it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { cpuSeconds, peakRssMb, ProcessWatch } from './proc-stats.js';
import { freePort, startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { KvOpsScraper, streamTraffic, watchBacklog, type KvOpCounts, type StreamTraffic } from './stream-traffic.js';
import { median } from './stats.js';
import { spawnBenchCrawl } from './bench-crawl.js';
import { startMachineProbe } from './machine-probe.js';

export async function runOnce(port: number, seeds: string[], extraArgs: string[] = []): Promise<RunResult> {
  const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-'));
  // the bench starts the nats-server (as `crawl run` would, same configuration) so that it can
  // read the streams after the crawl: what was published and stored per page
  const server = await startEmbeddedServer(path.join(out, '.nats'));
  const metricsPort = await freePort();
  const natsCpuBefore = cpuSeconds(server.pid) ?? 0;
  const benchCpuBefore = process.cpuUsage();
  // a process of its own, so its CPU is not in the web's figure (this process's)
  const probe = startMachineProbe();
  const started = performance.now();
  const crawl = spawnBenchCrawl({ out, webPort: port, natsUrl: server.url, metricsPort, seeds, extraArgs });
  const watch = new ProcessWatch(crawl.child.pid!);
  // read when the stages stop (the metrics server closes then), before the output's final merge:
  // VmHWM is the peak so far, so this is the crawl's peak without the merge; and its CPU and time
  let beforeMerge: { rssMb: number; crawlCpu: number; seconds: number } | null = null;
  const kvOps = new KvOpsScraper(metricsPort, () => {
    beforeMerge = { rssMb: peakRssMb(crawl.child.pid!), crawlCpu: cpuSeconds(crawl.child.pid!) ?? 0, seconds: (performance.now() - started) / 1000 };
  });
  const backlog = process.env.BENCH_WATCH ? watchBacklog(server.url) : null;
  const code = await crawl.exited;
  const probeMs = median(probe.take());
  probe.stop();
  const usage = watch.stop();
  kvOps.stop();
  await backlog?.stop();
  const seconds = (performance.now() - started) / 1000;
  const natsCpu = (cpuSeconds(server.pid) ?? natsCpuBefore) - natsCpuBefore;
  const benchCpuUs = process.cpuUsage(benchCpuBefore);
  const webCpu = (benchCpuUs.user + benchCpuUs.system) / 1e6;
  try {
    if (code !== 0) throw new Error(`crawl run exited ${code}: ${crawl.stderr()}`);
    const traffic = await streamTraffic(server.url);
    const db = await openOutputDatabase(out);
    const res = await db.run('SELECT count(*) AS n FROM pages');
    await db.close();
    const crawlOnly = beforeMerge ?? { rssMb: usage.peakRssMb, crawlCpu: usage.cpuSeconds, seconds };
    return { pages: Number(res.rows[0]![0]), seconds, rssMb: usage.peakRssMb, crawlCpu: usage.cpuSeconds, natsCpu, webCpu, beforeMerge: crawlOnly, traffic, kv: kvOps.last, probeMs };
  } finally {
    await server.stop();
    rmSync(out, { recursive: true, force: true });
  }
}

export interface RunResult {
  pages: number;
  seconds: number;
  /** peak RSS of the whole `crawl run` */
  rssMb: number;
  /** CPU seconds of the `crawl run` process (every stage) and of the nats-server */
  crawlCpu: number;
  natsCpu: number;
  /**
   * CPU seconds of this bench process while the crawl ran: the test web serving the pages
   * (which shares the machine's cores with the crawl) and the bench's own sampling
   */
  webCpu: number;
  /**
   * the crawl alone, up to when its stages stopped, before the output's final merge (which
   * `crawl run --until-idle` does in the same process): peak RSS, CPU seconds, wall seconds
   */
  beforeMerge: { rssMb: number; crawlCpu: number; seconds: number };
  traffic: StreamTraffic;
  kv: KvOpCounts;
  /** the machine probe's median while the crawl ran, ms (machine-probe.ts): higher is a slower machine */
  probeMs: number;
}
