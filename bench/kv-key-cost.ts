/**
 * What a KV key costs the nats-server: `node dist/bench/kv-key-cost.js [N] [valueBytes]`
 * (default 200,000 keys of 450 bytes, about a host slot of `crawl-hosts` as bench:broad
 * stores them). Starts a nats-server as `crawl run` would, puts N keys into a bucket as the
 * crawler's buckets are made (history 1, file storage), and reports the server's resident
 * memory and the bucket's stream bytes per key, and how long a watch takes to replay them all
 * (what every gate does on start with `crawl-hosts`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kvm } from '@nats-io/kv';
import { jetstreamManager } from '@nats-io/jetstream';
import { startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { rssMb } from './proc-stats.js';

const N = Number(process.argv[2] ?? 200_000);
const VALUE_BYTES = Number(process.argv[3] ?? 450);

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kv-key-cost-'));
  const server = await startEmbeddedServer(path.join(dir, '.nats'));
  const nc = await connectNats(server.url, 'kv-key-cost');
  try {
    const kvm = new Kvm(nc);
    const kv = await kvm.create('cost', { history: 1 });
    await kv.put('warm', new Uint8Array(VALUE_BYTES));
    await new Promise((r) => setTimeout(r, 1000));
    const before = rssMb(server.pid);
    const value = new Uint8Array(VALUE_BYTES).fill(0x61);
    const started = performance.now();
    for (let i = 0; i < N; i += 500) {
      await Promise.all(Array.from({ length: Math.min(500, N - i) }, (_, k) => kv.put(`d${String(i + k).padStart(7, '0')}.test`, value)));
    }
    const putSeconds = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 2000));
    const after = rssMb(server.pid);
    const info = await (await jetstreamManager(nc)).streams.info('KV_cost');
    const replayStarted = performance.now();
    const watch = await kv.watch();
    let seen = 0;
    for await (const e of watch) {
      void e;
      if (++seen >= N + 1) break;
    }
    watch.stop();
    const replaySeconds = (performance.now() - replayStarted) / 1000;
    console.log(`${N} keys of ${VALUE_BYTES} B in ${putSeconds.toFixed(1)} s (${(N / putSeconds).toFixed(0)} puts/s, 500 in flight)`);
    console.log(`nats-server RSS ${before.toFixed(0)} -> ${after.toFixed(0)} MB: ${(((after - before) * 1024 * 1024) / N).toFixed(0)} B a key in memory`);
    console.log(`stream KV_cost: ${(Number(info.state.bytes) / N).toFixed(0)} B a key on disk (${(Number(info.state.bytes) / 1e6).toFixed(1)} MB)`);
    console.log(`a watch replays the ${N} keys in ${replaySeconds.toFixed(1)} s (${(N / replaySeconds).toFixed(0)} keys/s)`);
  } finally {
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
