import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { startLocalCluster } from '../ops/nats/local-cluster.js';
import { exitWhenDrained } from './exit.js';
import { parseIntOption, UsageError } from './usage-error.js';

interface ClusterFile {
  url: string;
  nodes: Array<{ name: string; url: string; pid: number | null; log: string }>;
}

const clusterFile = (dir: string) => path.join(dir, 'cluster.json');

function isNatsServer(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('nats-server');
  } catch {
    return false;
  }
}

function readClusterFile(dir: string): ClusterFile | null {
  if (!existsSync(clusterFile(dir))) return null;
  return JSON.parse(readFileSync(clusterFile(dir), 'utf8')) as ClusterFile;
}

/** `crawl cluster start --dir DIR`: three nats-servers on free loopback ports, left running; prints the NATS_URL. */
async function startCluster(o: { dir: string; nodes: number }): Promise<number> {
  const dir = path.resolve(o.dir);
  const running = readClusterFile(dir)?.nodes.filter((n) => n.pid !== null && isNatsServer(n.pid)) ?? [];
  if (running.length > 0) throw new UsageError(`a cluster already runs from ${dir} (${running.map((n) => n.url).join(', ')}): crawl cluster stop --dir ${o.dir}`);
  const cluster = await startLocalCluster(dir, { nodes: o.nodes, detached: true });
  const file: ClusterFile = { url: cluster.url, nodes: cluster.nodes.map((n) => ({ name: n.name, url: n.url, pid: n.pid, log: n.logFile })) };
  writeFileSync(clusterFile(dir), JSON.stringify(file, null, 2) + '\n');
  process.stderr.write(`cluster of ${o.nodes} JetStream servers up, stores and logs in ${dir}; stop it with: crawl cluster stop --dir ${o.dir}\n`);
  process.stdout.write(`NATS_URL=${cluster.url}\n`);
  return 0;
}

/** `crawl cluster stop --dir DIR`: SIGTERM to each server (SIGKILL after 10 s); the stores stay. */
async function stopCluster(o: { dir: string }): Promise<number> {
  const dir = path.resolve(o.dir);
  const file = readClusterFile(dir);
  if (!file) throw new UsageError(`no cluster was started from ${dir} (no cluster.json there)`);
  const pids = file.nodes.map((n) => n.pid).filter((pid): pid is number => pid !== null && isNatsServer(pid));
  for (const pid of pids) process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (pids.some(isNatsServer) && Date.now() < deadline) await sleep(100);
  for (const pid of pids.filter(isNatsServer)) process.kill(pid, 'SIGKILL');
  rmSync(clusterFile(dir), { force: true });
  process.stderr.write(`stopped ${pids.length} nats-server${pids.length === 1 ? '' : 's'}; their stores stay in ${dir}\n`);
  return 0;
}

export function addClusterCommand(cli: Command): void {
  const cluster = cli.command('cluster').description('a local JetStream cluster on loopback, for development and tests');
  cluster
    .command('start')
    .description('start nats-servers clustered with JetStream on free loopback ports; prints NATS_URL')
    .requiredOption('--dir <dir>', 'their stores, configs and logs go here')
    .option('--nodes <n>', 'how many servers', parseIntOption('--nodes', 1, 5), 3)
    .action(async (o) => exitWhenDrained(await startCluster(o)));
  cluster
    .command('stop')
    .description('stop the servers `crawl cluster start --dir DIR` started (their stores stay)')
    .requiredOption('--dir <dir>', 'the directory given to start')
    .action(async (o) => exitWhenDrained(await stopCluster(o)));
}
