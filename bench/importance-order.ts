/**
 * `npm run bench:importance`: does the importance estimate bring the most-linked pages early?
 * Two `crawl run`s over the same broad test web (testweb/broad-hosts.ts: Zipf-skewed cross
 * links, so a few domains are linked from far more pages than the rest) from one seed,
 * `--scope open`, with a page budget `--max-pages B`: one with importance (the default), one with
 * `--no-importance` (breadth alone). For each, the share of the web's 100 most-linked pages (in
 * links counted from the web's own link model, `inLinks()`, distinct linking pages; ties broken
 * by URL) among the first 10 % of the budget's pages fetched (the pages table by fetch_time),
 * and among all of the pages fetched.
 *
 * An ordering measurement, not a politeness one: `--min-delay-ms 0` and `--max-per-ip 0` (no
 * per-IP cap), so that many hosts are due at once and the gate's ranking decides what goes
 * first; robots.txt on; no dead hosts in the web (they add nothing to an ordering measurement,
 * only waiting at the end).
 *
 * BENCH_IMPORTANCE_DOMAINS (default 2,000) and BENCH_IMPORTANCE_PAGES (the budget, default
 * 2,000) size it; BENCH_CRAWL_ARGS adds `crawl run` flags to both runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb } from '../testweb/index.js';
import { freePort, startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { crawlCli, exited } from './crawl-cli.js';

const DOMAINS = Number(process.env.BENCH_IMPORTANCE_DOMAINS ?? 2_000);
const BUDGET = Number(process.env.BENCH_IMPORTANCE_PAGES ?? 2_000);
const TOP = 100;
/** a run that has not ended by itself by then is stopped (it should take well under a minute) */
const RUN_LIMIT_MS = 10 * 60_000;

interface RunResult {
  label: string;
  pages: number;
  seconds: number;
  topEarly: number;
  early: number;
  topAll: number;
  /** the pages table's importance column: pages with a figure above 0, and the top-100 pages' median */
  linked: number;
  topMedian: number;
}

async function crawlOnce(label: string, flags: string[], web: Awaited<ReturnType<typeof startTestWeb>>, top: Set<string>): Promise<RunResult> {
  const broad = web.broad!;
  const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-importance-'));
  const server = await startEmbeddedServer(path.join(out, '.nats'));
  try {
    const args = [
      'run', '--out', out, ...broad.crawlArgs(), '--scope', 'open', '--seed', broad.seedUrl(), '--max-pages', String(BUDGET),
      '--min-delay-ms', '0', '--max-per-ip', '0', '--until-idle', '--no-compact', '--metrics-port', String(await freePort()), ...flags,
      ...(process.env.BENCH_CRAWL_ARGS ?? '').split(' ').filter(Boolean),
    ];
    const started = performance.now();
    const child = crawlCli(args, { NATS_URL: server.url });
    const timer = setTimeout(() => child.kill('SIGTERM'), RUN_LIMIT_MS);
    const code = await exited(child);
    clearTimeout(timer);
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`${label}: crawl run exited with ${code}`);
    const db = await openOutputDatabase(out);
    try {
      const all = (await db.run('SELECT url, importance FROM pages ORDER BY fetch_time, url')).rows;
      const rows = all.map((r) => String(r[0]));
      const linked = all.filter((r) => Number(r[1]) > 0).length;
      const topFigures = all.filter((r) => top.has(String(r[0]))).map((r) => Number(r[1])).sort((a, b) => a - b);
      const topMedian = topFigures.length > 0 ? topFigures[Math.floor(topFigures.length / 2)]! : 0;
      const early = Math.ceil(BUDGET / 10);
      const topEarly = rows.slice(0, early).filter((u) => top.has(u)).length;
      const topAll = rows.filter((u) => top.has(u)).length;
      return { label, pages: rows.length, seconds, topEarly, early, topAll, linked, topMedian };
    } finally {
      await db.close();
    }
  } finally {
    await server.stop();
    rmSync(out, { recursive: true, force: true });
  }
}

async function main() {
  const web = await startTestWeb({ hosts: 1, broad: { domains: DOMAINS, deadHosts: 0 } });
  try {
    const inLinks = [...web.broad!.inLinks()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const top = new Set(inLinks.slice(0, TOP).map(([u]) => u));
    const least = inLinks[TOP - 1]![1];
    process.stdout.write(
      `bench:importance: broad web of ${DOMAINS} registrable domains × ${web.broad!.options.pagesPerDomain} pages, one seed, --scope open, --max-pages ${BUDGET}, ` +
        `--min-delay-ms 0 --max-per-ip 0; the ${TOP} most-linked pages have ${least} to ${inLinks[0]![1]} in-links\n`,
    );
    const results: RunResult[] = [];
    for (const [label, flags] of [['importance', []], ['breadth alone (--no-importance)', ['--no-importance']]] as Array<[string, string[]]>) {
      const r = await crawlOnce(label, flags, web, top);
      results.push(r);
      process.stdout.write(
        `${r.label}: ${r.topEarly} of the ${TOP} most-linked pages among the first ${r.early} fetched (${((100 * r.topEarly) / TOP).toFixed(0)} %); ` +
          `${r.topAll} among all ${r.pages} pages stored; ${r.seconds.toFixed(0)} s; importance column: ${r.linked} pages above 0, median ${r.topMedian} on the most-linked pages stored\n`,
      );
    }
  } finally {
    await web.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
