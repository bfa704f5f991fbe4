/** A real nats-server (temporary store, free loopback port) with the fingerprint bucket as the topology creates it. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kvm } from '@nats-io/kv';
import { StorageType } from '@nats-io/jetstream';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { NatsKvStore } from '../pipeline/adapters/nats-kv.js';
import { startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { BUCKETS } from '../topology/index.js';

export interface BenchKv {
  store: NatsKvStore;
  close(): Promise<void>;
}

export async function startFingerprintBucket(): Promise<BenchKv> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-neardup-'));
  const server = await startEmbeddedServer(dir);
  const nc = await connectNats(server.url, 'near-dup-bench');
  // the same bucket settings as ops/nats/topology.ts
  const kv = await new Kvm(nc).create(BUCKETS.fingerprints, { history: 1, storage: StorageType.File });
  return {
    store: new NatsKvStore(kv),
    async close() {
      await nc.close();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
