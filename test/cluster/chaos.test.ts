/**
 * Chaos on a real 3-node JetStream cluster: every stage in its own process (two of fetch,
 * extract and seen-filter), spread over the three servers, crawls the politeness test web
 * with every stream, consumer and bucket kept in three copies. In the middle of the crawl
 * the server leading the hosts bucket (the politeness state) is killed with SIGKILL, a
 * fetcher and the persist worker are killed too and replaced, and the server is started
 * again later. Judged as a user would: the crawl ends by itself, the site operators' request
 * log shows no impoliteness, every page a polite crawl may fetch is stored, each fetch shows
 * once in pages, captures and fetch_log, and nothing the web served is missing from the output.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { politenessSeedUrls, startTestWeb, type RequestRecord, type TestWeb } from '../../testweb/index.js';
import { assertRequestLogPolite } from '../support/politeness-audit.js';
import { runCli, startCli, type CliRun } from '../support/crawl-cli.js';
import { useLocalCluster } from '../support/local-cluster.js';
import { waitUntilIdle } from '../support/worker-crawl.js';
import { mustStore, POLITENESS, politenessSettingsArgs, SITE, TOKEN, MIN_DELAY_MS, PER_IP } from '../support/politeness-crawl.js';
import { queryOutput } from '../support/e2e-web.js';

const STAGES = ['normalize', 'seen-filter', 'seen-filter', 'politeness-gate', 'fetch', 'fetch', 'extract', 'extract', 'simhash', 'persist', 'archive'];

/** The longest time in [from, to) with no request to the web starting. */
const longestPause = (log: readonly RequestRecord[], from: number, to: number) => longestGap(log.map((r) => r.start), from, to);

/** When each Parquet file of `pages` was written (persist writes one a batch, so a file is a moment pages were stored). */
function pagesStoredAt(out: string): number[] {
  const dir = path.join(out, 'pages');
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet')).map((f) => statSync(path.join(dir, f)).mtimeMs);
}

/** The longest time in [from, to) with none of `times` in it (counted from `from`, and up to `to`). */
function longestGap(times: readonly number[], from: number, to: number): number {
  let longest = 0;
  let prev = from;
  for (const t of [...times.filter((x) => x >= from && x < to).sort((a, b) => a - b), to]) {
    longest = Math.max(longest, t - prev);
    prev = t;
  }
  return longest;
}

describe('chaos: a 3-node cluster loses the leader of the hosts bucket mid-crawl, and workers die', () => {
  const local = useLocalCluster();

  it('completes, loses no URL, writes each fetch once and stays polite', async (t) => {
    const { cluster } = local;
    let web: TestWeb | undefined;
    const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-chaos-'));
    // kept when the test fails (CHAOS_KEEP_LOGS=1 keeps it always, and the output too)
    const logDir = mkdtempSync(path.join(os.tmpdir(), 'crawl-chaos-logs-'));
    let passed = false;
    const workers: CliRun[] = [];
    const env = { NATS_URL: cluster.url };
    try {
      web = await startTestWeb({ ...SITE, politeness: POLITENESS });
      const applied = await runCli(['topology', 'apply', '--replicas', '3', ...politenessSettingsArgs(web)], env);
      assert.equal(applied.code, 0, applied.stderr);

      // each worker is given one server (the next in turn), and learns the others from it;
      // its log goes to a file, for the diagnosis when something is wrong
      const logs = path.join(logDir, 'workers');
      mkdirSync(logs, { recursive: true });
      let started = 0;
      const start = (stage: string, natsUrl: string) =>
        startCli(['worker', '--stage', stage, '--out', out, '--metrics-port', '0', '--log-level', 'info', '--log-file', path.join(logs, `${++started}-${stage}.log`)], { NATS_URL: natsUrl });
      STAGES.forEach((stage, i) => workers.push(start(stage, cluster.nodes[i % cluster.nodes.length]!.url)));
      const seeded = await runCli(['seed', ...web.model.siteHostNames.map((h) => `http://${h}/`), ...politenessSeedUrls(POLITENESS)], env);
      assert.equal(seeded.code, 0, seeded.stderr);

      // mid-crawl: a good share of the requests made, far from all
      for (let i = 0; i < 2400 && web.requestLog().length < 120; i++) await sleep(50);
      assert.ok(web.requestLog().length >= 120, `the crawl got going (${web.requestLog().length} requests)`);

      const nc = await connectNats(cluster.url, 'chaos-observer');
      const leader = (await (await jetstreamManager(nc)).streams.info('KV_crawl-hosts')).cluster?.leader;
      await nc.close();
      assert.ok(leader, 'the hosts bucket has a leader');
      const killedAt = Date.now();
      await cluster.kill(leader);

      // workers die too, a few seconds into the election, and are replaced
      await sleep(3000);
      const fetcher = workers[STAGES.indexOf('fetch')]!;
      const persist = workers[STAGES.indexOf('persist')]!;
      for (const w of [fetcher, persist]) w.child.kill('SIGKILL');
      await Promise.all([fetcher.done, persist.done]);
      workers.splice(workers.indexOf(fetcher), 1);
      workers.splice(workers.indexOf(persist), 1);
      // replacements are given every server, as an operator's NATS_URL would be
      workers.push(start('fetch', cluster.url), start('persist', cluster.url));

      await sleep(12_000);
      await cluster.restart(leader);
      const restartedAt = Date.now();

      if (!(await waitUntilIdle(cluster.url, { timeoutMs: 300_000 }))) {
        const status = await runCli(['status', '--out', out], env);
        assert.fail(`the crawl did not become idle:\n${status.stdout}${status.stderr}\nworker logs in ${logs}`);
      }
      const idleAt = Date.now();
      for (const w of workers) w.child.kill('SIGTERM');
      for (const e of await Promise.all(workers.map((w) => w.done))) assert.equal(e.code, 0, `a worker did not stop cleanly: ${e.stderr.slice(-800)}`);
      workers.length = 0;

      const log = web.requestLog();
      const firstAfter = Math.min(...log.map((r) => r.start).filter((s) => s >= killedAt)) - killedAt;
      const stall = longestPause(log, killedAt, killedAt + 30_000);
      const crawlStart = Math.min(...log.map((r) => r.start));
      const before = longestPause(log, Math.max(crawlStart, killedAt - 30_000), killedAt);
      const stored = pagesStoredAt(out);
      const firstStoredAfter = Math.min(...stored.filter((s) => s >= killedAt)) - killedAt;
      // gaps between two stores in the minute after the kill (the crawl's own tail, slow hosts
      // and retries, is not the server's doing); the whole minute when nothing was stored in it
      const inMinute = stored.filter((s) => s >= killedAt && s < killedAt + 60_000);
      const storeStall = longestGap(stored, killedAt, inMinute.length > 0 ? Math.max(...inMinute) : killedAt + 60_000);
      const storeBefore = longestGap(stored, Math.max(crawlStart, killedAt - 30_000), killedAt);
      t.diagnostic(
        `node ${leader} (leader of the hosts bucket) killed ${Math.round((killedAt - crawlStart) / 1000)} s into the crawl: first request after it ${Math.round(firstAfter)} ms later, ` +
          `longest pause in requests ${Math.round(stall)} ms in the 30 s after (${Math.round(before)} ms before it); ` +
          `first pages stored ${Math.round(firstStoredAfter)} ms after it, longest time without a page stored ${Math.round(storeStall)} ms in the minute after it (${Math.round(storeBefore)} ms in the 30 s before); ` +
          `restarted after ${Math.round((restartedAt - killedAt) / 1000)} s; idle ${Math.round((idleAt - killedAt) / 1000)} s after the kill; ${log.length} requests`,
      );

      // polite, by the site operators' own log
      const findings = assertRequestLogPolite(log, { token: TOKEN, minDelayMs: MIN_DELAY_MS, perIpCap: PER_IP });
      assert.ok(findings.counts.requests > 200, `a real crawl happened (${findings.counts.requests} requests)`);

      // nothing lost: every page a polite crawl may fetch is stored, nothing robots.txt keeps out
      const storedUrls = new Set((await queryOutput(out, 'SELECT url FROM pages')).map((r) => String(r[0])));
      const { must, forbidden } = mustStore(web);
      assert.deepEqual([...must].filter((u) => !storedUrls.has(u)), [], 'every page a polite crawl may fetch is stored');
      assert.deepEqual([...forbidden].filter((u) => storedUrls.has(u)), [], 'no page robots.txt keeps out is stored');

      // each fetch once: one page row per URL and per fetch, one terminal outcome per fetch,
      // one capture per attempt, and every stored page has its capture
      const [[pages, pageUrls, pageFetches]] = (await queryOutput(out, 'SELECT count(*), count(DISTINCT url), count(DISTINCT fetch_id) FROM pages_all')) as number[][];
      assert.equal(pageUrls, pages, 'no URL stored twice');
      assert.equal(pageFetches, pages, 'no fetch stored twice');
      const twiceEnded = await queryOutput(out, "SELECT fetch_id, count(*) FROM fetch_log_all WHERE outcome <> 'retry' AND fetch_id IS NOT NULL GROUP BY 1 HAVING count(*) > 1");
      assert.deepEqual(twiceEnded, [], 'one terminal outcome per fetch');
      const [[captures, captureIds]] = (await queryOutput(out, 'SELECT count(*), count(DISTINCT capture_id) FROM captures_all')) as number[][];
      assert.equal(captureIds, captures, 'one capture per attempt');
      const uncaptured = await queryOutput(out, "SELECT p.url FROM pages p LEFT JOIN captures c ON c.fetch_id = p.fetch_id AND c.warc_type IN ('response', 'revisit') WHERE c.fetch_id IS NULL");
      assert.deepEqual(uncaptured, [], 'every stored page has its WARC capture');

      // every page the web served is in the output, with an outcome
      const recorded = new Set((await queryOutput(out, 'SELECT url FROM fetch_log UNION SELECT url FROM pages')).map((r) => String(r[0])));
      const served = [...new Set(log.filter((r) => r.status === 200 && !r.path.startsWith('/robots.txt')).map((r) => `http://${r.host}${r.path}`))];
      assert.deepEqual(served.filter((u) => !recorded.has(u)), [], 'every URL the web answered is in the output');
      passed = true;
    } finally {
      if (passed && !process.env.CHAOS_KEEP_LOGS) rmSync(logDir, { recursive: true, force: true });
      for (const w of workers) w.child.kill('SIGKILL');
      await web?.close();
      if (process.env.CHAOS_KEEP_LOGS) process.stderr.write(`chaos: output in ${out}, worker logs in ${logDir}\n`);
      else rmSync(out, { recursive: true, force: true });
    }
  });
});
