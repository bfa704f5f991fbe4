/**
 * `npm run bench:hostq`: what removing served URLs from the host-queue stream costs a URL.
 *
 * A fresh nats-server (the embedded one) holds a CRAWL_HOSTQ as the topology makes it, with
 * HOSTS × PER URL messages of 300 bytes interleaved across hosts, as an intake fills it. Then,
 * 64 requests at a time: one delete by sequence per served URL (what the gate and fetch do,
 * stages/shared/politeness/served-urls.ts), the same on a memory stream (the JetStream API's own
 * share), a direct get of a host's next URL (what the gate already does per URL, for scale),
 * and a purge of one host's subject below a sequence (the alternative: one request for many
 * URLs; one at a time). Prints nats-server and client CPU per operation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstream, jetstreamManager, DiscardPolicy, RetentionPolicy, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { cpuSeconds } from './proc-stats.js';

const HOSTS = Number(process.env.BENCH_HOSTQ_HOSTS ?? 2000);
const PER = Number(process.env.BENCH_HOSTQ_PER_HOST ?? 100);
const OPS = Math.min(40_000, HOSTS * PER);
const PURGES = Math.min(200, HOSTS);
const CONCURRENCY = 64;

const subject = (h: number) => `crawl.hostq.${h % 16}.h${h}`;

async function timed(pid: number, n: number, work: (i: number) => Promise<unknown>, concurrency = CONCURRENCY): Promise<{ serverMs: number; clientMs: number }> {
  const server0 = cpuSeconds(pid) ?? 0;
  const client0 = process.cpuUsage();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) await work(next++);
  }));
  const client = process.cpuUsage(client0);
  return { serverMs: (((cpuSeconds(pid) ?? 0) - server0) * 1000) / n, clientMs: (client.user + client.system) / 1000 / n };
}

async function fill(jsm: JetStreamManager, name: string, storage: StorageType, publish: (s: string, d: Uint8Array) => Promise<unknown>): Promise<void> {
  await jsm.streams.add({ name, subjects: [name === 'CRAWL_HOSTQ' ? 'crawl.hostq.*.*' : `${name}.*.*`], retention: RetentionPolicy.Limits, storage, discard: DiscardPolicy.New, max_age: 0, max_bytes: -1, allow_direct: true });
  const body = new Uint8Array(300);
  for (let r = 0; r < PER; r++) {
    await Promise.all(Array.from({ length: HOSTS }, (_, h) => publish(name === 'CRAWL_HOSTQ' ? subject(h) : `${name}.${h % 16}.h${h}`, body)));
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-hostq-'));
  const server = await startEmbeddedServer(dir);
  const nc = await connectNats(server.url, 'bench-hostq');
  try {
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    const publish = (s: string, d: Uint8Array) => js.publish(s, d);
    await fill(jsm, 'CRAWL_HOSTQ', StorageType.File, publish);
    await fill(jsm, 'MEMQ', StorageType.Memory, publish);
    const line = (what: string, r: { serverMs: number; clientMs: number }) => console.log(`${what.padEnd(58)} nats-server ${r.serverMs.toFixed(3)} ms  client ${r.clientMs.toFixed(3)} ms`);
    console.log(`nats-server ${server.pid}; ${HOSTS} hosts × ${PER} URLs of 300 bytes; ${CONCURRENCY} requests at a time`);
    line('delete by sequence, a URL (file stream)', await timed(server.pid, OPS, (i) => jsm.streams.deleteMessage('CRAWL_HOSTQ', i + 1, false)));
    line('delete by sequence, a URL (memory stream: the API share)', await timed(server.pid, OPS, (i) => jsm.streams.deleteMessage('MEMQ', i + 1, false)));
    line("direct get of a host's next URL (for scale)", await timed(server.pid, OPS, (i) => jsm.direct.getMessage('CRAWL_HOSTQ', { seq: OPS + 1, next_by_subj: subject(i % HOSTS) })));
    const cut = Math.floor(PER * 0.6) * HOSTS;
    // one at a time: each holds the stream for tens of ms, and 64 queued up outlast a request's timeout
    line("purge of one host's subject below a sequence, a purge", await timed(server.pid, PURGES, (h) => jsm.streams.purge('CRAWL_HOSTQ', { filter: subject(h), seq: cut + h + 1 }), 1));
  } finally {
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
