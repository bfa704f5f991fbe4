import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestWeb } from '../../testweb/index.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { runCli, type CliRun } from '../support/crawl-cli.js';
import { startWorkers, useWorkerCrawl, waitUntilIdle } from '../support/worker-crawl.js';
import { E2E, crawlArgs, expectedUrls, storedPages } from '../support/e2e-web.js';
import { auditArchive } from '../support/archive-checks.js';
import { assertUrlsAgreeWithFetchLog } from '../support/urls-checks.js';
import { OPEN_SUFFIX } from '../../pipeline/adapters/warc/file-sink.js';
import { completeLength } from '../../pipeline/adapters/warc/repair.js';

const KILLS = 20;

describe('end to end: persist and archive workers SIGKILLed 20 times at random moments during a crawl', () => {
  const crawl = useWorkerCrawl(() => startTestWeb({ hosts: E2E.hosts, pagesPerHost: E2E.pagesPerHost, seed: E2E.seed }), 'crawl-archive-crash-');

  it('ends with each fetch exactly once in captures, pages and fetch_log, every Parquet file readable and every WARC file whole', async (t) => {
    const { web, out, nats, env, workers } = crawl;
    const settingsArgs = crawlArgs(web, out).filter((a, i, all) => a !== '--seed' && all[i - 1] !== '--seed' && a !== '--out' && all[i - 1] !== '--out');
    // small WARC files and small batches: more file boundaries and more batches for a kill to fall into
    // a slower crawl (3 s between requests to a host, the last --min-delay-ms wins) so that most kills fall
    // inside it: a victim must have started before it is killed, seconds each when the other e2e files
    // keep the cores busy (at 2 s, 8 to 14 of the 20 kills fell inside the crawl in full e2e runs)
    const applied = await runCli(['topology', 'apply', ...settingsArgs, '--min-delay-ms', '3000', '--warc-max-bytes', String(128 * 1024)], env);
    assert.equal(applied.code, 0, applied.stderr);
    workers.push(...startWorkers(['normalize', 'seen-filter', 'politeness-gate', 'fetch', 'extract', 'simhash'], out, env));
    // the victims log at info level, so the test sees when one has started and is working
    const victimEnv = { ...env, LOG_LEVEL: 'info' };
    const victims = { persist: startVictim('persist', out, victimEnv), archive: startVictim('archive', out, victimEnv) };
    // the fixture kills `workers` when the test ends; the victims join them only after the kills, so a
    // failure before that would leave them running and the test process waiting for them
    t.after(() => {
      for (const v of Object.values(victims)) v.child.kill('SIGKILL');
    });
    const seeded = await runCli(['seed', ...web.model.siteHostNames.map((h) => `http://${h}/`)], env);
    assert.equal(seeded.code, 0, seeded.stderr);

    let duringCrawl = 0;
    const leftOpen = new Set<string>();
    const torn = new Set<string>();
    const stderrOfKilled: string[] = [];
    const total = expectedUrls(web).length;
    for (let i = 0; i < KILLS; i++) {
      const which = Math.random() < 0.5 ? 'persist' : 'archive';
      // a random moment of its work, not of its start-up
      await victims[which].started;
      await sleep(50 + Math.random() * 600);
      const requestsBefore = web.requestLog().length;
      victims[which].child.kill('SIGKILL');
      const gone = await victims[which].done;
      assert.equal(gone.signal, 'SIGKILL', `the ${which} worker had already exited: ${gone.stderr}`);
      stderrOfKilled.push(gone.stderr);
      if (which === 'archive') {
        // what the dead writer left: files still marked open, and whether one ends in a torn record
        // no warc directory yet: killed before the first exchange reached it (the crawl had barely begun)
        const warcDir = path.join(out, 'warc');
        for (const f of (existsSync(warcDir) ? readdirSync(warcDir) : []).filter((n) => n.endsWith(OPEN_SUFFIX))) {
          const file = path.join(out, 'warc', f.slice(0, -OPEN_SUFFIX.length));
          leftOpen.add(file);
          if (existsSync(file) && (await completeLength(file)) < statSync(file).size) torn.add(file);
        }
      }
      if (web.requestLog().filter((r) => r.path !== '/robots.txt').length < total) duringCrawl += requestsBefore > 0 ? 1 : 0;
      victims[which] = startVictim(which, out, victimEnv);
    }
    console.log(`${KILLS} kills, ${duringCrawl} of them while pages were still being fetched`);
    assert.ok(duringCrawl >= KILLS / 2, 'most kills fall during the crawl');
    workers.push(victims.persist, victims.archive);

    assert.ok(await waitUntilIdle(nats.url, { timeoutMs: 600_000, started: () => web.requestLog().length > 0 }), 'the crawl did not become idle');
    for (const w of workers) w.child.kill('SIGTERM');
    const exits = await Promise.all(workers.map((w) => w.done));
    for (const e of exits) assert.equal(e.code, 0, `a worker did not shut down cleanly: ${e.stderr}`);
    workers.length = 0;
    const sealed = [...stderrOfKilled, ...exits.map((e) => e.stderr)]
      .join('\n')
      .split('\n')
      .filter((l) => l.includes('WARC file of a dead writer sealed'))
      .map((l) => (JSON.parse(l) as { cutBytes: number }).cutBytes);
    console.log(`WARC files left open by a killed archive worker: ${leftOpen.size} (${torn.size} ending in a torn record); sealing logged: ${sealed.length} (logs are async, a kill may lose them)`);

    // pages: the expected set, each once
    const stored = await storedPages(out);
    assert.deepEqual(stored.urls, expectedUrls(web));
    assert.deepEqual(stored.storedTwice, [], 'pages stored more than once');
    // the per-URL view tells the same story as the log it is made from, whatever the kills left twice
    const checkStart = Date.now();
    const urlCount = await assertUrlsAgreeWithFetchLog(out);
    console.log(`urls: ${urlCount} URLs agree with fetch_log (checked in ${Date.now() - checkStart} ms)`);
    assert.ok(urlCount >= stored.urls.length);

    // WARC: every file whole and readable by warcio; every captures row leads to its record
    const audit = await auditArchive(out);
    console.log(`archive: ${audit.files} files, ${audit.records} records, ${audit.captures} captures (${audit.rawCaptures} rows before dedup)`);

    const db = await openOutputDatabase(out);
    try {
      // each fetch once: one capture per stored page, one fetch_log 'fetched' row per page
      const perPage = await db.run('SELECT p.url, count(c.capture_id) AS n FROM pages p LEFT JOIN captures c ON c.fetch_id = p.fetch_id GROUP BY 1 HAVING n <> 1');
      assert.deepEqual(perPage.rows, [], 'pages without exactly one capture');
      const fetched = await db.run("SELECT count(*), count(DISTINCT fetch_id) FROM fetch_log WHERE outcome = 'fetched'");
      assert.deepEqual(fetched.rows[0]!.map(Number), [stored.rows, stored.rows]);
      const captureIds = await db.run('SELECT count(*), count(DISTINCT capture_id) FROM captures');
      assert.equal(Number(captureIds.rows[0]![0]), Number(captureIds.rows[0]![1]));
      // DuckDB reads every Parquet file of every table on its own
      for (const table of ['pages', 'links', 'fetch_log', 'captures']) {
        // the files sit in partition folders (crawl=…/date=…/version=…/), hence the recursive walk
        const files = (readdirSync(path.join(out, table), { recursive: true }) as string[]).filter((n) => n.endsWith('.parquet'));
        assert.ok(files.length > 0, `no Parquet file under ${table}/`);
        for (const f of files) {
          const r = await db.run(`SELECT count(*) FROM read_parquet('${path.join(out, table, f)}')`);
          assert.ok(Number(r.rows[0]![0]) > 0, `${table}/${f} is empty`);
        }
      }
    } finally {
      await db.close();
    }
  });
});

/** Starts a victim worker; `started` resolves once it logged that it started (or it exited). */
function startVictim(stage: string, out: string, env: NodeJS.ProcessEnv): CliRun & { started: Promise<void> } {
  const w = startWorkers([stage], out, env)[0]!;
  const started = new Promise<void>((resolve) => {
    let seen = '';
    w.child.stderr!.on('data', (c: Buffer) => {
      seen = (seen + c.toString()).slice(-4096);
      if (seen.includes('worker started')) resolve();
    });
    w.child.once('exit', () => resolve());
  });
  return { ...w, started };
}
