/**
 * `npm run bench:hol`: head-of-line blocking. 200 small hosts are crawled twice, by one
 * `crawl worker` process per stage: once alone, once after 100,000 URLs of one big host
 * were queued. Reports how long the small hosts took each time (from their seeding to their
 * last request, read from the test web's own log), the ratio, and the peak RSS of the
 * politeness-gate process. Target: ratio ≤ 1.2.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import { startTestWeb, type TestWeb } from '../testweb/index.js';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { peakRssMb } from './proc-stats.js';
import { SUBJECTS } from '../topology/index.js';
import { pipelineBacklog } from '../app/backlog.js';
import { streamAdmin } from '../pipeline/adapters/stream-admin.js';
import { crawlCli as cli, exited } from './crawl-cli.js';

const SMALL_HOSTS = Number(process.env.HOL_SMALL_HOSTS ?? 200);
const BIG_URLS = Number(process.env.HOL_BIG_URLS ?? 100_000);
const PAGES_PER_SMALL_HOST = 10;
const MIN_DELAY_MS = 200;


async function runOnce(web: TestWeb, withBig: boolean): Promise<{ seconds: number; smallRequests: number; rssMb: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-hol-'));
  const server = await startEmbeddedServer(path.join(dir, 'nats'));
  const env = { NATS_URL: server.url };
  // the trap budgets are off: the big host's 100,000 URLs share one pattern (/queued/<n>), and
  // what is measured is whether they slow the small hosts down, not whether they get cut off
  const settings = ['--min-delay-ms', String(MIN_DELAY_MS), '--max-depth', '3', '--max-per-ip', '0', '--adaptive-delay-factor', '0', '--max-pages-per-host', '0', '--max-urls-per-pattern', '0'];
  for (const rule of web.resolveRules) settings.push('--resolve', rule);
  if ((await exited(cli(['topology', 'apply', ...settings], env))) !== 0) throw new Error('topology apply failed');
  const workers = ['normalize', 'seen-filter', 'politeness-gate', 'fetch', 'extract', 'simhash', 'persist'].map((stage) =>
    cli(['worker', '--stage', stage, '--out', path.join(dir, 'out')], env),
  );
  const gate = workers[2]!;
  let rssMb = 0;
  const poll = setInterval(() => (rssMb = Math.max(rssMb, peakRssMb(gate.pid!))), 200);
  const nc = await connectNats(server.url, 'hol-bench');
  const js = jetstream(nc);
  const admin = streamAdmin(nc);
  const bigHost = web.model.benchHostNames[0]!;
  const smallHosts = web.model.benchHostNames.slice(1, SMALL_HOSTS + 1);
  try {
    if (withBig) {
      for (let i = 0; i < BIG_URLS; i += 1000) {
        const batch = [];
        for (let j = i; j < Math.min(BIG_URLS, i + 1000); j++) batch.push(js.publish(SUBJECTS.seeds, `http://${bigHost}/queued/${j}`));
        await Promise.all(batch);
      }
      // wait until every big-host URL sits in its host queue (nothing upstream of the gate left)
      for (;;) {
        const { perStage } = await pipelineBacklog(admin);
        const left = ['normalize', 'seen-filter', 'politeness-gate'].reduce((n, stage) => n + (perStage[stage] ?? 0), 0);
        if (left === 0) break;
        await sleep(1000);
      }
      process.stdout.write(`  ${BIG_URLS} URLs of ${bigHost} queued\n`);
    }
    web.clearLog();
    const started = Date.now();
    await Promise.all(smallHosts.map((h) => js.publish(SUBJECTS.seeds, `http://${h}/`)));
    const small = new Set(smallHosts);
    let last = 0;
    let count = 0;
    let quietSince = Date.now();
    // done when no small-host request came for 5 s (after the first one: workers may still be starting)
    while (count === 0 ? Date.now() - started < 120_000 : Date.now() - quietSince < 5000) {
      await sleep(250);
      const reqs = web.requestLog().filter((r) => small.has(r.host));
      if (reqs.length !== count) {
        count = reqs.length;
        last = Math.max(...reqs.map((r) => r.end));
        quietSince = Date.now();
      }
    }
    return { seconds: (last - started) / 1000, smallRequests: count, rssMb };
  } finally {
    clearInterval(poll);
    await nc.close();
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(workers.map(exited));
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const web = await startTestWeb({ hosts: 1, benchHosts: SMALL_HOSTS + 1, benchPagesPerHost: PAGES_PER_SMALL_HOST, seed: 3 });
  try {
    const alone = await runOnce(web, false);
    process.stdout.write(`small hosts alone: ${alone.smallRequests} requests in ${alone.seconds.toFixed(1)} s, gate peak RSS ${alone.rssMb.toFixed(0)} MB\n`);
    const behind = await runOnce(web, true);
    process.stdout.write(`small hosts behind ${BIG_URLS} queued URLs of one host: ${behind.smallRequests} requests in ${behind.seconds.toFixed(1)} s, gate peak RSS ${behind.rssMb.toFixed(0)} MB\n`);
    console.log('\n| metric | small hosts alone | with the big host queued |');
    console.log('|---|---|---|');
    console.log(`| small-host requests | ${alone.smallRequests} | ${behind.smallRequests} |`);
    console.log(`| time to finish the small hosts (s) | ${alone.seconds.toFixed(1)} | ${behind.seconds.toFixed(1)} |`);
    console.log(`| ratio | 1.00 | ${(behind.seconds / alone.seconds).toFixed(2)} |`);
    console.log(`| peak RSS of the politeness-gate process (MB) | ${alone.rssMb.toFixed(0)} | ${behind.rssMb.toFixed(0)} |`);
  } finally {
    await web.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
