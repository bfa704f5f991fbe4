/**
 * The crawl both throughput benches run: a `crawl run` process over the test web's bench hosts
 * (allow-all robots, no crawl-delay) with politeness delays off, every stage in one process,
 * against a nats-server the bench started (same configuration as `crawl run` would use) so
 * the bench can read the streams afterwards.
 */
import type { ChildProcess } from 'node:child_process';
import { crawlCli, exited as exitOf } from './crawl-cli.js';


export const benchSeeds = (hosts: number): string[] => Array.from({ length: hosts }, (_, i) => `http://b${String(i).padStart(3, '0')}.bench.test/`);

export interface BenchCrawl {
  child: ChildProcess;
  /** the last 5,000 characters the crawl wrote to stderr */
  stderr(): string;
  exited: Promise<number>;
}

/** An environment variable's value as command-line arguments, split on spaces (none when unset). */
const argsFromEnv = (name: string): string[] => (process.env[name] ?? '').split(' ').filter(Boolean);

export function spawnBenchCrawl(o: { out: string; webPort: number; natsUrl: string; metricsPort: number; seeds: string[]; extraArgs?: string[] }): BenchCrawl {
  const args = ['run', '--out', o.out, '--resolve', `*.bench.test=127.0.0.1:${o.webPort}`, '--min-delay-ms', '0', '--max-per-ip', '0', '--adaptive-delay-factor', '0', '--max-depth', '10', '--until-idle', '--metrics-port', String(o.metricsPort), ...(o.extraArgs ?? [])];
  for (const s of o.seeds) args.push('--seed', s);
  // BENCH_CRAWL_ARGS='--extract-threads 2' tries a `crawl run` option
  args.push(...argsFromEnv('BENCH_CRAWL_ARGS'));
  // the flags the `crawl` command starts node with; then BENCH_NODE_ARGS, which may undo them
  // ('--no-single-threaded-gc') or profile the crawl ('--cpu-prof --cpu-prof-dir=/tmp/prof', a profile per thread)
  const child = crawlCli(args, { NATS_URL: o.natsUrl }, { stdio: ['ignore', 'ignore', 'pipe'], nodeArgs: argsFromEnv('BENCH_NODE_ARGS') });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-5000)));
  const exited = exitOf(child);
  return { child, stderr: () => stderr, exited };
}
