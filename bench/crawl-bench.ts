/**
 * `npm run bench`: crawls the test web's bench hosts (allow-all robots, no crawl-delay) with
 * politeness delays off and every stage in one `crawl run` process, three times; prints
 * pages/s and peak RSS per run and their medians. Pages/s = pages stored / wall time of the
 * `crawl run --until-idle` process (start-up and final flush included). Also per page: messages
 * and bytes in the streams, KV writes and reads (the bench starts the nats-server to read them).
 * The crawl's figures before the output's final merge (peak RSS, pages/s, CPU) are read when its
 * stages stop: the merge is a fixed step at the end, and this tells its cost from the crawl's.
 */
import os from 'node:os';
import { startTestWeb } from '../testweb/index.js';
import { median } from './stats.js';
import { benchSeeds } from './bench-crawl.js';
import { runOnce } from './bench-run.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 200);
const PAGES_PER_HOST = Number(process.env.BENCH_PAGES_PER_HOST ?? 55);


const msPerPage = (cpu: number, pages: number) => (1000 * cpu) / pages;
const perPage = (n: number, pages: number) => n / pages;

async function main() {
  // pages rendered before the first run: rendering them on request would take ~1 ms a page of
  // the two cores the crawl is measured on, which a real crawl's servers do not share
  const web = await startTestWeb({ hosts: 1, benchHosts: HOSTS, benchPagesPerHost: PAGES_PER_HOST, seed: 7, prerender: true });
  const seeds = benchSeeds(HOSTS);
  const results = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const r = await runOnce(web.port, seeds);
      results.push(r);
      process.stdout.write(
        `run ${i + 1}: ${r.pages} pages in ${r.seconds.toFixed(1)} s = ${(r.pages / r.seconds).toFixed(0)} pages/s, peak RSS ${r.rssMb.toFixed(0)} MB (${r.beforeMerge.rssMb.toFixed(0)} MB before the final merge), ` +
          `CPU per page ${msPerPage(r.crawlCpu, r.pages).toFixed(1)} ms crawl + ${msPerPage(r.natsCpu, r.pages).toFixed(1)} ms nats-server (test web ${msPerPage(r.webCpu, r.pages).toFixed(1)} ms); ` +
          `before the final merge: ${(r.pages / r.beforeMerge.seconds).toFixed(0)} pages/s, CPU ${msPerPage(r.beforeMerge.crawlCpu, r.pages).toFixed(1)} ms crawl; ` +
          `per page: ${perPage(r.traffic.messages, r.pages).toFixed(1)} messages, ${(perPage(r.traffic.bytes, r.pages) / 1024).toFixed(1)} KB stored, ` +
          `${perPage(r.kv.writes, r.pages).toFixed(1)} KV writes + ${perPage(r.kv.reads, r.pages).toFixed(1)} reads; machine probe ${r.probeMs.toFixed(1)} ms\n`,
      );
      if (process.env.BENCH_STREAMS) for (const [name, t] of Object.entries(r.traffic.byStream)) process.stdout.write(`  ${name}: ${perPage(t.messages, r.pages).toFixed(2)} msgs/page, ${(perPage(t.bytes, r.pages) / 1024).toFixed(2)} KB/page\n`);
      if (process.env.BENCH_STREAMS) for (const [op, n] of Object.entries(r.kv.byOp)) process.stdout.write(`  kv ${op}: ${perPage(n, r.pages).toFixed(2)}/page\n`);
    }
  } finally {
    await web.close();
  }
  const rates = results.map((r) => r.pages / r.seconds);
  console.log('\n| metric | median of %d runs |', RUNS);
  console.log('|---|---|');
  console.log(`| pages stored | ${median(results.map((r) => r.pages))} |`);
  console.log(`| pages/s | ${median(rates).toFixed(0)} |`);
  console.log(`| wall time (s) | ${median(results.map((r) => r.seconds)).toFixed(1)} |`);
  console.log(`| peak RSS of crawl run (MB) | ${median(results.map((r) => r.rssMb)).toFixed(0)} |`);
  console.log(`| peak RSS before the output's final merge (MB) | ${median(results.map((r) => r.beforeMerge.rssMb)).toFixed(0)} |`);
  console.log(`| CPU per page, crawl run (ms) | ${median(results.map((r) => msPerPage(r.crawlCpu, r.pages))).toFixed(1)} |`);
  console.log(`| CPU per page, nats-server (ms) | ${median(results.map((r) => msPerPage(r.natsCpu, r.pages))).toFixed(1)} |`);
  console.log(`| CPU per page, test web and bench (ms) | ${median(results.map((r) => msPerPage(r.webCpu, r.pages))).toFixed(1)} |`);
  console.log(`| pages/s before the output's final merge | ${median(results.map((r) => r.pages / r.beforeMerge.seconds)).toFixed(0)} |`);
  console.log(`| CPU per page before the output's final merge, crawl run (ms) | ${median(results.map((r) => msPerPage(r.beforeMerge.crawlCpu, r.pages))).toFixed(1)} |`);
  console.log(`| messages published per page (streams, KV excluded) | ${median(results.map((r) => perPage(r.traffic.messages, r.pages))).toFixed(1)} |`);
  console.log(`| stream storage per page (KB, KV excluded) | ${median(results.map((r) => perPage(r.traffic.bytes, r.pages) / 1024)).toFixed(1)} |`);
  console.log(`| KV writes per page | ${median(results.map((r) => perPage(r.kv.writes, r.pages))).toFixed(1)} |`);
  console.log(`| KV reads per page | ${median(results.map((r) => perPage(r.kv.reads, r.pages))).toFixed(1)} |`);
  console.log(`| machine probe (ms of CPU for fixed work; higher is a slower machine) | ${median(results.map((r) => r.probeMs)).toFixed(1)} |`);
  console.log(`| cores | ${os.cpus().length} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
