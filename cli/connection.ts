import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { awaitJetStream, connectJetStream, connectNats } from '../pipeline/adapters/nats-connection.js';
import { startEmbeddedServer, type EmbeddedServer } from '../ops/nats/embedded-server.js';
import { UsageError } from './usage-error.js';
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
  close(): Promise<void>;
}

/** NATS_URL if set; otherwise an embedded nats-server whose JetStream store lives under the output directory. */
export async function openCrawlConnection(outDir: string, name: string): Promise<CrawlConnection> {
  const external = natsUrlFromEnv();
  const server = external ? null : await startEmbeddedServer(natsDir(outDir));
  const url = external ?? server!.url;
  if (server) writeFileSync(urlFile(outDir), url);
  const nc = external ? await connectJetStream(url, name) : await connectNats(url, name);
  return {
    nc,
    server,
    url,
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
  let nc: NatsConnection;
  try {
    nc = await connectNats(url, name);
  } catch (err) {
    throw new UsageError(`cannot reach the crawl's NATS server at ${url}: ${(err as Error).message}`);
  }
  return awaitJetStream(nc, name);
}

/** NATS_URL; else the embedded server of a crawl running on this directory; else an embedded server started on its store. */
export async function joinOrOpenCrawl(outDir: string, name: string): Promise<{ nc: NatsConnection; close(): Promise<void> }> {
  const urlFile = path.join(natsDir(outDir), 'server-url');
  // the pid file exists only while that server runs: a stale URL's port may belong to another server by now
  const running = existsSync(path.join(natsDir(outDir), 'nats-server.pid'));
  if (!natsUrlFromEnv() && running && existsSync(urlFile)) {
    try {
      const nc = await connectNats(readFileSync(urlFile, 'utf8').trim(), name);
      return { nc, close: () => nc.drain().catch(() => undefined) };
    } catch {
      /* no crawl running there: start the store's server below */
    }
  }
  if (!natsUrlFromEnv() && !hasEmbeddedStore(outDir)) throw new UsageError(`no crawl in ${outDir}: set NATS_URL, or give the --out of a crawl`);
  return openCrawlConnection(outDir, name);
}
