/**
 * `npm run bench:first-pass`: what `--target-unique-domains` buys (seed 003's first pass). Two
 * `crawl run --scope open --until-idle --max-pages 600` from one seed over the broad test web
 * (testweb/broad-hosts.ts; 2,000 registrable domains × 5 pages by default, more domains than the
 * budget has pages), one with `--target-unique-domains 500`, one without; default politeness.
 * Prints, for each, the pages stored and the registrable domains they belong to: with the
 * target, only links to new domains are queued until 500 domains have a page, so the 600
 * admissions reach at least 500 domains; without it, a domain's other pages take their share.
 *
 * FIRST_PASS_DOMAINS sets the web's size; BENCH_CRAWL_ARGS adds `crawl run` flags to both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb } from '../testweb/index.js';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { crawlCli, exited } from './crawl-cli.js';

const DOMAINS = Number(process.env.FIRST_PASS_DOMAINS ?? 2000);
const MAX_PAGES = 600;
const TARGET = 500;

async function crawl(dir: string, name: string, extra: string[], common: string[]): Promise<{ pages: number; domains: number; seconds: number }> {
  const out = path.join(dir, name);
  const started = performance.now();
  const child = crawlCli(['run', '--out', out, ...common, ...extra], { NATS_URL: '' }, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-5000)));
  const code = await exited(child);
  if (code !== 0) throw new Error(`crawl run (${name}) exited ${code}: ${stderr}`);
  const seconds = (performance.now() - started) / 1000;
  const db = await openOutputDatabase(out);
  try {
    const row = (await db.run('SELECT count(*), count(DISTINCT url_host_registered_domain) FROM pages')).rows[0]!;
    return { pages: Number(row[0]), domains: Number(row[1]), seconds };
  } finally {
    await db.close();
  }
}

async function main() {
  const web = await startTestWeb({ hosts: 1, broad: { domains: DOMAINS } });
  const broad = web.broad!;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-first-pass-'));
  try {
    const common = ['--until-idle', '--scope', 'open', '--seed', broad.seedUrl(), '--max-pages', String(MAX_PAGES), ...broad.crawlArgs(), ...(process.env.BENCH_CRAWL_ARGS ?? '').split(' ').filter(Boolean)];
    console.log(`first pass: the broad web of ${DOMAINS} registrable domains × ${broad.options.pagesPerDomain} pages, one seed, --scope open --max-pages ${MAX_PAGES}, default politeness`);
    const withTarget = await crawl(dir, 'with-target', ['--target-unique-domains', String(TARGET)], common);
    console.log(`with --target-unique-domains ${TARGET}: ${withTarget.pages} pages of ${withTarget.domains} registrable domains (${withTarget.seconds.toFixed(0)} s)`);
    const without = await crawl(dir, 'without', [], common);
    console.log(`without it:                      ${without.pages} pages of ${without.domains} registrable domains (${without.seconds.toFixed(0)} s)`);
    const holds = withTarget.domains >= TARGET && without.domains < withTarget.domains;
    console.log(holds ? `the target holds: >= ${TARGET} domains with it, fewer without` : `NOT as expected: ${withTarget.domains} domains with the target, ${without.domains} without`);
    if (!holds) process.exitCode = 1;
  } finally {
    await web.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
