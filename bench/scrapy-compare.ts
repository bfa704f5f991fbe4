/**
 * `npm run bench:scrapy`: the crawler against Scrapy on real HTML, in interleaved pairs.
 * Both crawl the same site, a real documentation site nobody here wrote (the Python 3.11
 * manual from Debian's python3.11-doc: 530 HTML pages, the largest 2.5 MB, and their `.txt`
 * sources), served over HTTPS from this machine by bench/support/static-site.ts:
 * - `crawl run --until-idle` as the throughput bench runs it (politeness delays off, robots.txt
 *   read, every stage in one process, WARC + Parquet written, the end-of-crawl merge
 *   included), with the nats-server the bench starts; HTTP/2.
 * - Scrapy (Debian's python3-scrapy), bench/support/docs_spider.py: robots.txt obeyed, every
 *   link on the host followed, each HTML page's title and visible text yielded to a JSON
 *   lines feed; 16 requests at once, no delay; HTTP/1.1 (Scrapy's default).
 * Per run: HTML pages each one kept, responses, wall time, CPU seconds (crawl + nats-server;
 * Scrapy's process) and peak RSS (the crawl's and nats-server's peaks added; Scrapy's).
 * Medians over the pairs and the ratio of CPU per page, crawler / Scrapy. Targets (issue:
 * cheaper per real page): ≤ 0.5 × Scrapy's CPU per page, ≤ 400 MB for the crawler's processes.
 *
 *   BENCH_PAIRS      pairs to run (default 2)
 *   BENCH_DOCS_DIR   the site's folder (default: /usr/share/doc/python3.11/html where the
 *                    package is installed, else the package is fetched with `apt-get download`
 *                    and unpacked under the system's temp folder, once)
 *   BENCH_CRAWL_ARGS flags added to `crawl run`; BENCH_SCRAPY_CONCURRENCY (16)
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { freePort, startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { makeTestPki } from '../testweb/test-ca.js';
import { spawnBenchCrawl } from './bench-crawl.js';
import { cpuSeconds, peakRssMb, ProcessWatch } from './proc-stats.js';
import { startMachineProbe } from './machine-probe.js';
import { median } from './stats.js';
import { serveStaticSite, type StaticSite } from './support/static-site.js';

const PAIRS = Number(process.env.BENCH_PAIRS ?? 2);
const SCRAPY = '/usr/bin/scrapy';
const SCRAPY_CONCURRENCY = Number(process.env.BENCH_SCRAPY_CONCURRENCY ?? 16);
const PACKAGE = 'python3.11-doc';
const SITE_IN_PACKAGE = 'usr/share/doc/python3.11/html';
const TARGET_CPU_RATIO = 0.5;
const TARGET_RSS_MB = 400;
/** the spider sits beside this file's source; the bench runs from dist/bench */
const SPIDER = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../bench/support/docs_spider.py');

interface Run {
  pages: number;
  responses: number;
  seconds: number;
  cpu: number;
  rssMb: number;
  /** the crawler's: how its peak divides, crawl process + nats-server */
  rssParts?: [number, number];
}

function docsDir(): string {
  if (process.env.BENCH_DOCS_DIR) return process.env.BENCH_DOCS_DIR;
  const installed = path.join('/', SITE_IN_PACKAGE);
  if (existsSync(path.join(installed, 'index.html'))) return installed;
  const cache = path.join(os.tmpdir(), 'crawl-bench-python-docs');
  const unpacked = path.join(cache, 'root', SITE_IN_PACKAGE);
  if (existsSync(path.join(unpacked, 'index.html'))) return unpacked;
  mkdirSync(cache, { recursive: true });
  console.log(`fetching ${PACKAGE} (apt-get download) into ${cache}`);
  execFileSync('apt-get', ['download', PACKAGE], { cwd: cache, stdio: 'inherit' });
  const deb = readdirSync(cache).find((f) => f.startsWith(`${PACKAGE}_`) && f.endsWith('.deb'));
  if (!deb) throw new Error(`apt-get download ${PACKAGE} left no .deb in ${cache}`);
  execFileSync('dpkg-deb', ['-x', deb, 'root'], { cwd: cache });
  return unpacked;
}

async function crawlOnce(site: StaticSite, caFile: string): Promise<Run> {
  const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-scrapy-'));
  const server = await startEmbeddedServer(path.join(out, '.nats'));
  try {
    const natsBefore = cpuSeconds(server.pid) ?? 0;
    const started = performance.now();
    const crawl = spawnBenchCrawl({ out, webPort: site.port, natsUrl: server.url, metricsPort: await freePort(), seeds: ['https://docs.bench.test/'], extraArgs: ['--ca-file', caFile] });
    const watch = new ProcessWatch(crawl.child.pid!);
    const code = await crawl.exited;
    const usage = watch.stop();
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`crawl run exited ${code}: ${crawl.stderr()}`);
    const nats = (cpuSeconds(server.pid) ?? natsBefore) - natsBefore;
    const db = await openOutputDatabase(out);
    const pages = Number((await db.run('SELECT count(*) FROM pages')).rows[0]![0]);
    const responses = Number((await db.run('SELECT count(*) FROM fetch_log WHERE fetch_status > 0')).rows[0]![0]);
    await db.close();
    const natsRss = peakRssMb(server.pid);
    return { pages, responses, seconds, cpu: usage.cpuSeconds + nats, rssMb: usage.peakRssMb + natsRss, rssParts: [usage.peakRssMb, natsRss] };
  } finally {
    await server.stop();
    rmSync(out, { recursive: true, force: true });
  }
}

async function scrapyOnce(site: StaticSite): Promise<Run> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-scrapy-'));
  const items = path.join(dir, 'items.jsonl');
  const settings = {
    ROBOTSTXT_OBEY: 'True',
    CONCURRENT_REQUESTS: String(SCRAPY_CONCURRENCY),
    CONCURRENT_REQUESTS_PER_DOMAIN: String(SCRAPY_CONCURRENCY),
    DOWNLOAD_DELAY: '0',
    AUTOTHROTTLE_ENABLED: 'False',
    DEPTH_LIMIT: '10',
    TELNETCONSOLE_ENABLED: 'False',
    LOG_LEVEL: 'INFO',
  };
  const args = ['runspider', SPIDER, '-a', `start=https://localhost:${site.port}/`, '-O', items];
  for (const [k, v] of Object.entries(settings)) args.push('-s', `${k}=${v}`);
  try {
    const started = performance.now();
    const child = spawn(SCRAPY, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
    let log = '';
    child.stderr!.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-20_000)));
    const watch = new ProcessWatch(child.pid!);
    const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
    const usage = watch.stop();
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`scrapy exited ${code}: ${log.slice(-2000)}`);
    const pages = readFileSync(items, 'utf8').split('\n').filter(Boolean).length;
    const responses = Number(/'response_received_count': (\d+)/.exec(log)?.[1] ?? NaN);
    return { pages, responses, seconds, cpu: usage.cpuSeconds + usage.childCpuSeconds, rssMb: usage.peakRssMb };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const perPageMs = (r: Run) => (1000 * r.cpu) / r.pages;
const line = (name: string, r: Run) =>
  `${name.padEnd(8)} ${String(r.pages).padStart(6)} ${String(r.responses).padStart(9)} ${r.seconds.toFixed(1).padStart(8)} ${(r.pages / r.seconds).toFixed(1).padStart(7)} ${r.cpu.toFixed(1).padStart(7)} ${perPageMs(r).toFixed(1).padStart(9)} ${r.rssMb.toFixed(0).padStart(8)}` + (r.rssParts ? ` (${r.rssParts.map((m) => m.toFixed(0)).join(' + ')})` : '');

async function main() {
  if (!existsSync(SCRAPY)) {
    console.error(`bench:scrapy needs Debian's Scrapy: apt-get install python3-scrapy (${SCRAPY} not found)`);
    process.exit(2);
  }
  const root = docsDir();
  const pki = await makeTestPki(['docs.bench.test', 'localhost']);
  const work = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-scrapy-ca-'));
  const caFile = path.join(work, 'ca.pem');
  writeFileSync(caFile, pki.caPem);
  const site = await serveStaticSite(root, pki.web);
  const probe = startMachineProbe();
  console.log(`bench:scrapy: ${root} over HTTPS, ${PAIRS} pairs (crawler first, then Scrapy, in turn)`);
  console.log('run       pages responses  seconds pages/s  CPU s  CPU ms/page  peak MB (crawl + nats-server)');
  const crawls: Run[] = [];
  const scrapies: Run[] = [];
  try {
    for (let i = 0; i < PAIRS; i++) {
      const c = await crawlOnce(site, caFile);
      crawls.push(c);
      console.log(line('crawler', c));
      const s = await scrapyOnce(site);
      scrapies.push(s);
      console.log(line('scrapy', s));
    }
  } finally {
    probe.stop();
    await site.close();
    rmSync(work, { recursive: true, force: true });
  }
  const ratios = crawls.map((c, i) => perPageMs(c) / perPageMs(scrapies[i]!));
  const ratio = median(ratios);
  const rss = median(crawls.map((c) => c.rssMb));
  console.log(
    `medians: crawler ${median(crawls.map(perPageMs)).toFixed(1)} ms a page, ${rss.toFixed(0)} MB; Scrapy ${median(scrapies.map(perPageMs)).toFixed(1)} ms a page, ` +
      `${median(scrapies.map((s) => s.rssMb)).toFixed(0)} MB; CPU a page crawler / Scrapy by pair ${ratios.map((r) => r.toFixed(2)).join(', ')}; machine probe ${median(probe.take()).toFixed(1)} ms`,
  );
  console.log(`targets: CPU a page <= ${TARGET_CPU_RATIO} x Scrapy's: ${ratio <= TARGET_CPU_RATIO ? 'met' : 'missed'} (${ratio.toFixed(2)}); peak RSS <= ${TARGET_RSS_MB} MB: ${rss <= TARGET_RSS_MB ? 'met' : 'missed'} (${rss.toFixed(0)})`);
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
