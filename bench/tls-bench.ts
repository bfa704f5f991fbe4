/**
 * `npm run bench:tls`: what HTTPS with HTTP/2 costs the crawl beside plain HTTP. The bench
 * crawl of `npm run bench` (the test web's bench hosts, politeness delays off, every stage in
 * one `crawl run`) runs in pairs, once seeded with http:// URLs and once with https:// ones
 * (the web answers both on one port and speaks HTTP/2 over TLS; over TLS its pages link by
 * https://, so the whole crawl is HTTPS), the order alternating from pair to pair so that a
 * machine growing busier or quieter weighs on both alike. Prints pages/s and CPU per page of
 * the crawl process for each run, the medians of each protocol, and the HTTPS/HTTP ratios
 * (the median of the pairs' ratios, which the machine's drift between pairs does not move).
 *
 * BENCH_PAIRS (default 3), BENCH_HOSTS (200), BENCH_PAGES_PER_HOST (55); BENCH_CRAWL_ARGS and
 * BENCH_NODE_ARGS as for `npm run bench` (e.g. BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof').
 */
import os from 'node:os';
import { startTestWeb } from '../testweb/index.js';
import { median } from './stats.js';
import { benchSeeds } from './bench-crawl.js';
import { runOnce, type RunResult } from './bench-run.js';

const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 200);
const PAGES_PER_HOST = Number(process.env.BENCH_PAGES_PER_HOST ?? 55);

type Scheme = 'http' | 'https';
const cpuMsPerPage = (r: RunResult) => (1000 * r.crawlCpu) / r.pages;
const pagesPerSecond = (r: RunResult) => r.pages / r.seconds;

async function main() {
  // every page rendered up front, plain and as served over TLS: the web shares the two cores
  const web = await startTestWeb({ hosts: 1, benchHosts: HOSTS, benchPagesPerHost: PAGES_PER_HOST, seed: 7, prerender: true, tls: true });
  const seeds: Record<Scheme, string[]> = { http: benchSeeds(HOSTS), https: benchSeeds(HOSTS).map((u) => u.replace(/^http:/, 'https:')) };
  const extra: Record<Scheme, string[]> = { http: [], https: ['--ca-file', web.tls!.caFile] };
  const pairs: Array<Record<Scheme, RunResult>> = [];
  try {
    for (let i = 0; i < PAIRS; i++) {
      const order: Scheme[] = i % 2 === 0 ? ['http', 'https'] : ['https', 'http'];
      const pair = {} as Record<Scheme, RunResult>;
      for (const scheme of order) {
        web.clearLog();
        const r = await runOnce(web.port, seeds[scheme], extra[scheme]);
        pair[scheme] = r;
        const h2 = web.requestLog().filter((x) => x.protocol === 'h2').length;
        process.stdout.write(
          `pair ${i + 1} ${scheme.padEnd(5)}: ${r.pages} pages in ${r.seconds.toFixed(1)} s = ${pagesPerSecond(r).toFixed(0)} pages/s, ` +
            `CPU per page ${cpuMsPerPage(r).toFixed(2)} ms crawl + ${((1000 * r.natsCpu) / r.pages).toFixed(2)} ms nats-server (test web ${((1000 * r.webCpu) / r.pages).toFixed(2)} ms), ` +
            `peak RSS ${r.rssMb.toFixed(0)} MB, requests over HTTP/2 ${h2} of ${web.requestLog().length}; machine probe ${r.probeMs.toFixed(1)} ms\n`,
        );
      }
      pairs.push(pair);
    }
  } finally {
    await web.close();
  }
  const of = (scheme: Scheme, f: (r: RunResult) => number) => median(pairs.map((p) => f(p[scheme])));
  const ratio = (f: (r: RunResult) => number) => median(pairs.map((p) => f(p.https) / f(p.http)));
  console.log(`\n| metric (median of ${PAIRS} pairs) | http | https (HTTP/2) | https / http |`);
  console.log('|---|---|---|---|');
  console.log(`| pages stored | ${of('http', (r) => r.pages)} | ${of('https', (r) => r.pages)} | |`);
  console.log(`| pages/s | ${of('http', pagesPerSecond).toFixed(0)} | ${of('https', pagesPerSecond).toFixed(0)} | ${ratio(pagesPerSecond).toFixed(2)} |`);
  console.log(`| CPU per page, crawl run (ms) | ${of('http', cpuMsPerPage).toFixed(2)} | ${of('https', cpuMsPerPage).toFixed(2)} | ${ratio(cpuMsPerPage).toFixed(2)} |`);
  console.log(`| CPU per page, test web and bench (ms) | ${of('http', (r) => (1000 * r.webCpu) / r.pages).toFixed(2)} | ${of('https', (r) => (1000 * r.webCpu) / r.pages).toFixed(2)} | |`);
  console.log(`| peak RSS of crawl run (MB) | ${of('http', (r) => r.rssMb).toFixed(0)} | ${of('https', (r) => r.rssMb).toFixed(0)} | |`);
  console.log(`| machine probe (ms; higher is a slower machine) | ${of('http', (r) => r.probeMs).toFixed(1)} | ${of('https', (r) => r.probeMs).toFixed(1)} | |`);
  console.log(`| cores | ${os.cpus().length} | | |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
