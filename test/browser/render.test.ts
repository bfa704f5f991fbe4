/**
 * Rendering, end to end: `crawl run --until-idle` over the test web's *.render.test hosts
 * (testweb/render-hosts.ts): routed to the render stage (real Chromium) by a pattern, found
 * by --render-auto, and not rendered. Judged from the output and from the test web's own request log:
 *
 *  1. rendered: every page of the app is stored with the text its script built, including
 *     the pages linked only from rendered pages; not rendered: the home page's empty shell,
 *     and nothing else;
 *     with --render-auto instead of a pattern, the shells are found by their HTML: the same
 *     pages, rendered, each with the shell rule's reason;
 *  2. the escape page's attempts never reach the test's loopback listener;
 *  3. the endless page ends at the render timeout, stored, with a reason that says so;
 *  4. the browser's requests are polite as the server sees them: robots.txt honoured, one
 *     request at a time per host, the delay between them; images and fonts never asked for;
 *     the document of each page fetched once, the shared script once;
 *  5. the DOM is archived (a conversion record, `captures` subset rendered), readable with
 *     `crawl get --rendered`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  APP_BLOCKED_PATHS,
  APP_HOST,
  APP_PAGES,
  appTextMarker,
  ENDLESS_HOST,
  ENDLESS_TEXT_MARKER,
  ESCAPE_HOST,
  ESCAPE_TEXT_MARKER,
  startTestWeb,
  type TestWeb,
} from '../../testweb/index.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { runCli } from '../support/crawl-cli.js';
import { auditRequestLog } from '../support/politeness-audit.js';

const TOKEN = 'testcrawler';
const USER_AGENT = `${TOKEN}/1.0 (+http://127.0.0.1/contact)`;
const MIN_DELAY_MS = 200;
const RENDER_TIMEOUT_MS = 4000;

describe('end to end: rendering JavaScript pages', () => {
  let web: TestWeb;
  let probe: Server;
  let probeConnections = 0;
  const outs: string[] = [];

  before(async () => {
    probe = createServer((s) => {
      probeConnections++;
      s.destroy();
    });
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    web = await startTestWeb({ hosts: 1, render: { probePort: (probe.address() as { port: number }).port } });
  });
  after(async () => {
    await web?.close();
    await new Promise<void>((r) => probe.close(() => r()));
    for (const out of outs) rmSync(out, { recursive: true, force: true });
  });

  async function crawl(seeds: string[], extra: string[]): Promise<string> {
    const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-render-'));
    outs.push(out);
    const args = ['run', '--out', out, '--until-idle', '--min-delay-ms', String(MIN_DELAY_MS), '--user-agent', USER_AGENT, ...extra];
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    for (const seed of seeds) args.push('--seed', seed);
    const started = Date.now();
    const result = await runCli(args, {}, 240_000);
    assert.equal(result.code, 0, `crawl run failed: ${result.stderr.slice(-3000)}`);
    console.log(`crawl of ${seeds.length} render hosts (${extra.join(' ') || 'no rendering'}) idle after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return out;
  }

  it('without rendering, the app is one empty shell and its links are never found', async () => {
    web.clearLog();
    const out = await crawl([`http://${APP_HOST}/`], []);
    const db = await openOutputDatabase(out);
    try {
      const pages = (await db.run('SELECT url, rendered, text_full, outlinks FROM pages')).rows;
      assert.deepEqual(pages, [[`http://${APP_HOST}/`, false, '', 0]]);
    } finally {
      await db.close();
    }
    assert.deepEqual(
      web.requestLog().map((r) => r.path),
      ['/robots.txt', '/', '/sitemap.xml'],
      'nothing of the app but its shell (and the sitemap every seed host is asked for) was asked for',
    );
  });

  it('with --render-auto, the app\'s shells are found by their HTML and rendered: every page, each with its reason', async () => {
    const out = await crawl([`http://${APP_HOST}/`], ['--render-auto']);
    const db = await openOutputDatabase(out);
    try {
      const rows = (await db.run(`SELECT p.url, p.rendered, p.text_full, f.reason FROM pages p JOIN fetch_log f USING (fetch_id) WHERE f.outcome = 'fetched' ORDER BY p.url`)).rows;
      assert.deepEqual(rows.map((r) => r[0]), Object.keys(APP_PAGES).map((p) => `http://${APP_HOST}${p}`).sort());
      for (const [url, rendered, text, reason] of rows) {
        assert.equal(rendered, true, `${url} rendered`);
        assert.match(String(text), new RegExp(appTextMarker(new URL(String(url)).pathname)));
        assert.match(String(reason), /^stored; rendered \(application shell: \d+ words of text, 1 empty mount element, 1 script\): settled after /);
      }
    } finally {
      await db.close();
    }
  });

  it('with rendering: the app with its text and the pages only its scripts link; the escape and endless pages end safely and in time', async () => {
    web.clearLog();
    const seeds = [APP_HOST, ESCAPE_HOST, ENDLESS_HOST].map((h) => `http://${h}/`);
    const out = await crawl(seeds, ['--render', 'http://*.render.test/*', '--render-timeout-ms', String(RENDER_TIMEOUT_MS)]);
    const log = web.requestLog();
    const db = await openOutputDatabase(out);
    try {
      // 1. every app page, each with its own text, found through rendered links
      const app = (await db.run(`SELECT url, rendered, text_full FROM pages WHERE url_host_name = '${APP_HOST}' ORDER BY url`)).rows;
      assert.deepEqual(app.map((r) => r[0]), Object.keys(APP_PAGES).map((p) => `http://${APP_HOST}${p}`).sort());
      for (const [url, rendered, text] of app) {
        assert.equal(rendered, true, `${url} rendered`);
        assert.match(String(text), new RegExp(appTextMarker(new URL(String(url)).pathname)), `${url} has the text its script built`);
      }
      const linked = (await db.run(`SELECT DISTINCT dst_url FROM links WHERE src_url LIKE 'http://${APP_HOST}/%'`)).rows.map((r) => String(r[0]));
      assert.ok(linked.includes(`http://${APP_HOST}/p/3`) && linked.includes(`http://${APP_HOST}/p/4`), 'links that exist only after rendering were found');

      // 2. the escape page rendered, and nothing it tried reached the listener
      const [escape] = (await db.run(`SELECT rendered, text_full FROM pages WHERE url_host_name = '${ESCAPE_HOST}'`)).rows;
      assert.equal(escape![0], true);
      assert.match(String(escape![1]), new RegExp(ESCAPE_TEXT_MARKER), 'its script ran');
      assert.equal(probeConnections, 0, 'a connection reached the loopback listener the page named');
      assert.ok(!log.some((r) => r.host === '127.0.0.1' || r.host === 'localhost'), 'a request for the loopback host reached the test web');

      // 3. the endless page: stored at the render timeout, with the reason
      const [endless] = (await db.run(`SELECT p.rendered, p.text_full, f.outcome, f.reason FROM pages p JOIN fetch_log f USING (fetch_id) WHERE p.url_host_name = '${ENDLESS_HOST}' AND f.outcome = 'fetched'`)).rows;
      assert.equal(endless![0], true);
      assert.match(String(endless![1]), new RegExp(ENDLESS_TEXT_MARKER));
      assert.match(String(endless![3]), new RegExp(`^stored; rendered \\(--render http://\\*\\.render\\.test/\\*\\): stopped at the render timeout \\(${RENDER_TIMEOUT_MS} ms\\) before the page settled`));

      // 5. the DOM is archived beside the response
      const captures = (await db.run(`SELECT subset, warc_type, count(*) FROM captures WHERE url_host_name LIKE '%.render.test' AND subset = 'rendered' GROUP BY 1, 2`)).rows;
      assert.deepEqual(captures, [['rendered', 'conversion', Object.keys(APP_PAGES).length + 2]]);
      const scripts = (await db.run(`SELECT count(*) FROM captures WHERE url = 'http://${APP_HOST}/static/app.js' AND warc_type = 'response'`)).rows;
      assert.deepEqual(scripts, [[1]], 'the shared script is archived once');
    } finally {
      await db.close();
    }
    const dom = await runCli(['get', `http://${APP_HOST}/p/3`, '--rendered', '--payload', '--out', out]);
    assert.equal(dom.code, 0, dom.stderr);
    assert.match(dom.stdout, new RegExp(appTextMarker('/p/3')), 'crawl get --rendered prints the DOM');

    // 4. politeness, as the server saw it
    const renderLog = log.filter((r) => r.host.endsWith('.render.test'));
    const audit = auditRequestLog(renderLog, { token: TOKEN, minDelayMs: MIN_DELAY_MS, perIpCap: 4 });
    assert.deepEqual(
      [...audit.disallowedFetches, ...audit.robotsUnavailableFetches, ...audit.overlaps, ...audit.shortGaps, ...audit.retryAfterViolations],
      [],
      'the render traffic broke a politeness rule',
    );
    console.log(`render traffic: ${audit.counts.requests} requests to ${audit.counts.hosts} hosts; tightest gap margin ${Math.round(audit.tightestMarginMs)} ms`);
    const appLog = renderLog.filter((r) => r.host === APP_HOST);
    for (const blocked of APP_BLOCKED_PATHS) assert.ok(!appLog.some((r) => r.path === blocked), `${blocked} was asked for`);
    for (const p of Object.keys(APP_PAGES)) assert.equal(appLog.filter((r) => r.path === p).length, 1, `the document ${p} fetched once`);
    assert.equal(appLog.filter((r) => r.path === '/static/app.js').length, 1, 'the script fetched once for all pages');
    assert.ok(renderLog.every((r) => r.userAgent === USER_AGENT), "every request carried the crawler's user agent");
    assert.ok(renderLog.filter((r) => r.host === ENDLESS_HOST && r.path.startsWith('/api/poll')).length > 3, 'the endless page polled');
  });
});
