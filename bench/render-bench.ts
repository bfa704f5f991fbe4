/**
 * `npm run bench:render`: what a render costs. The render stage's handler, as the runner
 * calls it, renders the test web's app.render.test pages in real Chromium (the script and
 * the stylesheet from the process's cache after the first page, the page's JSON fetched
 * each time through the crawler's HTTP client), with politeness delays off so the browser is
 * what is measured. The test web runs in a process of its own. Per concurrency
 * (`--render-concurrency`): renders per second, CPU per render (this process, and Chromium's
 * processes), the browser's memory (PSS of its processes), and what each render at once adds to it.
 * Each concurrency is measured RUNS times (a fresh browser each time); the table gives the medians.
 *
 * RENDERS (60), RUNS (3) and CONCURRENCY (1,2,4) in the environment change the defaults. A
 * render waits RENDER_SETTLE_MS (500 ms) of quiet network after the page's load: at low
 * concurrency renders per second are bounded by that wait, not by the CPU.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { createHttpClient } from '../pipeline/adapters/http/client.js';
import { parseResolveRule } from '../pipeline/adapters/resolve-map.js';
import { ChromiumRenderer } from '../pipeline/adapters/browser/chromium-renderer.js';
import { createRenderStage } from '../stages/render/index.js';
import { decodeExchange, encodeRenderRequest, type RenderRequest } from '../schemas/index.js';
import { APP_HOST, APP_PAGES, appTextMarker } from '../testweb/render-hosts.js';
import { createFakeContext } from './support/memory-context.js';
import { childPids, cpuSeconds } from './proc-stats.js';
import { eachLimited, median } from './stats.js';

const RENDERS = Number(process.env.RENDERS ?? 60);
const RUNS = Number(process.env.RUNS ?? 3);
const CONCURRENCY = (process.env.CONCURRENCY ?? '1,2,4').split(',').map(Number);
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../cli/main.js');

/** Proportional set size: shared pages split between the processes that map them, so Chromium's processes add up right. */
function pssMb(pid: number): number {
  try {
    const m = /Pss:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Every process below `pid` (Chromium's), but `except` (the test web). */
function descendants(pid: number, except: number): number[] {
  const out: number[] = [];
  for (const c of childPids(pid)) {
    if (c === except) continue;
    out.push(c, ...descendants(c, except));
  }
  return out;
}

async function startTestWeb(): Promise<{ port: number; pid: number; stop(): void }> {
  const child = spawn(process.execPath, [CLI, 'testweb', '--hosts', '1', '--render-hosts'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(`testweb exited: ${out}`)));
  });
  return { port, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

interface Row {
  concurrency: number;
  rendersPerSecond: number;
  /** CPU per render of this process (the stage, the HTTP client, playwright's driver) */
  nodeCpuMs: number;
  /** CPU per render of Chromium's processes */
  chromiumCpuMs: number;
  /** browser PSS after the warm-up, and its peak while rendering */
  idleMb: number;
  peakMb: number;
  /** this process's peak RSS while rendering */
  nodeRssMb: number;
}

type Http = ReturnType<typeof createHttpClient>;

/** One run at one concurrency: a fresh browser, a warm-up, then RENDERS renders measured. */
async function measure(concurrency: number, run: number, pages: RenderRequest[], resolve: string[], http: Http, webPid: number): Promise<Row> {
  const renderer = new ChromiumRenderer({ concurrency, memoryMb: 512, userAgent: 'render-bench/1.0' });
  const stage = createRenderStage({ renderer, concurrency });
  // no politeness delays, a fresh robots cache and host state: the browser is what is measured
  const ctx = { ...createFakeContext({ settings: { minDelayMs: 0, adaptiveDelayFactor: 0, resolve, renderTimeoutMs: 15_000 } }), http, clock: { now: () => Date.now() } };
  let n = 0;
  const renderOne = async (i: number) => {
    const page = { ...pages[i % pages.length]!, fetch_id: `f${run}-${concurrency}-${i}` };
    const data = encodeRenderRequest(page);
    const out = await stage.handle({ subject: 'crawl.render.0', message: stage.decode('crawl.render.0', data), deliveryCount: 1, streamSeq: i + 1 }, ctx);
    if (out.kind !== 'emit') throw new Error(`render of ${page.url}: ${out.kind}: ${out.reason}`);
    const rendered = decodeExchange(out.messages.find((m) => m.subject.startsWith('crawl.fetched.rendered.'))!.data);
    if (!new TextDecoder().decode(rendered.body).includes(appTextMarker(new URL(page.url).pathname))) throw new Error(`${page.url}: not rendered: ${rendered.render_note}`);
    n++;
  };
  // warm-up: the browser starts, every context opens, the script and stylesheet are cached
  await eachLimited(Array.from({ length: Math.max(pages.length, concurrency) }, (_, i) => i), concurrency, renderOne);
  const browserPids = () => descendants(process.pid, webPid);
  const idleMb = browserPids().reduce((s, p) => s + pssMb(p), 0);
  // CPU seconds of each browser process at the start and as last seen (a process that exits
  // between two samples loses at most one interval: contexts are recycled every 50 renders)
  const cpuAt = new Map<number, number>();
  const cpuOf = new Map<number, number>();
  for (const p of browserPids()) cpuAt.set(p, cpuSeconds(p) ?? 0);
  let peakMb = idleMb;
  let nodeRssMb = process.memoryUsage().rss / 2 ** 20;
  // the sampler's own CPU (reading smaps_rollup is not free) is kept out of this process's figure
  let samplerCpuMs = 0;
  const sampler = setInterval(() => {
    const c0 = process.cpuUsage();
    let mb = 0;
    for (const p of browserPids()) {
      mb += pssMb(p);
      const s = cpuSeconds(p);
      if (s !== null) cpuOf.set(p, s);
    }
    peakMb = Math.max(peakMb, mb);
    nodeRssMb = Math.max(nodeRssMb, process.memoryUsage().rss / 2 ** 20);
    const c = process.cpuUsage(c0);
    samplerCpuMs += (c.user + c.system) / 1000;
  }, 100);
  n = 0;
  const nodeCpu = process.cpuUsage();
  const t0 = performance.now();
  await eachLimited(Array.from({ length: RENDERS }, (_, i) => i), concurrency, renderOne);
  const seconds = (performance.now() - t0) / 1000;
  const node = process.cpuUsage(nodeCpu);
  clearInterval(sampler);
  for (const p of browserPids()) {
    const s = cpuSeconds(p);
    if (s !== null) cpuOf.set(p, s);
  }
  let chromeCpu = 0;
  for (const [p, s] of cpuOf) chromeCpu += s - (cpuAt.get(p) ?? 0);
  await renderer.close();
  return { concurrency, rendersPerSecond: n / seconds, nodeCpuMs: ((node.user + node.system) / 1000 - samplerCpuMs) / n, chromiumCpuMs: (chromeCpu * 1000) / n, idleMb, peakMb, nodeRssMb };
}

async function main(): Promise<void> {
  const web = await startTestWeb();
  const resolve = [`*.render.test=127.0.0.1:${web.port}`];
  const http = createHttpClient({ userAgent: 'render-bench/1.0', resolve: resolve.map(parseResolveRule) });
  // the documents, as fetch would have them
  const pages: RenderRequest[] = [];
  for (const p of Object.keys(APP_PAGES)) {
    const url = `http://${APP_HOST}${p}`;
    const res = await http.request({ url, connectTimeoutMs: 5000, headersTimeoutMs: 5000, totalTimeoutMs: 10_000, maxBodyBytes: 1 << 20 });
    const common = { v: 1, url, host: APP_HOST, domain: 'render.test', depth: 0, fetch_time: Date.now(), fetch_status: res.status, duration_ms: 1 } as const;
    pages.push({ ...common, fetch_id: `p${p}`, content_type: 'text/html', charset: 'utf-8', headers: res.headers, body: res.body, truncated: false, render_reason: 'bench' });
  }
  console.log(
    `render bench: ${RUNS} runs of ${RENDERS} renders of the ${pages.length} app.render.test pages per concurrency ${CONCURRENCY.join(', ')} (${os.availableParallelism()} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`,
  );
  const rows: Row[] = [];
  for (let run = 1; run <= RUNS; run++) {
    for (const concurrency of CONCURRENCY) {
      const r = await measure(concurrency, run, pages, resolve, http, web.pid);
      rows.push(r);
      console.log(
        `run ${run}, concurrency ${concurrency}: ${r.rendersPerSecond.toFixed(2)} renders/s, CPU per render ${r.nodeCpuMs.toFixed(0)} ms node + ${r.chromiumCpuMs.toFixed(0)} ms Chromium, browser PSS ${r.idleMb.toFixed(0)} MB idle ${r.peakMb.toFixed(0)} MB peak, node RSS ${r.nodeRssMb.toFixed(0)} MB (load ${os.loadavg()[0]!.toFixed(1)})`,
      );
    }
  }
  console.log(`\nmedians of ${RUNS} runs:\n`);
  console.log('| concurrency | renders/s | CPU ms per render: node | Chromium | all | browser PSS idle MB | peak MB | MB per render at once | node RSS peak MB |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const concurrency of CONCURRENCY) {
    const of = rows.filter((r) => r.concurrency === concurrency);
    const m = (f: (r: Row) => number, digits = 0) => median(of.map(f)).toFixed(digits);
    console.log(
      `| ${concurrency} | ${m((r) => r.rendersPerSecond, 2)} | ${m((r) => r.nodeCpuMs)} | ${m((r) => r.chromiumCpuMs)} | ${m((r) => r.nodeCpuMs + r.chromiumCpuMs)} | ${m((r) => r.idleMb)} | ${m((r) => r.peakMb)} | ${m((r) => (r.peakMb - r.idleMb) / concurrency)} | ${m((r) => r.nodeRssMb)} |`,
    );
  }
  console.log(`\nload average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await http.close();
  web.stop();
}

await main();
