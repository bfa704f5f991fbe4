/**
 * `npm run bench:stages`: what each stage costs a page. The bench crawl of `npm run bench`
 * (the bench hosts, delays off), run by one `crawl worker` process per stage against one
 * nats-server instead of by one `crawl run`, so that each stage's CPU is its own process's:
 * /proc's figure, every thread (extract's parsing threads included), from the seeding to the
 * crawl's end, over the pages stored. What a process of a stage costs besides its stage (its
 * NATS connection, collector, metrics) is in its figure, once per process; one `crawl run`
 * pays it once for all, so the sum here is above `npm run bench`'s. Read it to size a
 * deployment: the stage with the largest figure needs the most workers (or cores) for a
 * given rate. Set BENCH_HOSTS / BENCH_PAGES_PER_HOST for another size.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestWeb } from '../testweb/index.js';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { openKvStores } from '../pipeline/adapters/nats-kv.js';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { waitUntilIdle } from '../app/backlog.js';
import { streamAdmin } from '../pipeline/adapters/stream-admin.js';
import { cpuSeconds } from './proc-stats.js';
import { benchSeeds } from './bench-crawl.js';
import { crawlCli, exited } from './crawl-cli.js';

const HOSTS = Number(process.env.BENCH_HOSTS ?? 200);
const PAGES_PER_HOST = Number(process.env.BENCH_PAGES_PER_HOST ?? 55);
/** the stages a crawl without rendering runs, in the order a page meets them */
const STAGES = ['normalize', 'seen-filter', 'politeness-gate', 'fetch', 'extract', 'simhash', 'persist', 'archive'] as const;

interface StageCosts {
  pages: number;
  seconds: number;
  /** CPU seconds by stage, and `nats-server` */
  cpu: Record<string, number>;
}

/** Waits until the crawl has begun and is idle again, as `crawl run --until-idle` decides it. */
async function waitUntilDone(natsUrl: string): Promise<void> {
  const nc = await connectNats(natsUrl, 'stage-costs-bench');
  try {
    await waitUntilIdle(streamAdmin(nc), (await openKvStores(nc)).hosts, { begun: false });
  } finally {
    await nc.close();
  }
}

async function runOnce(webPort: number): Promise<StageCosts> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-stages-'));
  const out = path.join(dir, 'out');
  const server = await startEmbeddedServer(path.join(dir, 'nats'));
  const env = { NATS_URL: server.url };
  const settings = ['--resolve', `*.bench.test=127.0.0.1:${webPort}`, '--min-delay-ms', '0', '--max-per-ip', '0', '--adaptive-delay-factor', '0', '--max-depth', '10'];
  const workers = new Map<string, ReturnType<typeof crawlCli>>();
  try {
    if ((await exited(crawlCli(['topology', 'apply', ...settings], env))) !== 0) throw new Error('crawl topology apply failed');
    for (const stage of STAGES) workers.set(stage, crawlCli(['worker', '--stage', stage, '--out', out, '--metrics-port', '0'], env));
    // each worker's start-up (loading modules, connecting) is left out of its figure
    await sleep(3000);
    const before = new Map([...workers].map(([stage, w]) => [stage, cpuSeconds(w.pid!) ?? 0]));
    const natsBefore = cpuSeconds(server.pid) ?? 0;
    const started = performance.now();
    if ((await exited(crawlCli(['seed', ...benchSeeds(HOSTS)], env))) !== 0) throw new Error('crawl seed failed');
    await waitUntilDone(server.url);
    const seconds = (performance.now() - started) / 1000;
    const cpu: Record<string, number> = {};
    for (const [stage, w] of workers) cpu[stage] = (cpuSeconds(w.pid!) ?? 0) - before.get(stage)!;
    cpu['nats-server'] = (cpuSeconds(server.pid) ?? 0) - natsBefore;
    for (const w of workers.values()) w.kill('SIGTERM');
    const codes = await Promise.all([...workers.values()].map(exited));
    workers.clear();
    if (codes.some((c) => c !== 0)) throw new Error(`a worker exited with ${codes.join(', ')}`);
    const db = await openOutputDatabase(out);
    const res = await db.run('SELECT count(*) AS n FROM pages');
    await db.close();
    return { pages: Number(res.rows[0]![0]), seconds, cpu };
  } finally {
    for (const w of workers.values()) w.kill('SIGKILL');
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const web = await startTestWeb({ hosts: 1, benchHosts: HOSTS, benchPagesPerHost: PAGES_PER_HOST, seed: 7, prerender: true });
  try {
    const r = await runOnce(web.port);
    const total = Object.values(r.cpu).reduce((a, b) => a + b, 0);
    console.log(`${r.pages} pages in ${r.seconds.toFixed(1)} s = ${(r.pages / r.seconds).toFixed(0)} pages/s, one worker process a stage\n`);
    console.log('| process | CPU ms a page | share |');
    console.log('|---|---|---|');
    for (const [name, s] of Object.entries(r.cpu)) console.log(`| ${name} | ${((1000 * s) / r.pages).toFixed(2)} | ${((100 * s) / total).toFixed(0)} % |`);
    console.log(`| all | ${((1000 * total) / r.pages).toFixed(2)} | 100 % |`);
  } finally {
    await web.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
