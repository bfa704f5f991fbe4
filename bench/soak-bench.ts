/**
 * `npm run bench:soak`: does a long-running service hold? Starts the test web (site hosts
 * and the fresh hosts, whose pages change every 3, 8 or 20 s), a nats-server, the project's
 * DNS server (every name outside the test web is NXDOMAIN: nothing leaves the machine) and
 * `crawl serve`, creates one job that discovers the web and revisits it (adaptive revisits),
 * and every SOAK_EVERY_S seconds reports the service's RSS and open file handles, the KV
 * buckets' and the other streams' bytes, the pages stored and the requests made. At the end:
 * a table, each KV bucket's growth, and a verdict over the samples after the warm-up (the
 * first window): RSS, handles and KV bytes are flat when the peak of the later half of those
 * samples is within 15 % of the earlier half's. Handles are read every 10 s and a sample
 * keeps the fewest seen since the last (the most beside it): a wave of revisits opens a
 * connection to every host at once for a minute or so, while a leaked handle stays, so the
 * floor climbs only with a leak. The streams keep what
 * passed through them for replay (14 days), so their bytes grow with the work by design:
 * they are reported (and what each request added), not judged.
 *
 *   SOAK_MINUTES   how long (default 60)
 *   SOAK_EVERY_S   seconds between samples (default 300)
 *   SOAK_WARMUP_S  samples up to this are left out of the verdict (default one SOAK_EVERY_S;
 *                  always the first)
 *   SOAK_SCOPE     the job's scope mode (`open`, `domain`, ...) where jobs take one; unset: the
 *                  job has no scope field, which is today's default (the seeds' domains)
 *   SOAK_HOSTS, SOAK_PAGES_PER_HOST  the site hosts (default 20 × 50: discovered in a few
 *                  minutes even on a busy machine, so the warm-up window holds it)
 * Politeness is the default one (1 s between requests to a host), as a service would run.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { startTestDns, startTestWeb } from '../testweb/index.js';
import { freePort, startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { crawlCli, exited } from './crawl-cli.js';
import { rssMb } from './proc-stats.js';
import { sumOf } from './metrics-text.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const EVERY_S = Number(process.env.SOAK_EVERY_S ?? 300);
/** The first samples up to this many seconds in are the warm-up (at least one): discovery of the web. */
const WARMUP_S = Number(process.env.SOAK_WARMUP_S ?? EVERY_S);
const SCOPE = process.env.SOAK_SCOPE;
const HOSTS = Number(process.env.SOAK_HOSTS ?? 20);
const PAGES_PER_HOST = Number(process.env.SOAK_PAGES_PER_HOST ?? 50);
/** Within this, a figure is flat: the later half's peak over the earlier half's, after warm-up. */
const FLAT = 0.15;
// unchanged pages settle near 4.7 × initial (docs/jobs.md): ~10 min here, so an hour sees
// several rounds of every page, and the fresh pages are revisited every 30 s or so
const REVISIT = { initial: '2m', min: '30s', max: '15m' };

interface Sample {
  minute: number;
  rssMb: number;
  natsRssMb: number;
  /** the fewest open file descriptors seen since the last sample (read every 10 s) */
  fds: number;
  /** the most seen since the last sample */
  fdsPeak: number;
  kvBytes: number;
  streamBytes: number;
  pagesStored: number;
  /** responses the fetch stage has had, all told */
  fetched: number;
  outputBytes: number;
}

/** Open file descriptors of a process (sockets, files, pipes), or 0 if it is gone. */
function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    try {
      total += statSync(path.join(e.parentPath, e.name)).size;
    } catch {
      /* removed while we looked (a staging file) */
    }
  }
  return total;
}

/** Bytes held by the KV buckets' streams and by the other streams, and each bucket's bytes and keys. */
async function storeBytes(natsUrl: string): Promise<{ kv: number; streams: number; buckets: Map<string, { bytes: number; keys: number }> }> {
  const nc = await connectNats(natsUrl, 'soak-bench');
  try {
    const jsm = await jetstreamManager(nc);
    let kv = 0;
    let streams = 0;
    const buckets = new Map<string, { bytes: number; keys: number }>();
    for await (const info of jsm.streams.list()) {
      if (info.config.name.startsWith('KV_')) {
        kv += info.state.bytes;
        buckets.set(info.config.name.slice(3), { bytes: info.state.bytes, keys: info.state.messages });
      } else streams += info.state.bytes;
    }
    return { kv, streams, buckets };
  } finally {
    await nc.close();
  }
}

async function scrape(port: number): Promise<{ pages: number; fetched: number; dns: string }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const dns = ['cache', 'negative_cache', 'shared', 'resolved'].map((a) => `${a} ${sumOf(text, 'crawler_dns_lookups_total', (l) => l['answer'] === a)}`).join(', ');
  return { pages: sumOf(text, 'crawler_persist_rows_total', (l) => l['outcome'] === 'page'), fetched: sumOf(text, 'crawler_fetch_responses_total'), dns };
}

async function apiUrl(serve: ChildProcess): Promise<string> {
  let stderr = '';
  serve.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-20_000)));
  for (let i = 0; i < 600; i++) {
    const m = /jobs API on (http:\/\/[^\s/]+)\//.exec(stderr);
    if (m) return m[1]!;
    if (serve.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`crawl serve did not start: ${stderr}`);
}

/** The job: the test web's site and fresh hosts, revisited; `scope` as SOAK_SCOPE says. */
function jobSpec(seeds: string[]): Record<string, unknown> {
  return { name: 'soak', seeds, max_depth: 10, revisit: REVISIT, ...(SCOPE ? { scope: { mode: SCOPE } } : {}) };
}

const mb = (bytes: number) => bytes / 1024 / 1024;

function row(s: Sample, prev: Sample | undefined): string {
  const fetched = prev ? s.fetched - prev.fetched : s.fetched;
  const added = prev ? s.streamBytes - prev.streamBytes : s.streamBytes;
  const perFetch = fetched > 0 ? `${(added / fetched / 1024).toFixed(1)}` : '-';
  return [
    String(s.minute.toFixed(1)).padStart(6),
    s.rssMb.toFixed(0).padStart(7),
    s.natsRssMb.toFixed(0).padStart(8),
    `${s.fds}/${s.fdsPeak}`.padStart(7),
    mb(s.kvBytes).toFixed(2).padStart(7),
    mb(s.streamBytes).toFixed(1).padStart(10),
    perFetch.padStart(13),
    String(fetched).padStart(9),
    String(s.pagesStored).padStart(7),
    mb(s.outputBytes).toFixed(1).padStart(8),
  ].join(' ');
}

const HEADER = `${'minute'.padStart(6)} ${'RSS MB'.padStart(7)} ${'nats MB'.padStart(8)} ${'fds'.padStart(7)} ${'KV MB'.padStart(7)} ${'streams MB'.padStart(10)} ${'KB/request'.padStart(13)} ${'requests'.padStart(9)} ${'pages'.padStart(7)} ${'out MB'.padStart(8)}`;

/** How many samples the warm-up takes: the first at least. */
const warmupSamples = () => Math.max(1, Math.round(WARMUP_S / EVERY_S));

/** How far the later half's high-water mark rose over the earlier half's: a leak climbs, a burst of work does not. */
function climb(values: number[]): number {
  const half = Math.floor(values.length / 2);
  const early = Math.max(...values.slice(0, half));
  const late = Math.max(...values.slice(half));
  return early > 0 ? late / early - 1 : late > 0 ? Infinity : 0;
}

function verdict(samples: Sample[]): boolean {
  const after = samples.slice(warmupSamples());
  if (after.length < 2) {
    console.log(`verdict: not enough samples after the warm-up (${after.length}; need 2): run longer or sample more often`);
    return false;
  }
  const checks: Array<[string, number]> = [
    ['RSS of crawl serve', climb(after.map((s) => s.rssMb))],
    ['open file handles', climb(after.map((s) => s.fds))],
    ['KV bytes', climb(after.map((s) => s.kvBytes))],
  ];
  let flat = true;
  for (const [what, moved] of checks) {
    const ok = moved <= FLAT;
    flat &&= ok;
    const said = Number.isFinite(moved) ? `${moved >= 0 ? '+' : ''}${(100 * moved).toFixed(1)} %` : 'from zero';
    console.log(`  ${what.padEnd(20)} later half's peak ${said} on the earlier half's: ${ok ? 'flat' : 'NOT flat'}`);
  }
  const first = after[0]!;
  const last = after.at(-1)!;
  const hours = (last.minute - first.minute) / 60;
  if (hours > 0) console.log(`  KV grew ${((last.kvBytes - first.kvBytes) / 1024 / hours).toFixed(0)} KB an hour; the streams ${(mb(last.streamBytes - first.streamBytes) / hours).toFixed(1)} MB an hour (kept for replay: they grow with the work)`);
  const peaks = climb(after.map((s) => s.fdsPeak));
  console.log(`  (open file handles at their most between samples: the later half's ${peaks >= 0 ? '+' : ''}${(100 * peaks).toFixed(1)} % on the earlier's, not judged: bursts of connections)`);
  console.log(`verdict: ${flat ? 'FLAT' : 'NOT FLAT'} after warm-up (samples from minute ${first.minute.toFixed(1)}; within ${100 * FLAT} %)`);
  return flat;
}

async function main() {
  const web = await startTestWeb({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, seed: 41, fresh: { hosts: 3, pagesPerHost: 10, periodsSeconds: [3, 8, 20] } });
  const dns = await startTestDns();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-soak-'));
  const out = path.join(dir, 'out');
  const nats = await startEmbeddedServer(path.join(dir, 'nats'));
  const metricsPort = await freePort();
  let serve: ChildProcess | undefined;
  const seeds = [...web.model.siteHostNames.map((h) => web.url(h, '/')), ...web.fresh!.seedUrls()];
  console.log(
    `bench:soak: ${MINUTES} min, a sample every ${EVERY_S} s; ${HOSTS} site hosts × ${PAGES_PER_HOST} pages + 3 fresh hosts × 10; revisits ${JSON.stringify(REVISIT)}; scope ${SCOPE ?? 'default (the seeds\u2019 domains)'}`,
  );
  try {
    const args = ['serve', '--out', out, '--port', '0', '--metrics-port', String(metricsPort), '--revisit-slot-ms', '5000', '--dns-server', `${dns.address}:${dns.port}`];
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    serve = crawlCli(args, { NATS_URL: nats.url, LOG_LEVEL: 'info' }, { stdio: ['ignore', 'ignore', 'pipe'] });
    const pid = serve.pid!;
    const api = await apiUrl(serve);
    const res = await fetch(`${api}/api/v1/jobs`, { method: 'POST', body: JSON.stringify(jobSpec(seeds)) });
    if (res.status !== 201) throw new Error(`job refused: ${res.status} ${await res.text()}`);
    const job = (await res.json()) as { id: string };
    const started = Date.now();
    const samples: Sample[] = [];
    console.log(HEADER);
    let dnsFigures = '';
    // handles between samples: the floor and the high-water mark since the last sample
    let fdRange = { min: Infinity, max: 0 };
    const readFds = () => {
      const n = openFds(pid);
      fdRange = { min: Math.min(fdRange.min, n), max: Math.max(fdRange.max, n) };
    };
    const fdTimer = setInterval(readFds, 10_000).unref();
    const bucketsAt: Array<Map<string, { bytes: number; keys: number }>> = [];
    for (let i = 1; i * EVERY_S <= MINUTES * 60; i++) {
      await sleep(Math.max(0, started + i * EVERY_S * 1000 - Date.now()));
      if (serve.exitCode !== null) throw new Error(`crawl serve exited ${serve.exitCode} at minute ${((Date.now() - started) / 60_000).toFixed(1)}`);
      const [store, progress] = await Promise.all([storeBytes(nats.url), scrape(metricsPort)]);
      readFds();
      dnsFigures = progress.dns;
      bucketsAt.push(store.buckets);
      const s: Sample = {
        minute: (Date.now() - started) / 60_000,
        rssMb: rssMb(pid),
        natsRssMb: rssMb(nats.pid),
        fds: fdRange.min,
        fdsPeak: fdRange.max,
        kvBytes: store.kv,
        streamBytes: store.streams,
        pagesStored: progress.pages,
        fetched: progress.fetched,
        outputBytes: dirBytes(out),
      };
      fdRange = { min: Infinity, max: 0 };
      console.log(row(s, samples.at(-1)));
      samples.push(s);
    }
    clearInterval(fdTimer);
    const status = (await (await fetch(`${api}/api/v1/jobs/${job.id}`)).json()) as { state?: string };
    console.log(`job ${job.id}: ${status.state ?? 'unknown'}; DNS lookups in crawl serve: ${dnsFigures}; queries at the DNS server: ${dns.queries().length}`);
    const warm = warmupSamples();
    if (bucketsAt.length > warm) {
      // which bucket moved, from the first sample after warm-up to the last
      const from = bucketsAt[warm]!;
      const to = bucketsAt.at(-1)!;
      const moved = [...to].map(([name, b]) => `${name} ${Math.round((from.get(name)?.bytes ?? 0) / 1024)}→${Math.round(b.bytes / 1024)} KB (${from.get(name)?.keys ?? 0}→${b.keys} entries)`);
      console.log(`KV buckets from minute ${samples[warm]!.minute.toFixed(1)}: ${moved.join('; ')}`);
    }
    const flat = verdict(samples);
    process.exitCode = flat ? 0 : 1;
  } finally {
    if (serve && serve.exitCode === null) {
      const gone = exited(serve);
      serve.kill('SIGTERM');
      const timer = setTimeout(() => serve!.kill('SIGKILL'), 30_000);
      await gone;
      clearTimeout(timer);
    }
    await nats.stop();
    await dns.close();
    await web.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
