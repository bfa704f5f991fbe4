/**
 * `node dist/bench/publish-cost.js`: the crawl process's CPU a JetStream publish, through the
 * JetStream client's `publish` and through the runner's publisher
 * (pipeline/adapters/jetstream-publisher.ts), against a real nats-server on loopback.
 *
 * Each round publishes 40,000 messages of 300 bytes with msgIds (a host-queue message's
 * size), eight at a time as a handler's outputs are, with 16 such groups in flight; the two
 * ways take turns, four rounds each after a warm-up, and the medians are printed. Only this
 * process's CPU is counted (nats-server's is the same for both: the same messages reach it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { jetstreamPublisher } from '../pipeline/adapters/jetstream-publisher.js';
import { startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { median } from './stats.js';

const MESSAGES = 40_000;
const GROUP = 8;
const GROUPS_IN_FLIGHT = 16;

type PublishGroup = (group: Array<{ subject: string; data: Uint8Array; msgId: string }>) => Promise<unknown>;

/** Microseconds of this process's CPU a message. */
async function round(publishGroup: PublishGroup, tag: string): Promise<number> {
  const payload = new Uint8Array(300).fill(65);
  const inFlight: Array<Promise<unknown>> = [];
  const before = process.cpuUsage();
  for (let i = 0; i < MESSAGES; i += GROUP) {
    const group = Array.from({ length: GROUP }, (_, k) => ({ subject: `bench.${(i + k) % 64}`, data: payload, msgId: `${tag}-${i + k}` }));
    inFlight.push(publishGroup(group));
    if (inFlight.length >= GROUPS_IN_FLIGHT) await inFlight.shift();
  }
  await Promise.all(inFlight);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / MESSAGES;
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'publish-cost-'));
  const server = await startEmbeddedServer(dir);
  const nc = await connectNats(server.url, 'publish-cost');
  try {
    await (await jetstreamManager(nc)).streams.add({ name: 'BENCH', subjects: ['bench.>'] });
    const js = jetstream(nc);
    const publisher = jetstreamPublisher(nc);
    const ways: Array<[string, PublishGroup]> = [
      ['JetStream client publish', (g) => Promise.all(g.map((m) => js.publish(m.subject, m.data, { msgID: m.msgId })))],
      ['runner publisher', (g) => publisher.publish(g)],
    ];
    for (const [name, way] of ways) await round(way, `warm-${name}`);
    const times = new Map<string, number[]>(ways.map(([name]) => [name, []]));
    for (let r = 0; r < 4; r++) for (const [name, way] of ways) times.get(name)!.push(await round(way, `${name}-${r}`));
    for (const [name, us] of times) console.log(`${name}: ${median(us).toFixed(1)} µs of CPU a message (rounds: ${us.map((u) => u.toFixed(1)).join(', ')})`);
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
