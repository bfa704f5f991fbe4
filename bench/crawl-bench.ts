/**
 * `npm run bench`: crawls the test web's bench hosts (allow-all robots, no crawl-delay) with
 * politeness delays off and every stage in one `crawl run` process, three times; prints
 * pages/s and peak RSS per run and their medians. Pages/s = pages stored / wall time of the
 * `crawl run --until-idle` process (start-up and final flush included).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestWeb } from '../testweb/index.js';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { ProcessWatch } from './proc-stats.js';
import { median } from './stats.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../cli/main.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 200);
const PAGES_PER_HOST = Number(process.env.BENCH_PAGES_PER_HOST ?? 55);


async function runOnce(port: number, seeds: string[]): Promise<RunResult> {
  const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-'));
  const args = [CLI, 'run', '--out', out, '--resolve', `*.bench.test=127.0.0.1:${port}`, '--min-delay-ms', '0', '--max-per-ip', '0', '--adaptive-delay-factor', '0', '--max-depth', '10', '--until-idle'];
  for (const s of seeds) args.push('--seed', s);
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-5000)));
  const watch = new ProcessWatch(child.pid!);
  const code: number = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  const usage = watch.stop();
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`crawl run exited ${code}: ${stderr}`);
  const db = await openOutputDatabase(out);
  const res = await db.run('SELECT count(*) AS n FROM pages');
  await db.close();
  rmSync(out, { recursive: true, force: true });
  return { pages: Number(res.rows[0]![0]), seconds, rssMb: usage.peakRssMb, crawlCpu: usage.cpuSeconds, natsCpu: usage.childCpuSeconds };
}

interface RunResult {
  pages: number;
  seconds: number;
  rssMb: number;
  /** CPU seconds of the `crawl run` process (every stage) and of the nats-server it started */
  crawlCpu: number;
  natsCpu: number;
}

const msPerPage = (cpu: number, pages: number) => (1000 * cpu) / pages;


async function main() {
  const web = await startTestWeb({ hosts: 1, benchHosts: HOSTS, benchPagesPerHost: PAGES_PER_HOST, seed: 7 });
  const seeds = Array.from({ length: HOSTS }, (_, i) => `http://b${String(i).padStart(3, '0')}.bench.test/`);
  const results = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const r = await runOnce(web.port, seeds);
      results.push(r);
      process.stdout.write(`run ${i + 1}: ${r.pages} pages in ${r.seconds.toFixed(1)} s = ${(r.pages / r.seconds).toFixed(0)} pages/s, peak RSS ${r.rssMb.toFixed(0)} MB, CPU per page ${msPerPage(r.crawlCpu, r.pages).toFixed(1)} ms crawl + ${msPerPage(r.natsCpu, r.pages).toFixed(1)} ms nats-server\n`);
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
  console.log(`| CPU per page, crawl run (ms) | ${median(results.map((r) => msPerPage(r.crawlCpu, r.pages))).toFixed(1)} |`);
  console.log(`| CPU per page, nats-server (ms) | ${median(results.map((r) => msPerPage(r.natsCpu, r.pages))).toFixed(1)} |`);
  console.log(`| cores | ${os.cpus().length} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
