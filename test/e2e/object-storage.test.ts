/**
 * Output to an S3-compatible bucket (a real s3rver on loopback): a crawl writes its Parquet
 * tables and WARC files to s3://crawl-test/crawl, is SIGKILLed in the middle, and a second
 * `crawl run` on the same bucket (and the same NATS server) finishes it and compacts. Checked
 * as a user would: the objects list as the layout says, none is partial or temporary, every
 * expected page is there once (also in the raw files, once compacted), every capture points
 * at its record in a WARC object, and `crawl sql` reads the bucket or says what to install.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openS3Store } from '../../pipeline/adapters/s3-store.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { auditArchive } from '../support/archive-checks.js';
import { runCli, startCli } from '../support/crawl-cli.js';
import { E2E, expectedUrls } from '../support/e2e-web.js';
import { startTestNats } from '../support/nats-server.js';
import { startTestS3, type TestS3 } from '../support/s3-server.js';

const OUT = 's3://crawl-test/crawl';
const CRAWL_ID = 'crawl-s3';

/** Every object of the output, downloaded under `dir` at its key. */
async function download(store: ObjectStore, dir: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of store.list('')) {
    keys.push(o.key);
    const local = path.join(dir, ...o.key.split('/'));
    mkdirSync(path.dirname(local), { recursive: true });
    await store.downloadFile(o.key, local);
  }
  return keys.sort();
}

describe('object storage: a crawl into an S3 bucket, killed and resumed', () => {
  let web: TestWeb;
  let s3: TestS3;
  let nats: Awaited<ReturnType<typeof startTestNats>>;
  let local: string;
  before(async () => {
    web = await startTestWeb({ hosts: E2E.smallHosts, pagesPerHost: E2E.pagesPerHost, seed: E2E.seed });
    s3 = await startTestS3();
    nats = await startTestNats();
    local = mkdtempSync(path.join(os.tmpdir(), 'crawl-s3-copy-'));
  });
  after(async () => {
    await web?.close();
    await s3?.close();
    await nats?.cleanup();
    if (local) rmSync(local, { recursive: true, force: true });
  });

  it('writes whole objects, resumes on the same bucket, and keeps each fetch once', async () => {
    const env = { ...s3.env, NATS_URL: nats.url };
    const args = ['run', '--out', OUT, '--until-idle', '--metrics-port', '0', '--crawl-id', CRAWL_ID, '--max-depth', String(E2E.maxDepth), '--min-delay-ms', String(E2E.minDelayMs), '--user-agent', E2E.userAgent];
    // no longer gap for a robots.txt Crawl-delay or a slow answer: the test is about the bucket,
    // not pacing (each host still takes seconds, so the first run is killed in the middle)
    args.push('--max-crawl-delay-ms', String(E2E.minDelayMs), '--adaptive-delay-factor', '0');
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    const seeds = web.model.siteHostNames.flatMap((h) => ['--seed', `http://${h}/`]);

    // the first run is killed once some pages are in the bucket
    const store = await openS3Store(OUT, s3.env);
    const first = startCli([...args, ...seeds], env);
    let uploaded = 0;
    for (let i = 0; i < 1200 && uploaded === 0; i++) {
      await sleep(100);
      for await (const o of store.list('pages/')) if (o.key.endsWith('.parquet')) uploaded += 1;
    }
    assert.ok(uploaded > 0, 'the first run uploaded pages');
    first.child.kill('SIGKILL');
    const killed = await first.done;
    assert.equal(killed.signal, 'SIGKILL', `the first run ended before it was killed: ${killed.stderr.slice(-1000)}`);

    const second = await runCli(args, env, 600_000);
    assert.equal(second.code, 0, second.stderr.slice(-2000));
    assert.match(second.stderr, /compact: /, 'the finished crawl was compacted');

    // the objects: the hive layout for the tables, WARC files and their CDXJ indexes under warc/, nothing else
    const keys = await download(store, local);
    const table = /^(pages|links|fetch_log|captures)\/crawl=crawl-s3\/date=\d{4}-\d{2}-\d{2}\/version=0\/part-[0-9TZ]+-[0-9a-f]+\.parquet$/;
    const warc = /^warc\/CRAWL-crawl-s3-\d{14}-\d{5}-\d+-[0-9a-f]+\.warc\.gz$/;
    const index = /^warc\/CRAWL-crawl-s3-\d{14}-\d{5}-\d+-[0-9a-f]+\.cdxj$/;
    assert.deepEqual(keys.filter((k) => !table.test(k) && !warc.test(k) && !index.test(k)), [], 'every object is a table file, a WARC file or its index');
    assert.deepEqual(keys.filter((k) => index.test(k)).sort(), keys.filter((k) => warc.test(k)).map((k) => k.replace(/\.warc\.gz$/, '.cdxj')).sort(), 'each WARC file has its index');
    for (const t of ['pages', 'links', 'fetch_log', 'captures']) {
      const partitions = new Map<string, number>();
      for (const k of keys.filter((x) => x.startsWith(`${t}/`))) partitions.set(path.posix.dirname(k), (partitions.get(path.posix.dirname(k)) ?? 0) + 1);
      assert.ok(partitions.size > 0, `${t} has files`);
      for (const [p, n] of partitions) assert.equal(n, 1, `${p}: compacted into one file`);
    }
    assert.ok(keys.some((k) => warc.test(k)), 'WARC files were uploaded');

    // each fetch once, in the views and (compaction dropped redelivered copies) in the files
    const db = await openOutputDatabase(local);
    try {
      const urls = (await db.run('SELECT url FROM pages ORDER BY url')).rows.map((r) => String(r[0]));
      assert.deepEqual(urls, expectedUrls(web), 'every expected page, once');
      for (const t of ['pages', 'fetch_log', 'captures']) {
        const [[raw]] = (await db.run(`SELECT count(*) FROM raw_${t}`)).rows as number[][];
        const [[view]] = (await db.run(`SELECT count(*) FROM ${t}`)).rows as number[][];
        assert.equal(raw, view, `${t}: no row twice in the bucket`);
      }
    } finally {
      await db.close();
    }
    // every capture leads to its record in a whole WARC object (read by an independent reader)
    const archive = await auditArchive(local);
    assert.ok(archive.captures >= expectedUrls(web).length, `captures for every page (${archive.captures})`);

    // crawl sql on the bucket: the answer where DuckDB has httpfs, what to install where it has
    // not (never --install-httpfs here: it would download from DuckDB's repository)
    const sql = await runCli(['sql', '--out', OUT, '--format', 'csv', 'SELECT count(*) AS n FROM pages'], s3.env, 120_000);
    if (sql.code === 0) assert.equal(sql.stdout.trim().split('\n')[1], String(expectedUrls(web).length));
    else {
      assert.equal(sql.code, 1, sql.stderr);
      assert.match(sql.stderr, /needs DuckDB's httpfs extension/);
      assert.match(sql.stderr, /--install-httpfs/);
      assert.match(sql.stderr, /httpfs\.duckdb_extension/);
      assert.match(sql.stderr, /crawl sql --out DIR/);
    }
  });
});
