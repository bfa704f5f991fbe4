/**
 * `npm run bench`: crawls the test web's bench hosts (allow-all robots, no crawl-delay) with
 * politeness delays off and every stage in one `crawl run` process, three times; prints
 * pages/s and peak RSS per run and their medians. Pages/s = pages stored / wall time of the
 * `crawl run --until-idle` process (start-up and final flush included). Also per page: messages
 * and bytes in the streams, KV writes and reads (the bench starts the nats-server to read them).
 * The crawl's figures before the output's final merge (peak RSS, pages/s, CPU) are read when its
 * stages stop: the merge is a fixed step at the end, and this tells its cost from the crawl's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb } from '../testweb/index.js';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { cpuSeconds, peakRssMb, ProcessWatch } from './proc-stats.js';
import { freePort, startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { KvOpsScraper, streamTraffic, watchBacklog, type KvOpCounts, type StreamTraffic } from './stream-traffic.js';
import { median } from './stats.js';
import { benchSeeds, spawnBenchCrawl } from './bench-crawl.js';
import { startMachineProbe } from './machine-probe.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 200);
const PAGES_PER_HOST = Number(process.env.BENCH_PAGES_PER_HOST ?? 55);


async function runOnce(port: number, seeds: string[]): Promise<RunResult> {
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
  const crawl = spawnBenchCrawl({ out, webPort: port, natsUrl: server.url, metricsPort, seeds });
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

interface RunResult {
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

const msPerPage = (cpu: number, pages: number) => (1000 * cpu) / pages;
const perPage = (n: number, pages: number) => n / pages;

async function main() {
  // pages rendered before the first run: rendering them on request would take ~1 ms a page of
  // the two cores the crawl is measured on, which a real crawl's servers do not share
  const web = await startTestWeb({ hosts: 1, benchHosts: HOSTS, benchPagesPerHost: PAGES_PER_HOST, seed: 7, prerender: true });
  const seeds = benchSeeds(HOSTS);
  const results = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const r = await runOnce(web.port, seeds);
      results.push(r);
      process.stdout.write(
        `run ${i + 1}: ${r.pages} pages in ${r.seconds.toFixed(1)} s = ${(r.pages / r.seconds).toFixed(0)} pages/s, peak RSS ${r.rssMb.toFixed(0)} MB (${r.beforeMerge.rssMb.toFixed(0)} MB before the final merge), ` +
          `CPU per page ${msPerPage(r.crawlCpu, r.pages).toFixed(1)} ms crawl + ${msPerPage(r.natsCpu, r.pages).toFixed(1)} ms nats-server (test web ${msPerPage(r.webCpu, r.pages).toFixed(1)} ms); ` +
          `before the final merge: ${(r.pages / r.beforeMerge.seconds).toFixed(0)} pages/s, CPU ${msPerPage(r.beforeMerge.crawlCpu, r.pages).toFixed(1)} ms crawl; ` +
          `per page: ${perPage(r.traffic.messages, r.pages).toFixed(1)} messages, ${(perPage(r.traffic.bytes, r.pages) / 1024).toFixed(1)} KB stored, ` +
          `${perPage(r.kv.writes, r.pages).toFixed(1)} KV writes + ${perPage(r.kv.reads, r.pages).toFixed(1)} reads; machine probe ${r.probeMs.toFixed(1)} ms\n`,
      );
      if (process.env.BENCH_STREAMS) for (const [name, t] of Object.entries(r.traffic.byStream)) process.stdout.write(`  ${name}: ${perPage(t.messages, r.pages).toFixed(2)} msgs/page, ${(perPage(t.bytes, r.pages) / 1024).toFixed(2)} KB/page\n`);
      if (process.env.BENCH_STREAMS) for (const [op, n] of Object.entries(r.kv.byOp)) process.stdout.write(`  kv ${op}: ${perPage(n, r.pages).toFixed(2)}/page\n`);
    }
  } finally {
    await web.close();
  }
  const rates = results.map((r) => r.pages / r.seconds);
  console.log('\n| metric | median of %d runs |', RUNS);
  console.log('|---|---|');
  console.log(`| pages stored | ${median(results.map((r) => r.pages))} |`);
  console.log(`| pages/s | ${median(rates).toFixed(0)} |`);
  console.log(`| wall time (s) | ${median(results.map((r) => r.seconds)).toFixed(1)} |`);
  console.log(`| peak RSS of crawl run (MB) | ${median(results.map((r) => r.rssMb)).toFixed(0)} |`);
  console.log(`| peak RSS before the output's final merge (MB) | ${median(results.map((r) => r.beforeMerge.rssMb)).toFixed(0)} |`);
  console.log(`| CPU per page, crawl run (ms) | ${median(results.map((r) => msPerPage(r.crawlCpu, r.pages))).toFixed(1)} |`);
  console.log(`| CPU per page, nats-server (ms) | ${median(results.map((r) => msPerPage(r.natsCpu, r.pages))).toFixed(1)} |`);
  console.log(`| CPU per page, test web and bench (ms) | ${median(results.map((r) => msPerPage(r.webCpu, r.pages))).toFixed(1)} |`);
  console.log(`| pages/s before the output's final merge | ${median(results.map((r) => r.pages / r.beforeMerge.seconds)).toFixed(0)} |`);
  console.log(`| CPU per page before the output's final merge, crawl run (ms) | ${median(results.map((r) => msPerPage(r.beforeMerge.crawlCpu, r.pages))).toFixed(1)} |`);
  console.log(`| messages published per page (streams, KV excluded) | ${median(results.map((r) => perPage(r.traffic.messages, r.pages))).toFixed(1)} |`);
  console.log(`| stream storage per page (KB, KV excluded) | ${median(results.map((r) => perPage(r.traffic.bytes, r.pages) / 1024)).toFixed(1)} |`);
  console.log(`| KV writes per page | ${median(results.map((r) => perPage(r.kv.writes, r.pages))).toFixed(1)} |`);
  console.log(`| KV reads per page | ${median(results.map((r) => perPage(r.kv.reads, r.pages))).toFixed(1)} |`);
  console.log(`| machine probe (ms of CPU for fixed work; higher is a slower machine) | ${median(results.map((r) => r.probeMs)).toFixed(1)} |`);
  console.log(`| cores | ${os.cpus().length} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
