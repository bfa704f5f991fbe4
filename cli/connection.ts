import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { awaitJetStream, connectNats, redactUrl, watchNatsConnection, type NatsSecurity } from '../pipeline/adapters/nats-connection.js';
import { startEmbeddedServer, StoreInUseError, type EmbeddedServer } from '../ops/nats/embedded-server.js';
import { UsageError } from './usage-error.js';
import { natsSecurity } from './nats-options.js';
import { embeddedStateDir } from './output-location.js';

export const natsDir = embeddedStateDir;
const urlFile = (outDir: string) => path.join(natsDir(outDir), 'server-url');

/** NATS_URL, unless unset or empty (an empty one means "embedded", as if unset). */
export function natsUrlFromEnv(): string | undefined {
  const url = process.env.NATS_URL?.trim();
  return url ? url : undefined;
}

/** Whether `crawl run --out DIR` has run before in this directory (so it can resume without seeds). */
export const hasEmbeddedStore = (outDir: string) => existsSync(path.join(natsDir(outDir), 'jetstream'));

export interface CrawlConnection {
  nc: NatsConnection;
  server: EmbeddedServer | null;
  url: string;
  /** how to open another connection to the same server (a stage thread's): its URL, which may carry credentials, and the security options */
  reconnect: { url: string; security: NatsSecurity };
  close(): Promise<void>;
}

/**
 * Connects for a command: a refused secret, a failed TLS handshake or an unreachable server
 * is one line and exit code 2 (a UsageError), never a stack trace. The credentials and TLS
 * files apply to NATS_URL only: the embedded server of `crawl run` listens on loopback and
 * asks for none. Once connected, a permission the server denies is reported as one line,
 * and so is a connection the server closed for its credentials (it is not retried forever).
 */
export async function connectForCommand(url: string, name: string, security: NatsSecurity = natsSecurity()): Promise<NatsConnection> {
  let nc: NatsConnection;
  try {
    nc = await connectNats(url, name, security);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  watches.set(
    nc,
    watchNatsConnection(nc, {
      closedByServer: (message) => {
      process.stderr.write(`crawl: ${message}\n`);
      // the client gave up reconnecting: nothing this process does can succeed any more
        process.exitCode = 2;
        setTimeout(() => process.exit(2), 2000).unref();
      },
    }, security),
  );
  return nc;
}

const watches = new WeakMap<NatsConnection, ReturnType<typeof watchNatsConnection>>();

/**
 * The permission the server denied on `subject` (or on anything, without one), if it did: a
 * denied publish otherwise surfaces only as a publish timeout. For the command's error line.
 */
export function deniedPermission(nc: NatsConnection, subject?: string): string | undefined {
  return watches.get(nc)?.last(subject)?.message;
}

/** NATS_URL if set; otherwise an embedded nats-server whose JetStream store lives under the output directory. */
export async function openCrawlConnection(outDir: string, name: string): Promise<CrawlConnection> {
  const external = natsUrlFromEnv();
  const server = external
    ? null
    : await startEmbeddedServer(natsDir(outDir)).catch((err: Error) => {
        throw err instanceof StoreInUseError ? new UsageError(err.message) : err;
      });
  const url = external ?? server!.url;
  if (server) writeFileSync(urlFile(outDir), url);
  let nc: NatsConnection;
  const security = external ? natsSecurity() : {};
  try {
    nc = await connectForCommand(url, name, security);
    // a cluster that just lost a server answers JetStream only once it has elected leaders
    if (external) await awaitJetStream(nc, name);
  } catch (err) {
    await server?.stop();
    throw err;
  }
  return {
    nc,
    server,
    /** without any password the URL may carry: it is printed and logged */
    url: redactUrl(url),
    reconnect: { url, security },
    async close() {
      await nc.drain().catch(() => undefined);
      await server?.stop();
    },
  };
}

/**
 * For commands that join a running crawl (seed, worker): NATS_URL, or the embedded server
 * that `crawl run --out DIR` started.
 */
export async function joinCrawl(outDir: string, name: string): Promise<NatsConnection> {
  const url = natsUrlFromEnv() ?? (existsSync(urlFile(outDir)) ? readFileSync(urlFile(outDir), 'utf8').trim() : '');
  if (!url) throw new UsageError(`no running crawl: set NATS_URL, or start one with \`crawl run --out ${outDir}\``);
  return awaitJetStream(await connectForCommand(url, name, natsUrlFromEnv() ? natsSecurity() : {}), name);
}

/** NATS_URL; else the embedded server of a crawl running on this directory; else an embedded server started on its store. */
export async function joinOrOpenCrawl(outDir: string, name: string): Promise<{ nc: NatsConnection; close(): Promise<void> }> {
  const urlFile = path.join(natsDir(outDir), 'server-url');
  // the pid file exists only while that server runs: a stale URL's port may belong to another server by now
  const running = existsSync(path.join(natsDir(outDir), 'nats-server.pid'));
  if (!natsUrlFromEnv() && running && existsSync(urlFile)) {
    try {
      const nc = await connectNats(readFileSync(urlFile, 'utf8').trim(), name, {});
      return { nc, close: () => nc.drain().catch(() => undefined) };
    } catch {
      /* no crawl running there: start the store's server below */
    }
  }
  if (!natsUrlFromEnv() && !hasEmbeddedStore(outDir)) throw new UsageError(`no crawl in ${outDir}: set NATS_URL, or give the --out of a crawl`);
  return openCrawlConnection(outDir, name);
}
