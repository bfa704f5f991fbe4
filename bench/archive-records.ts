/**
 * `node dist/bench/archive-records.js [--exchanges 3300] [--rounds 5]`: what the archive
 * stage costs the main thread. `crawl run` runs every stage in one process, so CPU the
 * archive spends on the main thread is taken from every other stage.
 *
 * Bench-host pages rendered by the test web (as a bench crawl fetches them) go through the
 * stage's handler (digests bucket in memory, records, WARC file in a temp dir, captures
 * rows to a writer that drops them), with 200 exchanges in flight as the runner keeps them.
 * Per exchange: main-thread CPU (Linux: /proc/self/task/<pid>/stat, the main thread's own
 * counters), CPU of the whole process (the main thread plus libuv's pool), and wall time.
 * Medians of the rounds.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MemoryKvStore } from './support/memory-kv-store.js';
import type { StageContext, StageInput } from '../pipeline/stage.js';
import type { ArchivedExchange } from '../schemas/index.js';
import { createArchiveHandler } from '../stages/archive/handle.js';
import { ArchiveSink } from '../stages/archive/sink.js';
import { WarcFileSink } from '../pipeline/adapters/warc/file-sink.js';
import { warcinfoHeader } from '../stages/archive/warcinfo.js';
import { buildSiteModel, renderPage } from '../testweb/index.js';
import { median } from './stats.js';

const { values } = parseArgs({ options: { exchanges: { type: 'string', default: '3300' }, rounds: { type: 'string', default: '5' } } });
const EXCHANGES = Number(values.exchanges);
const ROUNDS = Number(values.rounds);
const IN_FLIGHT = 200;
const TICK_MS = 10; // USER_HZ 100

/** User + system CPU ms of one thread of this process. */
function threadCpuMs(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

function exchanges(): ArchivedExchange[] {
  const model = buildSiteModel({ hosts: 0, benchHosts: 60, benchPagesPerHost: 55, seed: 7 });
  const out: ArchivedExchange[] = [];
  const t = Date.UTC(2024, 0, 2);
  for (const host of model.hosts) {
    for (const r of host.resources.values()) {
      if (r.kind !== 'html' || out.length >= EXCHANGES) continue;
      const body = Buffer.from(renderPage(host.name, r), 'utf8');
      const i = out.length;
      out.push({
        v: 1,
        fetch_id: `f${i}`,
        url: `http://${host.name}${r.path}`,
        host: host.name,
        domain: 'bench.test',
        depth: 1,
        fetch_time: t + i,
        fetch_status: 200,
        duration_ms: 3,
        content_type: 'text/html',
        charset: 'utf-8',
        headers: { 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length), date: new Date(t).toUTCString(), server: 'testweb' },
        body,
        truncated: false,
        exchange: {
          kind: 'page',
          capture_id: `f${i}:0`,
          method: 'GET',
          request_headers: [
            ['host', host.name],
            ['user-agent', 'testcrawler/1.0 (+http://example.test/bot)'],
            ['accept', 'text/html,application/xhtml+xml'],
            ['accept-encoding', 'gzip, br'],
          ],
          status_text: 'OK',
          remote_ip: '127.0.0.1',
          failure: null,
          redirect: null,
          robots: 'allowed',
          refers_to_date: null,
          attempt: 0,
        },
      });
    }
  }
  return out;
}

async function round(all: ArchivedExchange[]): Promise<{ mainMs: number; processMs: number; wallMs: number; bytes: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'archive-bench-'));
  try {
    const warc = new WarcFileSink(dir, { crawlId: 'bench', maxBytes: 1 << 30, fileHeader: warcinfoHeader('bench', 'bench') });
    let bytes = 0;
    const captures = {
      write: async (b: { captures?: Array<{ warc_record_length: number }> }) => {
        for (const c of b.captures ?? []) bytes += c.warc_record_length;
      },
      close: async () => {},
    };
    // batches by count, not by the 1 s timer: the wall time is then the work, not the waiting
    const sink = new ArchiveSink(warc, captures, { maxRows: 100, maxDelayMs: 1000 });
    const handle = createArchiveHandler(sink);
    const ctx = { settings: { crawlId: 'bench' }, metrics: { count: () => undefined }, kv: { digests: new MemoryKvStore() } } as unknown as StageContext;
    const main0 = threadCpuMs(process.pid);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < all.length) {
        const e = all[next++]!;
        await handle({ subject: 'crawl.exchanges.0', message: e, deliveryCount: 1, streamSeq: next } satisfies StageInput<ArchivedExchange>, ctx);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    await sink.close();
    const cpu = process.cpuUsage(cpu0);
    return { mainMs: threadCpuMs(process.pid) - main0, processMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0, bytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}


const all = exchanges();
const bodyKb = all.reduce((n, e) => n + e.body.length, 0) / all.length / 1024;
await round(all.slice(0, 300)); // warm-up: JIT, zlib, file system
const runs = [];
for (let i = 0; i < ROUNDS; i++) runs.push(await round(all));
const per = (ms: number) => ((ms / all.length) * 1000).toFixed(0);
process.stdout.write(
  `${all.length} exchanges (bodies ${bodyKb.toFixed(1)} KB on average), ${ROUNDS} rounds, medians per exchange: ` +
    `main thread ${per(median(runs.map((r) => r.mainMs)))} µs, process ${per(median(runs.map((r) => r.processMs)))} µs, ` +
    `wall ${per(median(runs.map((r) => r.wallMs)))} µs; main-record bytes ${(runs[0]!.bytes / all.length).toFixed(0)}\n`,
);
