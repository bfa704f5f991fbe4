/**
 * `npm run bench:idle`: what a polite crawl burns while it waits. A `crawl run` over a few
 * test-web hosts with many pages and a long delay between a host's requests (30 s), so it has
 * work queued but nothing due most of the time, as a polite crawl of few hosts does. After a
 * warm-up (robots.txt, the first pages, the seen-filter's partitions taken), the CPU of the
 * crawl process (all its threads) and of nats-server is read over the window: both as % of
 * one core, with the pages fetched in it (each one's work is in the figure; ~20 ms a page).
 *
 * BENCH_IDLE_SECONDS (default 300), BENCH_IDLE_HOSTS (3), BENCH_IDLE_DELAY_MS (30000),
 * BENCH_CRAWL_ARGS (flags added to `crawl run`), BENCH_NODE_ARGS (node flags: `--cpu-prof`). Target (issue: idle is nearly free): ≤ 1 % of
 * a core for crawl + nats-server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestWeb } from '../testweb/index.js';
import { freePort, startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { crawlCli, exited } from './crawl-cli.js';
import { cpuSeconds } from './proc-stats.js';
import { scrapeCounters } from './crawl-windows.js';
import { startMachineProbe } from './machine-probe.js';
import { median } from './stats.js';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 300);
const HOSTS = Number(process.env.BENCH_IDLE_HOSTS ?? 3);
const DELAY_MS = Number(process.env.BENCH_IDLE_DELAY_MS ?? 30_000);
const WARM_UP_MS = 40_000;
const TARGET_PERCENT = 1;

async function main() {
  const web = await startTestWeb({ hosts: HOSTS, pagesPerHost: 200, seed: 5 });
  const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-idle-'));
  const server = await startEmbeddedServer(path.join(out, '.nats'));
  const metricsPort = await freePort();
  const args = ['run', '--out', path.join(out, 'out'), '--min-delay-ms', String(DELAY_MS), '--max-depth', '10', '--metrics-port', String(metricsPort)];
  for (const rule of web.resolveRules) args.push('--resolve', rule);
  for (const host of web.model.siteHostNames) args.push('--seed', `http://${host}/`);
  args.push(...(process.env.BENCH_CRAWL_ARGS ?? '').split(' ').filter(Boolean));
  console.log(`bench:idle: ${HOSTS} hosts × 200 pages, ${DELAY_MS / 1000} s between a host's requests; ${WARM_UP_MS / 1000} s warm-up, then ${SECONDS} s measured`);
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = crawlCli(args, { NATS_URL: server.url }, { stdio: ['ignore', 'ignore', 'ignore'], nodeArgs });
  const done = exited(child);
  const probe = startMachineProbe();
  try {
    await sleep(WARM_UP_MS);
    const fetchedNow = async () => (await scrapeCounters(metricsPort))?.fetched ?? NaN;
    const start = { crawl: cpuSeconds(child.pid!)!, nats: cpuSeconds(server.pid)!, at: performance.now(), fetched: await fetchedNow() };
    probe.take();
    await sleep(SECONDS * 1000);
    const end = { crawl: cpuSeconds(child.pid!)!, nats: cpuSeconds(server.pid)!, at: performance.now(), fetched: await fetchedNow() };
    const wall = (end.at - start.at) / 1000;
    const percent = (cpu: number) => (100 * cpu) / wall;
    const crawl = percent(end.crawl - start.crawl);
    const nats = percent(end.nats - start.nats);
    console.log(
      `over ${wall.toFixed(0)} s: crawl ${crawl.toFixed(2)} % of a core + nats-server ${nats.toFixed(2)} % = ${(crawl + nats).toFixed(2)} % ` +
        `(${end.fetched - start.fetched} responses in the window); machine probe ${median(probe.take()).toFixed(1)} ms`,
    );
    console.log(`target: <= ${TARGET_PERCENT} % of a core: ${crawl + nats <= TARGET_PERCENT ? 'met' : 'missed'}`);
  } finally {
    probe.stop();
    child.kill('SIGTERM');
    await done;
    await server.stop();
    await web.close();
    rmSync(out, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
