/**
 * `npm run bench:freshness`: how fresh the stored copies stay under adaptive revisits,
 * against a fixed revisit interval that spends the same number of requests.
 *
 * Each run starts a test web with fresh hosts only (pages changing every 3, 8 or 20 s, and
 * pages that never change), a nats-server and `crawl serve`, creates one job over HTTP with
 * the policy, and lets it run for FRESH_SECONDS (default 150). The adaptive run (the
 * default `estimate` strategy, initial 5 s, min 2 s, max 60 s) goes first; the fixed
 * interval is then chosen so the same pages get the same number of requests in the same
 * time (pages × window / adaptive requests); the `multiplicative` strategy (Nutch's rule,
 * ×1.5 / ×0.5) runs last, for comparison. From the test web's own request log
 * and its change schedule, over the window after a warm-up:
 *   - staleness: at each instant (sampled every 100 ms), a page's stored copy is stale when
 *     the page changed after the crawler's last request for it; its age is the time since
 *     that first unseen change. Reported: mean age (s) and the share of time stale.
 *   - requests: GETs of the pages (robots.txt and sitemaps left out).
 * It also reports what the schedule costs per scheduled URL: the CRAWL_REVISITS stream's
 * bytes per message (one message per scheduled URL; no per-URL memory or KV key).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { startTestWeb, type TestWeb } from '../testweb/index.js';
import { startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { EDGES } from '../topology/index.js';
import { crawlCli } from './crawl-cli.js';

const SECONDS = Number(process.env.FRESH_SECONDS ?? 150);
const WARMUP_MS = 30_000;
const SAMPLE_MS = 100;
const ESTIMATE = { strategy: 'estimate', initial: '5s', min: '2s', max: '60s' };
const MULTIPLICATIVE = { strategy: 'multiplicative', initial: '5s', min: '2s', max: '60s', increase: 0.5, decrease: 0.5 };

interface RunResult {
  requests: number;
  meanAgeS: number;
  staleShare: number;
  byPeriod: Map<string, { requests: number; meanAgeS: number }>;
  scheduleBytesPerUrl: number;
  scheduledUrls: number;
}

async function runOnce(revisit: Record<string, unknown>): Promise<RunResult> {
  const web = await startTestWeb({ hosts: 1, pagesPerHost: 1, seed: 11, fresh: { hosts: 3, pagesPerHost: 10, periodsSeconds: [3, 8, 20] } });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-fresh-bench-'));
  const nats = await startEmbeddedServer(path.join(dir, 'nats'));
  let serve: ChildProcess | undefined;
  try {
    const args = ['serve', '--out', path.join(dir, 'out'), '--port', '0', '--min-delay-ms', '100', '--revisit-slot-ms', '1000'];
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    serve = crawlCli(args, { NATS_URL: nats.url, LOG_LEVEL: 'info' }, { stdio: ['ignore', 'ignore', 'pipe'] });
    const api = await apiUrl(serve);
    const seeds = web.fresh!.seedUrls();
    const res = await fetch(`${api}/api/v1/jobs`, { method: 'POST', body: JSON.stringify({ name: 'freshness', seeds, max_depth: 3, revisit }) });
    if (res.status !== 201) throw new Error(`job refused: ${res.status} ${await res.text()}`);
    const start = Date.now();
    await sleep(SECONDS * 1000);
    const end = Date.now();
    const schedule = await scheduleCost(nats.url);
    const result = measure(web, start + WARMUP_MS, end);
    return { ...result, ...schedule };
  } finally {
    serve?.kill('SIGKILL');
    await nats.stop();
    await web.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function apiUrl(serve: ChildProcess): Promise<string> {
  let stderr = '';
  serve.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-20_000)));
  for (let i = 0; i < 300; i++) {
    const m = /jobs API on (http:\/\/[^\s/]+)\//.exec(stderr);
    if (m) return m[1]!;
    await sleep(100);
  }
  throw new Error(`crawl serve did not start: ${stderr}`);
}

async function scheduleCost(url: string): Promise<{ scheduleBytesPerUrl: number; scheduledUrls: number }> {
  const nc = await connectNats(url, 'freshness-bench');
  try {
    const info = await (await jetstreamManager(nc)).streams.info(EDGES.revisits.stream);
    return { scheduledUrls: info.state.messages, scheduleBytesPerUrl: info.state.messages ? info.state.bytes / info.state.messages : 0 };
  } finally {
    await nc.close();
  }
}

/** Staleness and requests of every fresh page over [from, to], from the server's log. */
function measure(web: TestWeb, from: number, to: number): Omit<RunResult, 'scheduleBytesPerUrl' | 'scheduledUrls'> {
  const fresh = web.fresh!;
  const pages = fresh.pageUrls();
  const fetchesOf = new Map<string, number[]>(pages.map((u) => [u, []]));
  for (const r of web.requestLog()) {
    if (r.method !== 'GET' || r.status >= 400) continue;
    fetchesOf.get(`http://${r.host}${r.path}`)?.push(r.start);
  }
  let ageSum = 0;
  let staleSamples = 0;
  let samples = 0;
  let requests = 0;
  const byPeriod = new Map<string, { requests: number; ageSum: number; samples: number }>();
  for (const url of pages) {
    const times = fetchesOf.get(url)!.sort((a, b) => a - b);
    const key = String((fresh.changePeriodMs(url) ?? 0) / 1000 || 'never');
    const slot = byPeriod.get(key) ?? { requests: 0, ageSum: 0, samples: 0 };
    byPeriod.set(key, slot);
    const inWindow = times.filter((t) => t >= from && t <= to).length;
    requests += inWindow;
    slot.requests += inWindow;
    let i = 0;
    for (let t = from; t <= to; t += SAMPLE_MS) {
      while (i < times.length && times[i]! <= t) i++;
      if (i === 0) continue; // not crawled yet
      const last = times[i - 1]!;
      const unseen = fresh.changeTimes(url, last + 1e-3, t)[0];
      const age = unseen === undefined ? 0 : t - unseen;
      ageSum += age;
      slot.ageSum += age;
      slot.samples++;
      samples++;
      if (age > 0) staleSamples++;
    }
  }
  const perPeriod = new Map([...byPeriod].map(([k, v]) => [k, { requests: v.requests, meanAgeS: v.samples ? v.ageSum / v.samples / 1000 : 0 }]));
  return { requests, meanAgeS: samples ? ageSum / samples / 1000 : 0, staleShare: samples ? staleSamples / samples : 0, byPeriod: perPeriod };
}

function report(name: string, r: RunResult): void {
  const periods = [...r.byPeriod].map(([k, v]) => `${k === 'never' ? 'never' : `${k} s`}: ${v.requests} req, age ${v.meanAgeS.toFixed(2)} s`).join('; ');
  console.log(`${name.padEnd(22)} requests ${String(r.requests).padStart(5)}  mean staleness ${r.meanAgeS.toFixed(2)} s  stale ${(100 * r.staleShare).toFixed(1)}% of the time  (${periods})`);
}

async function main() {
  const pages = 30;
  const windowS = SECONDS - WARMUP_MS / 1000;
  console.log(`freshness: 3 fresh hosts x 10 pages (change every 3, 8, 20 s, or never), ${SECONDS} s per run, measured over the last ${windowS} s`);
  const adaptive = await runOnce(ESTIMATE);
  report('adaptive (estimate)', adaptive);
  const fixedMs = Math.max(1000, Math.round((pages * windowS * 1000) / adaptive.requests));
  const fixed = await runOnce({ initial: fixedMs, min: fixedMs, max: fixedMs, strategy: 'multiplicative', increase: 0, decrease: 0 });
  report(`fixed every ${(fixedMs / 1000).toFixed(2)} s`, fixed);
  const multiplicative = await runOnce(MULTIPLICATIVE);
  report('multiplicative', multiplicative);
  console.log(`staleness fixed / adaptive: ${(fixed.meanAgeS / adaptive.meanAgeS).toFixed(2)}x at ${(fixed.requests / adaptive.requests).toFixed(2)}x the requests`);
  console.log(`schedule cost: ${adaptive.scheduleBytesPerUrl.toFixed(0)} bytes of stream storage per scheduled URL (${adaptive.scheduledUrls} URLs scheduled at the end), no per-URL memory or KV key`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
