import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from '@nats-io/transport-node';

/** Large enough for a page body at the default 5 MB cap plus its headers and fields. */
export const EMBEDDED_MAX_PAYLOAD = 8 * 1024 * 1024;

export interface EmbeddedServer {
  url: string;
  port: number;
  storeDir: string;
  /** the nats-server process (for its CPU and memory figures) */
  pid: number;
  stop(): Promise<void>;
}

export class NatsServerNotFoundError extends Error {
  override name = 'NatsServerNotFoundError';
}

export function findNatsServer(): string {
  for (const candidate of [process.env.NATS_SERVER_BIN, 'nats-server', '/usr/sbin/nats-server', '/usr/bin/nats-server']) {
    if (!candidate) continue;
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      /* try the next one */
    }
  }
  throw new NatsServerNotFoundError(
    'nats-server not found: install it (Debian/Ubuntu: `apt-get install -y nats-server`, or run scripts/setup.sh) or set NATS_URL',
  );
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Another crawl, still running, has this store's server: the caller says so and stops. */
export class StoreInUseError extends Error {
  override name = 'StoreInUseError';
}

/**
 * The node process that started server `pid` when it is still running: a crawl that uses the
 * store now. A server whose crawl was killed has been handed to init (or a subreaper).
 */
function liveCrawlOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isInteger(ppid) || ppid <= 1) return null;
    const program = readFileSync(`/proc/${ppid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return path.basename(program).startsWith('node') ? ppid : null;
  } catch {
    return null;
  }
}

/** The pid in the pid file when it is a live nats-server's; null when the file names nothing running. */
function serverNamedBy(pidFile: string): number | null {
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return null;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('nats-server') ? pid : null;
  } catch {
    return null;
  }
}

/**
 * A crawl killed with SIGKILL leaves its nats-server running on the store directory.
 * Two servers on one store would corrupt it, so the stale one is stopped first; one whose
 * crawl is still running is left alone, and this start fails (a second `crawl run` on the
 * same --out would otherwise take the store from under the first).
 */
async function stopStaleServer(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = serverNamedBy(pidFile);
  const owner = pid === null ? null : liveCrawlOf(pid);
  if (owner !== null) {
    throw new StoreInUseError(`another process (pid ${owner}) is crawling into this output directory: its nats-server (pid ${pid}) has the store at ${path.dirname(pidFile)}; stop that crawl first, or give another --out`);
  }
  rmSync(pidFile, { force: true });
  if (pid === null) return;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(50);
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
}

/**
 * Starts nats-server with JetStream, its store under `dataDir`, on a free loopback port.
 * Used by `crawl run` without NATS_URL, and by every integration test.
 */
export async function startEmbeddedServer(dataDir: string, opts: { port?: number; debugLog?: boolean; maxPayloadBytes?: number } = {}): Promise<EmbeddedServer> {
  const bin = findNatsServer();
  const storeDir = path.resolve(dataDir);
  mkdirSync(storeDir, { recursive: true });
  const pidFile = path.join(storeDir, 'nats-server.pid');
  await stopStaleServer(pidFile);
  const port = opts.port ?? (await freePort());
  const configFile = path.join(storeDir, 'nats-server.conf');
  writeFileSync(
    configFile,
    [
      `listen: "127.0.0.1:${port}"`,
      `max_payload: ${opts.maxPayloadBytes ?? EMBEDDED_MAX_PAYLOAD}`,
      `jetstream {`,
      `  store_dir: ${JSON.stringify(storeDir)}`,
      `  max_memory_store: 268435456`,
      `}`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(bin, ['-c', configFile], {
    stdio: ['ignore', 'ignore', opts.debugLog ? 'inherit' : 'pipe'],
    detached: false,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  writeFileSync(pidFile, String(child.pid));
  const url = `nats://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  for (;;) {
    if (exited) throw new Error(`starting nats-server: it exited (${stderr.trim().split('\n').slice(-3).join(' | ')})`);
    try {
      const nc = await connect({ servers: url, reconnect: false, timeout: 500 });
      await nc.close();
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`starting nats-server on port ${port}: not ready after 15 s (${stderr.trim().slice(-300)})`);
      }
      await sleep(50);
    }
  }
  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    storeDir,
    pid: child.pid!,
    stop() {
      stopping ??= (async () => {
        if (!exited) {
          const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
          await done;
          clearTimeout(timer);
        }
        rmSync(pidFile, { force: true });
      })();
      return stopping;
    },
  };
}
