/**
 * `npm run bench:seen`: the seen set at 10 million URLs, three runs, medians printed.
 *
 * Part 1, in a fresh child process per run (so memory deltas are this structure's alone):
 * 10M distinct URLs through 16 partition seen sets planned for 10M in all (what a seen-filter
 * process holding every partition does per candidate: hash, Bloom check+add, remember the
 * unsettled message; settled every 10k messages as the ack floor moves), then 1M URLs seen
 * before. Reports checks/s (URL generation excluded), the filters' own bytes per URL, heap and
 * RSS growth per URL, the snapshot size and encode time.
 *
 * Part 3 (exactRecordRun): what confirming Bloom hits in the exact record costs per URL.
 *
 * Part 2, against a real nats-server: partition 0 holding 625k URLs (10M / 16) is saved as a
 * snapshot in the crawl-seen bucket, then 100k candidates are published on crawl.normalized.0
 * and consumed; "restart" = openSeenPartition: load the snapshot and replay those 100k.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstream } from '@nats-io/jetstream';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { openKvStores } from '../pipeline/adapters/nats-kv.js';
import { createNodeContext } from '../app/node.js';
import { applyCrawlTopology } from '../ops/nats/crawl-topology.js';
import { silentLogger } from '../pipeline/logger.js';
import { parseSettings } from '../pipeline/settings.js';
import { partitionOf } from '../pipeline/partition.js';
import { startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { encodeCandidate, type CandidateUrl } from '../schemas/index.js';
import { BUCKETS } from '../topology/index.js';
import { handleSeenFilter } from '../stages/seen-filter/handle.js';
import { cpuSeconds, rssMb } from './proc-stats.js';
import { seenFilterStage } from '../stages/seen-filter/index.js';
import { openSeenPartition } from '../stages/seen-filter/partition.js';
import { PartitionSeenSet } from '../stages/seen-filter/partition-seen-set.js';
import { hashKey } from '../stages/seen-filter/bloom-filter.js';
import { encodeSnapshot } from '../stages/seen-filter/snapshot-codec.js';
import { exactKeyOf } from '../stages/seen-filter/exact-key.js';
import { SnapshotStore } from '../stages/seen-filter/snapshot-store.js';
import { median } from './stats.js';

const URLS = Number(process.env.BENCH_SEEN_URLS ?? 10_000_000);
const REPLAY = Number(process.env.BENCH_SEEN_REPLAY ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PARTITIONS = 16;
const CHUNK = 100_000;
const RECORD_URLS = Number(process.env.BENCH_SEEN_RECORD_URLS ?? 100_000);

/**
 * ~80-character URLs over 200k hosts. A template literal makes a rope (cons string) that V8
 * flattens on first read; URLs decoded from a message are flat, so the rope is flattened
 * here, outside the timed part.
 */
const urlOf = (i: number) => flat(`https://www.site${i % 200_003}.example/articles/${i}/index.html?ref=${(i * 2654435761) >>> 0}`);
const flat = (s: string) => (s.charCodeAt(0), s);
const hostOf = (i: number) => `www.site${i % 200_003}.example`;

interface MemoryRun {
  checksPerSec: number;
  seenChecksPerSec: number;
  /** of those seen URLs (the oldest million, none in the recent keys), the share that needs a KV read */
  seenReadsPerUrl: number;
  filterBytesPerUrl: number;
  heapBytesPerUrl: number;
  rssBytesPerUrl: number;
  snapshotBytes: number;
  snapshotEncodeMs: number;
  falsePositives: number;
  /** after all 10M: the share of never-seen URLs taken for seen (what a new URL risks now) */
  finalFalsePositiveRate: number;
}

function memoryRun(): MemoryRun {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  const before = process.memoryUsage();
  const sets = Array.from({ length: PARTITIONS }, () => PartitionSeenSet.empty(Math.ceil(URLS / PARTITIONS), 0));
  let checkMs = 0;
  let falsePositives = 0;
  const urls: string[] = new Array(CHUNK);
  const parts: number[] = new Array(CHUNK);
  for (let start = 0; start < URLS; start += CHUNK) {
    const n = Math.min(CHUNK, URLS - start);
    for (let j = 0; j < n; j++) {
      urls[j] = urlOf(start + j);
      parts[j] = partitionOf(hostOf(start + j), PARTITIONS);
    }
    const t0 = performance.now();
    for (let j = 0; j < n; j++) {
      const seq = start + j + 1;
      const set = sets[parts[j]!]!;
      const exact = exactKeyOf('bench', urls[j]!);
      // a Bloom hit on a new URL: the exact record answers it (part 3 measures that read)
      if (set.check(urls[j]!, exact, seq).kind !== 'new') falsePositives += 1;
      else set.recorded(exact); // as the handler does once the key is written
      // the ack floor follows about 10k messages behind, as with max ack pending ~1000 per partition
      if (seq % 10_000 === 0) for (const s of sets) s.settle(seq - 10_000);
    }
    checkMs += performance.now() - t0;
  }
  for (const s of sets) s.settle(URLS);
  urls.fill(''); // the bench's own last chunk of URL strings is not the structure's memory
  gc();
  const after = process.memoryUsage();
  // URLs seen before: the common case for discovered links
  const seenN = Math.min(1_000_000, URLS - (URLS % CHUNK));
  let seenMs = 0;
  let seenReads = 0;
  for (let start = 0; start < seenN; start += CHUNK) {
    for (let j = 0; j < CHUNK; j++) {
      urls[j] = urlOf(start + j);
      parts[j] = partitionOf(hostOf(start + j), PARTITIONS);
    }
    const t0 = performance.now();
    for (let j = 0; j < CHUNK; j++) if (sets[parts[j]!]!.check(urls[j]!, exactKeyOf('bench', urls[j]!), URLS + start + j + 1).kind === 'unconfirmed') seenReads += 1;
    seenMs += performance.now() - t0;
  }
  const probes = 1_000_000;
  let hits = 0;
  for (let i = 0; i < probes; i++) {
    const host = `www.other${i % 200_003}.example`;
    if (sets[partitionOf(host, PARTITIONS)]!.filter.has(hashKey(`https://${host}/never/${i}`))) hits += 1;
  }
  const t0 = performance.now();
  const snapshotBytes = sets.reduce((n, s, p) => n + encodeSnapshot(p, s).length, 0);
  const snapshotEncodeMs = performance.now() - t0;
  const filterBytes = sets.reduce((n, s) => n + s.filter.byteSize, 0);
  return {
    checksPerSec: URLS / (checkMs / 1000),
    seenChecksPerSec: seenN / (seenMs / 1000),
    seenReadsPerUrl: seenReads / seenN,
    filterBytesPerUrl: filterBytes / URLS,
    heapBytesPerUrl: (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / URLS,
    rssBytesPerUrl: (after.rss - before.rss) / URLS,
    snapshotBytes,
    snapshotEncodeMs,
    falsePositives,
    finalFalsePositiveRate: hits / probes,
  };
}

async function restartRuns(): Promise<Array<{ ms: number; replayed: number; snapshotBytes: number }>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'seen-bench-'));
  const server = await startEmbeddedServer(dir);
  const nc = await connectNats(server.url, 'seen-bench');
  try {
    const settings = parseSettings({ crawlId: 'bench', partitions: PARTITIONS, seenExpectedUrls: URLS });
    const jsm = await applyCrawlTopology(nc, { partitions: PARTITIONS });
    const kv = await openKvStores(nc);
    // partition 0's share of the 10M, as the last snapshot before a crash holds it
    const perPartition = Math.ceil(URLS / PARTITIONS);
    const set = PartitionSeenSet.empty(perPartition, 0);
    for (let i = 0; i < perPartition; i++) set.check(urlOf(i), exactKeyOf('bench', urlOf(i)), i + 1);
    set.settle(perPartition);
    set.settledSeq = 0;
    const snapshot = encodeSnapshot(0, set);
    await new SnapshotStore(kv.seen, settings.crawlId).save(0, snapshot, null, Date.now());
    // 100k candidates after the snapshot, delivered and acked (as the dead owner did)
    const js = jetstream(nc);
    for (let start = 0; start < REPLAY; start += 1000) {
      const batch = [];
      for (let i = start; i < Math.min(REPLAY, start + 1000); i++) {
        const url = `https://www.after.example/replayed/${i}`;
        batch.push(js.publish('crawl.normalized.0', encodeCandidate({ v: 1, url, host: 'www.after.example', domain: 'after.example', depth: 1, source_url: null, via: 'link' })));
      }
      await Promise.all(batch);
    }
    const consumer = await js.consumers.get('CRAWL_NORMALIZED', 'seen-filter-p0');
    let acked = 0;
    const messages = await consumer.consume({ max_messages: 1000 });
    for await (const m of messages) {
      m.ack();
      if (++acked === REPLAY) break;
    }
    messages.stop();
    await nc.flush();
    for (;;) {
      const info = await jsm.consumers.info('CRAWL_NORMALIZED', 'seen-filter-p0');
      if (info.num_ack_pending === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const { ctx } = await createNodeContext(nc, settings, silentLogger());
    const runs = [];
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      const open = await openSeenPartition(seenFilterStage, 0, ctx);
      runs.push({ ms: performance.now() - t0, replayed: open.replayed, snapshotBytes: snapshot.length });
      if (open.seen.filter.count < perPartition) throw new Error('the loaded set lost URLs');
    }
    return runs;
  } finally {
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface RecordPhase {
  /** the seen-filter's CPU (this process) and nats-server's, per URL, in µs */
  cpuUs: number;
  natsCpuUs: number;
  kvReads: number;
  kvWrites: number;
}

interface RecordRun {
  phases: Record<string, RecordPhase>;
  /** what the exact record costs nats-server per URL: stream bytes on disk, RSS growth */
  storedBytesPerUrl: number;
  natsRssBytesPerUrl: number;
}

/**
 * Part 3, against a real nats-server: the seen-filter's handler (hash, Bloom, exact record)
 * over RECORD_URLS new URLs in messages of 50 (a page's links), 16 messages at a time (the
 * runner's concurrency), then the same URLs as repeats: first the last ones again (their keys
 * in the partition's recent keys), then all of them by a process that just took the partition
 * over (no recent keys: a read each). The same phases with a set that keeps no exact record
 * (what a Bloom filter alone costs, before) give the difference.
 */
async function exactRecordRun(): Promise<RecordRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'seen-bench-kv-'));
  const server = await startEmbeddedServer(dir);
  const nc = await connectNats(server.url, 'seen-bench-kv');
  try {
    const settings = parseSettings({ crawlId: 'bench', partitions: PARTITIONS, seenExpectedUrls: RECORD_URLS * PARTITIONS });
    const jsm = await applyCrawlTopology(nc, { partitions: PARTITIONS });
    const { ctx } = await createNodeContext(nc, settings, silentLogger());
    const ops = { reads: 0, writes: 0 };
    const { get, put } = ctx.kv.seenKeys;
    ctx.kv.seenKeys.get = (k) => ((ops.reads += 1), get.call(ctx.kv.seenKeys, k));
    ctx.kv.seenKeys.put = (k, v) => ((ops.writes += 1), put.call(ctx.kv.seenKeys, k, v));
    const host = 'www.record.example';
    const candidate = (i: number): CandidateUrl => ({ v: 1, url: flat(`https://${host}/articles/${i}/index.html?ref=${(i * 2654435761) >>> 0}`), host, domain: 'record.example', depth: 1, source_url: null, via: 'link' });
    let seq = 0;
    const phase = async (set: PartitionSeenSet, from: number, to: number): Promise<RecordPhase> => {
      const messages: CandidateUrl[][] = [];
      for (let at = from; at < to; at += 50) messages.push(Array.from({ length: Math.min(50, to - at) }, (_, j) => candidate(at + j)));
      const before = { ...ops };
      const natsBefore = cpuSeconds(server.pid) ?? 0;
      const cpuBefore = process.cpuUsage();
      let next = 0;
      const worker = async () => {
        while (next < messages.length) {
          const m = messages[next++]!;
          await handleSeenFilter({ subject: 'crawl.normalized.0', message: m, deliveryCount: 1, streamSeq: ++seq }, ctx, set);
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      const cpu = process.cpuUsage(cpuBefore);
      const n = to - from;
      return {
        cpuUs: (cpu.user + cpu.system) / n,
        natsCpuUs: (((cpuSeconds(server.pid) ?? natsBefore) - natsBefore) * 1e6) / n,
        kvReads: (ops.reads - before.reads) / n,
        kvWrites: (ops.writes - before.writes) / n,
      };
    };
    const phases: Record<string, RecordPhase> = {};
    const recent = Math.min(RECORD_URLS, 4_000);
    // before: a Bloom filter alone (no keys written, a hit taken as seen)
    const bloomOnly = new PartitionSeenSet(PartitionSeenSet.empty(RECORD_URLS, 0).filter, 0, false);
    phases['new URLs, Bloom filter alone'] = await phase(bloomOnly, 0, RECORD_URLS);
    phases['repeats, Bloom filter alone'] = await phase(bloomOnly, 0, RECORD_URLS);
    // after: hits confirmed in the exact record (a second range of URLs, so the record starts empty of them)
    const rssBefore = rssMb(server.pid);
    const streamBefore = (await jsm.streams.info(`KV_${BUCKETS.seenKeys}`)).state.bytes;
    const exact = PartitionSeenSet.empty(RECORD_URLS, 0);
    phases['new URLs, with the exact record'] = await phase(exact, RECORD_URLS, 2 * RECORD_URLS);
    const storedBytesPerUrl = ((await jsm.streams.info(`KV_${BUCKETS.seenKeys}`)).state.bytes - streamBefore) / RECORD_URLS;
    // once the server has dropped its cache of the blocks just written (it does after a few
    // seconds unused): what stays is the per-key index
    await new Promise((r) => setTimeout(r, 15_000));
    const natsRssBytesPerUrl = ((rssMb(server.pid) - rssBefore) * 1024 * 1024) / RECORD_URLS;
    phases['repeats in the recent keys'] = await phase(exact, 2 * RECORD_URLS - recent, 2 * RECORD_URLS);
    const takenOver = new PartitionSeenSet(exact.filter, 0, true);
    phases['repeats after a takeover (no recent keys)'] = await phase(takenOver, RECORD_URLS, 2 * RECORD_URLS);
    return { phases, storedBytesPerUrl, natsRssBytesPerUrl };
  } finally {
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (x: number, digits = 2) => x.toLocaleString('en-US', { maximumFractionDigits: digits });

async function main(): Promise<void> {
  if (process.argv.includes('--memory-run')) {
    process.stdout.write(JSON.stringify(memoryRun()));
    return;
  }
  const self = fileURLToPath(import.meta.url);
  const runs: MemoryRun[] = [];
  for (let r = 0; r < RUNS; r++) {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--expose-gc', self, '--memory-run'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (c: Buffer) => (text += c.toString()));
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`memory run exited with ${code}`))));
    });
    const run = JSON.parse(out) as MemoryRun;
    runs.push(run);
    process.stdout.write(`run ${r + 1}: ${fmt(run.checksPerSec, 0)} checks/s (new URLs), ${fmt(run.seenChecksPerSec, 0)} checks/s (seen URLs), filter ${fmt(run.filterBytesPerUrl)} B/URL, heap ${fmt(run.heapBytesPerUrl)} B/URL, RSS ${fmt(run.rssBytesPerUrl)} B/URL, snapshot ${fmt(run.snapshotBytes / 1e6)} MB in ${fmt(run.snapshotEncodeMs, 0)} ms, ${run.falsePositives} new URLs taken for seen while filling, false-positive rate at the end ${fmt(run.finalFalsePositiveRate * 100, 4)} %\n`);
  }
  const records: RecordRun[] = [];
  for (let r = 0; r < RUNS; r++) {
    const run = await exactRecordRun();
    records.push(run);
    process.stdout.write(`exact record run ${r + 1}: ${Object.entries(run.phases).map(([name, p]) => `${name} ${fmt(p.cpuUs)} µs + nats ${fmt(p.natsCpuUs)} µs, ${fmt(p.kvReads)} reads + ${fmt(p.kvWrites)} writes`).join('; ')}; ${fmt(run.storedBytesPerUrl, 0)} B stored and ${fmt(run.natsRssBytesPerUrl, 0)} B nats-server RSS per key\n`);
  }
  const restarts = await restartRuns();
  for (const [i, r] of restarts.entries()) process.stdout.write(`restart ${i + 1}: ${fmt(r.ms, 0)} ms (snapshot ${fmt(r.snapshotBytes / 1e6)} MB + replay of ${r.replayed} messages)\n`);
  const m = (k: keyof MemoryRun) => median(runs.map((r) => r[k]));
  process.stdout.write(
    `\nmedians of ${RUNS} runs, ${fmt(URLS, 0)} URLs in ${PARTITIONS} partitions:\n` +
      `  checks/s, new URLs:        ${fmt(m('checksPerSec'), 0)}\n` +
      `  checks/s, seen URLs:       ${fmt(m('seenChecksPerSec'), 0)}\n` +
      `  filter bytes per URL:      ${fmt(m('filterBytesPerUrl'))}\n` +
      `  heap growth per URL:       ${fmt(m('heapBytesPerUrl'))} B\n` +
      `  RSS growth per URL:        ${fmt(m('rssBytesPerUrl'))} B\n` +
      `  snapshot, all partitions:  ${fmt(m('snapshotBytes') / 1e6)} MB (encode ${fmt(m('snapshotEncodeMs'), 0)} ms)\n` +
      `  new URLs taken for seen while filling: ${fmt(m('falsePositives'), 0)} (${fmt((m('falsePositives') / URLS) * 100, 4)} %)\n` +
      `  false-positive rate once full (1M never-seen URLs probed): ${fmt(m('finalFalsePositiveRate') * 100, 4)} %\n` +
      `  restart of one partition (load ${fmt(restarts[0]!.snapshotBytes / 1e6)} MB snapshot + replay ${REPLAY}): ${fmt(median(restarts.map((r) => r.ms)), 0)} ms\n` +
      `  seen URLs needing a KV read (the oldest million, out of the recent keys): ${fmt(m('seenReadsPerUrl') * 100, 2)} %\n` +
      `\nthe seen-filter's handler per URL against nats-server, ${fmt(RECORD_URLS, 0)} URLs in messages of 50 (medians of ${RUNS}):\n` +
      `| case | CPU, seen-filter (µs) | CPU, nats-server (µs) | KV reads | KV writes |\n|---|---|---|---|---|\n` +
      Object.keys(records[0]!.phases)
        .map((name) => {
          const p = (k: keyof RecordPhase) => median(records.map((r) => r.phases[name]![k]));
          return `| ${name} | ${fmt(p('cpuUs'), 1)} | ${fmt(p('natsCpuUs'), 1)} | ${fmt(p('kvReads'))} | ${fmt(p('kvWrites'))} |\n`;
        })
        .join('') +
      `exact record per URL: ${fmt(median(records.map((r) => r.storedBytesPerUrl)), 0)} B in the KV stream, ${fmt(median(records.map((r) => r.natsRssBytesPerUrl)), 0)} B of nats-server RSS\n`,
  );
}

await main();
