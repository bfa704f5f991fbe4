/**
 * Pages up to the size cap stored whole on a stock nats-server (max_payload 1 MiB): one
 * `crawl run --until-idle` of big.test (testweb/big-page-hosts.ts) against such a server.
 * The 5 MiB page (exactly the default --max-page-bytes) is in `pages` with its whole length
 * and digest, its last link followed, its WARC record holds every byte (`crawl get`); the
 * 6 MiB page is stored cut, marked (content_truncated, WARC-Truncated) and the fetch_log
 * says why. The bodies went through CRAWL_BODIES, and `crawl replay --from extract` reads
 * them back while the streams keep them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { BIG_PAGE_BYTES, BIG_PAGE_HOST, BIG_PAGE_PATH, BIG_PAGE_PATHS, OVER_CAP_PATH, startTestWeb, type TestWeb } from '../../testweb/index.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E, queryOutput } from '../support/e2e-web.js';
import { startTestNats } from '../support/nats-server.js';

const MIB = 1024 * 1024;
const url = (p: string) => `http://${BIG_PAGE_HOST}${p}`;

describe('pages up to 5 MiB on a server with max_payload 1 MiB', () => {
  let web: TestWeb;
  let nats: Awaited<ReturnType<typeof startTestNats>>;
  let out: string;
  before(async () => {
    web = await startTestWeb({ hosts: 1, pagesPerHost: 2, bigPages: true });
    nats = await startTestNats({ maxPayloadBytes: MIB });
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-big-pages-'));
  });
  after(async () => {
    await web?.close();
    await nats?.cleanup();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('stores the 5 MiB page whole (pages, WARC, crawl get), the 6 MiB one cut and marked, and replays them', async () => {
    const env = { NATS_URL: nats.url };
    const args = ['run', '--out', out, '--until-idle', '--seed', url('/'), '--resolve', web.resolveRules.find((r) => r.startsWith(BIG_PAGE_HOST))!];
    args.push('--min-delay-ms', '0', '--adaptive-delay-factor', '0', '--max-depth', '3', '--user-agent', E2E.userAgent);
    const started = Date.now();
    const run = await runCli(args, env, 180_000);
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    console.log(`crawl of ${BIG_PAGE_HOST}: ${Date.now() - started} ms`);

    const five = web.bigPages!.body(BIG_PAGE_PATH);
    const pages = await queryOutput(out, 'SELECT url, content_length, content_digest, content_truncated FROM pages ORDER BY url');
    assert.deepEqual(pages.map((r) => r[0]).sort(), BIG_PAGE_PATHS.map(url).sort(), 'every page, and the one linked from the end of the 5 MiB page');
    const row = (p: string) => pages.find((r) => r[0] === url(p))!;
    assert.deepEqual(row(BIG_PAGE_PATH).slice(1), [BIG_PAGE_BYTES, contentDigest(five), false], 'the 5 MiB page: whole');
    assert.deepEqual(row(OVER_CAP_PATH).slice(1), [BIG_PAGE_BYTES, contentDigest(web.bigPages!.body(OVER_CAP_PATH).subarray(0, BIG_PAGE_BYTES)), true], 'the 6 MiB page: cut at the cap, marked');
    const [[reason]] = (await queryOutput(out, `SELECT reason FROM fetch_log WHERE url = '${url(OVER_CAP_PATH)}'`)) as [[string]];
    assert.match(reason, /^stored \(body truncated at the size cap: the first 5242880 bytes kept, --max-page-bytes\)$/);
    assert.ok(!web.requestLog().some((r) => r.path === '/after-over-cap.html'), 'the cut page ends before its last link');

    const captures = await queryOutput(out, `SELECT url, content_digest, content_truncated FROM captures WHERE url IN ('${url(BIG_PAGE_PATH)}', '${url(OVER_CAP_PATH)}') ORDER BY url`);
    assert.deepEqual(captures.find((r) => r[0] === url(BIG_PAGE_PATH))!.slice(1), [contentDigest(five), null]);
    assert.equal(captures.find((r) => r[0] === url(OVER_CAP_PATH))![2], 'length');

    const got = await runCli(['get', '--out', out, '--payload', url(BIG_PAGE_PATH)], {}, 60_000);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout.length, BIG_PAGE_BYTES, 'crawl get gives every byte');
    assert.ok(Buffer.from(got.stdout, 'latin1').equals(five));
    const cut = await runCli(['get', '--out', out, url(OVER_CAP_PATH)], {}, 60_000);
    assert.match(cut.stdout.slice(0, 2000), /\r\nWARC-Truncated: length\r\n/);

    // the bodies did not fit a message: they went through the bodies stream
    const nc = await connect({ servers: nats.url });
    try {
      const bodies = (await (await jetstreamManager(nc)).streams.info('CRAWL_BODIES')).state;
      assert.ok(bodies.bytes >= 2 * BIG_PAGE_BYTES, `CRAWL_BODIES holds both large bodies (${bodies.messages} chunks, ${bodies.bytes} bytes)`);
    } finally {
      await nc.close();
    }

    const replay = await runCli(['replay', '--from', 'extract', '--out', out], env, 120_000);
    assert.equal(replay.code, 0, replay.stderr.slice(-2000));
    assert.match(replay.stdout, /, 0 failed .*-> version 1 in /);
    const replayed = await queryOutput(out, `SELECT version, content_length, content_digest FROM pages WHERE url = '${url(BIG_PAGE_PATH)}'`);
    assert.deepEqual(replayed, [[1, BIG_PAGE_BYTES, contentDigest(five)]]);
  });
});
