import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from '@nats-io/transport-node';
import { clusterNodeConfig } from './cluster-config.js';
import { findNatsServer, freePort } from './embedded-server.js';
import { waitForJetStream } from '../../pipeline/adapters/jetstream-ready.js';

export interface LocalClusterNode {
  name: string;
  /** nats://127.0.0.1:port */
  url: string;
  port: number;
  clusterPort: number;
  storeDir: string;
  configFile: string;
  logFile: string;
  /** the running process, or null while the node is down */
  pid: number | null;
}

export interface LocalCluster {
  nodes: LocalClusterNode[];
  /** every node's client URL, comma-separated: a NATS_URL that survives any one node's loss */
  url: string;
  /** kill -9 one node: no lame-duck mode, no goodbye to its peers */
  kill(name: string): Promise<void>;
  /** starts a node that was killed, on its old ports and store */
  restart(name: string): Promise<void>;
  /** stops every node (SIGTERM, then SIGKILL after 5 s) */
  stop(): Promise<void>;
}

export interface LocalClusterOptions {
  nodes?: number;
  /** keep the servers running after this process exits (`crawl cluster start`) */
  detached?: boolean;
}

/**
 * A JetStream cluster of `nodes` nats-server processes on free loopback ports, each with its
 * store under `dir/<name>/`: for development and tests. Resolves once every node answers and
 * the cluster has a JetStream meta leader.
 */
export async function startLocalCluster(dir: string, opts: LocalClusterOptions = {}): Promise<LocalCluster> {
  const bin = findNatsServer();
  const count = opts.nodes ?? 3;
  const nodes: LocalClusterNode[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `n${i}`;
    const storeDir = path.resolve(dir, name);
    mkdirSync(storeDir, { recursive: true });
    nodes.push({
      name,
      port: await freePort(),
      clusterPort: await freePort(),
      url: '',
      storeDir,
      configFile: path.join(storeDir, 'nats-server.conf'),
      logFile: path.join(storeDir, 'nats-server.log'),
      pid: null,
    });
  }
  for (const n of nodes) {
    n.url = `nats://127.0.0.1:${n.port}`;
    const routes = nodes.map((m) => `nats-route://127.0.0.1:${m.clusterPort}`);
    writeFileSync(n.configFile, clusterNodeConfig({ name: n.name, listen: `127.0.0.1:${n.port}`, clusterListen: `127.0.0.1:${n.clusterPort}`, routes, storeDir: n.storeDir }));
  }
  const children = new Map<string, ChildProcess>();
  const launch = (n: LocalClusterNode) => {
    const log = openSync(n.logFile, 'a');
    const child = spawn(bin, ['-c', n.configFile], { stdio: ['ignore', log, log], detached: opts.detached === true });
    closeSync(log);
    if (opts.detached) child.unref();
    n.pid = child.pid ?? null;
    children.set(n.name, child);
    child.once('exit', () => {
      if (children.get(n.name) === child) n.pid = null;
    });
  };
  for (const n of nodes) launch(n);
  const cluster: LocalCluster = {
    nodes,
    url: nodes.map((n) => n.url).join(','),
    async kill(name) {
      const child = children.get(name);
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async restart(name) {
      const n = nodes.find((x) => x.name === name);
      if (!n) throw new Error(`no node ${name} in the cluster`);
      if (n.pid !== null) return;
      launch(n);
      await waitForNode(n);
    },
    async stop() {
      await Promise.all([...children.values()].map(stopChild));
    },
  };
  try {
    for (const n of nodes) await waitForNode(n);
    await waitForMetaLeader(cluster.url);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

async function waitForNode(n: LocalClusterNode, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const nc = await connect({ servers: n.url, reconnect: false, timeout: 500 });
      await nc.close();
      return;
    } catch {
      if (n.pid === null) throw new Error(`starting nats-server ${n.name}: it exited (see ${n.logFile})`);
      if (Date.now() > deadline) throw new Error(`starting nats-server ${n.name} on ${n.url}: not ready after ${timeoutMs / 1000} s (see ${n.logFile})`);
      await sleep(100);
    }
  }
}

/** JetStream answers only once the servers have elected a meta leader. */
export async function waitForMetaLeader(url: string, timeoutMs = 30_000): Promise<void> {
  const nc = await connect({ servers: url.split(','), timeout: 2000 });
  try {
    await waitForJetStream(nc, timeoutMs);
  } catch (err) {
    throw new Error(`the JetStream cluster at ${url} has no meta leader: ${(err as Error).message}`, { cause: err });
  } finally {
    await nc.close();
  }
}
