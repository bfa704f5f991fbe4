import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedServer, type EmbeddedServer } from '../../ops/nats/embedded-server.js';

/** A real nats-server with JetStream on a free loopback port and a temporary store; `stop` removes both. */
export async function startTestNats(): Promise<EmbeddedServer & { cleanup(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-nats-'));
  const server = await startEmbeddedServer(dir);
  return {
    ...server,
    async cleanup() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
