import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { startEmbeddedServer, type EmbeddedServer } from '../../ops/nats/embedded-server.js';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { applyCrawlTopology, type TopologyOptions } from '../../ops/nats/crawl-topology.js';

/**
 * A real nats-server with JetStream on a free loopback port and a temporary store; `stop` removes both.
 * `maxPayloadBytes`: the server's max_payload (default: the embedded server's 8 MiB; a stock server's is 1 MiB).
 */
export async function startTestNats(opts: { maxPayloadBytes?: number } = {}): Promise<EmbeddedServer & { cleanup(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-nats-'));
  const server = await startEmbeddedServer(dir, opts);
  return {
    ...server,
    async cleanup() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TestNatsFixture {
  readonly url: string;
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
}

/**
 * A real nats-server for the enclosing describe block: started and connected before its
 * tests (with the crawl topology applied, unless `topology` is null), stopped after them.
 */
export function useTestNats(topology: TopologyOptions | null = {}, serverOptions: { maxPayloadBytes?: number } = {}): TestNatsFixture {
  let server: Awaited<ReturnType<typeof startTestNats>> | undefined;
  let nc: NatsConnection | undefined;
  let jsm: JetStreamManager | undefined;
  before(async () => {
    server = await startTestNats(serverOptions);
    nc = await connectNats(server.url, 'test');
    jsm = topology ? await applyCrawlTopology(nc, topology) : await jetstreamManager(nc);
  });
  after(async () => {
    await nc?.close();
    await server?.cleanup();
  });
  const ready = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('useTestNats: the server is not started yet (use it inside a test)');
    return v;
  };
  return {
    get url() {
      return ready(server).url;
    },
    get nc() {
      return ready(nc);
    },
    get jsm() {
      return ready(jsm);
    },
  };
}
