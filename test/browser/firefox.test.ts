/**
 * The crawl report and the console in Debian's Firefox (firefox-esr), driven by puppeteer-core
 * over WebDriver BiDi (playwright-core drives only Playwright's own patched Firefox build). A
 * small check that what a Firefox user opens works there; the Chromium tests
 * (crawl-report.test.ts, console.test.ts) stay the thorough ones. One short crawl of the test
 * web, then: the report from a file:// URL draws every chart, asks for nothing but itself and
 * logs no error; `crawl serve` on the same output shows the jobs screen, a job created in its
 * form appears in the list, and the query screen runs `SELECT count(*) FROM pages` and shows the
 * number DuckDB gives. Skipped, saying why, when firefox-esr is not installed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { runCli, serveApiUrl, startCli, stopCli, type CliRun } from '../support/crawl-cli.js';
import { E2E, queryOutput, runShortCrawl } from '../support/e2e-web.js';

const FIREFOX = process.env.FIREFOX_PATH || '/usr/bin/firefox-esr';
const MISSING = existsSync(FIREFOX) ? false : `Firefox is not at ${FIREFOX}: install Debian's firefox-esr (scripts/setup.sh does) or set FIREFOX_PATH`;
const CHARTS = ['pages-per-second', 'outcomes', 'error-reasons', 'error-hosts', 'domains-covered', 'bytes-stored', 'status-classes'];

describe('browser: the crawl report and the console in Firefox', { skip: MISSING }, () => {
  let web: TestWeb;
  let dir: string;
  let out: string;
  let browser: Browser;
  let serve: CliRun | undefined;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-firefox-'));
    out = path.join(dir, 'out');
    web = await startTestWeb({ hosts: 2, pagesPerHost: 8, seed: E2E.seed });
    await Promise.all([
      runShortCrawl(web, out, 'firefox', ['--max-depth', '3', '--no-compact']),
      // Firefox starts (some 4 s) while the crawl runs
      puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX, headless: true }).then((b) => (browser = b)),
    ]);
  });
  after(async () => {
    // SIGTERM, not SIGKILL: a killed `crawl serve` leaves its embedded nats-server running
    if (serve) await stopCli(serve);
    await browser?.close();
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A page whose console errors and uncaught exceptions are collected. */
  async function newPage(errors: string[]): Promise<Page> {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 900 });
    page.on('console', (m) => m.type() === 'error' && errors.push(`${page.url()}: ${m.text()}`));
    page.on('pageerror', (e) => errors.push(`${page.url()}: ${e instanceof Error ? e.message : String(e)}`));
    return page;
  }

  it('the report from a file:// URL draws every chart, requests nothing but itself, logs no error', async () => {
    const report = await runCli(['report', '--out', out]);
    assert.equal(report.code, 0, report.stderr);
    const reportUrl = pathToFileURL(path.join(out, 'report.html')).href;
    const errors: string[] = [];
    const requests: string[] = [];
    const page = await newPage(errors);
    // any request but the file itself is recorded and refused, so none leaves the machine.
    // data: URLs carry their content and go nowhere: Firefox's own list-marker font (for the
    // tables' <summary> triangles) is one, asked for by its built-in style sheet, not the report.
    await page.setRequestInterception(true);
    page.on('request', (r) => {
      const inline = r.url().startsWith('data:');
      if (!inline) requests.push(r.url());
      void (inline || r.url() === reportUrl ? r.continue() : r.abort());
    });
    await page.goto(reportUrl, { waitUntil: 'load' });
    const drawn = await page.evaluate((ids: string[]) => {
      return ids.map((id) => {
        const svg = document.querySelector(`#${id} svg.chart`);
        if (!svg) return { id, marks: 0, box: 0 };
        // a mark is a bar with an area, or a line with a length, as Firefox lays them out
        const rects = [...svg.querySelectorAll('rect.bar')].filter((r) => (r as SVGRectElement).getBBox().width > 0 && (r as SVGRectElement).getBBox().height > 0);
        const lines = [...svg.querySelectorAll('path.line')].filter((p) => (p as SVGPathElement).getTotalLength() > 0);
        return { id, marks: rects.length + lines.length, box: svg.getBoundingClientRect().height };
      });
    }, CHARTS);
    for (const d of drawn) assert.ok(d.marks > 0 && d.box > 20, `${d.id} is drawn: ${JSON.stringify(d)}`);
    const [[pages]] = (await queryOutput(out, 'SELECT count(*) FROM pages')) as [[number]];
    const headline = await page.$eval('.headline', (e) => (e as HTMLElement).innerText);
    assert.match(headline, new RegExp(`Pages stored\\s+${Number(pages).toLocaleString('en-US')}\\b`));
    // (Firefox reports no request for the file:// document itself)
    assert.deepEqual(requests.filter((u) => u !== reportUrl), [], 'no request but the file itself');
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('the console: the jobs screen, a job created in its form, a query and its result', async () => {
    // on the finished crawl's output with no stages: the job stays queued and the count stays put
    serve = startCli(['serve', '--out', out, '--port', '0', '--stages', 'none', '--user-agent', E2E.userAgent], { NATS_URL: '' });
    const base = await serveApiUrl(serve);
    const errors: string[] = [];
    const page = await newPage(errors);
    await page.goto(`${base}/`);
    await page.waitForSelector('::-p-aria(New job[role="heading"])');
    await page.waitForSelector('::-p-text(No jobs yet)');

    await page.type('#f-name', 'firefox job');
    await page.type('#f-seeds', `http://${web.model.siteHostNames[0]}/`);
    await page.click('::-p-aria(Create job[role="button"])');
    await page.waitForFunction(() => /^#\/jobs\/job-/.test(location.hash));
    const jobId = /#\/jobs\/(job-[a-z0-9]+)/.exec(page.url())![1]!;
    await page.click('::-p-aria(Jobs[role="link"])');
    const row = await page.waitForSelector(`#jobs-list tr[data-job="${jobId}"]`);
    assert.match(await row!.evaluate((tr) => (tr as HTMLElement).innerText), /firefox job/);

    await page.click('::-p-aria(Query[role="link"])');
    const sql = await page.waitForSelector('#sql');
    await sql!.evaluate((t) => ((t as HTMLTextAreaElement).value = ''));
    await sql!.type('SELECT count(*) AS n FROM pages');
    await page.click('::-p-aria(Run[role="button"])');
    await page.waitForSelector('::-p-text(Rows 1–1)');
    const [[pages]] = (await queryOutput(out, 'SELECT count(*) FROM pages')) as [[number]];
    assert.ok(Number(pages) > 0);
    const cells = await page.$$eval('#query-results tbody td', (tds) => tds.map((td) => (td as HTMLElement).innerText.trim()));
    assert.deepEqual(cells, [String(pages)]);
    assert.deepEqual(errors, [], 'nothing logged as an error in the browser');
    await page.close();
  });
});
