/**
 * `crawl report` as a reader meets it: a small crawl of the test web, the report written next
 * to the output, and the file opened in Debian's Chromium from a file:// URL with every
 * request watched. The page asks for nothing (any request but the file itself fails the test),
 * logs no error, draws every chart, reads well to axe-core (no serious or critical violation,
 * with its tables open too, in light and dark colours) and can be walked with the keyboard.
 * A screenshot goes to a temp dir, and to docs/images/report.png with UPDATE_SCREENSHOTS=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { chromiumPath } from '../../pipeline/adapters/browser/chromium-launch.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E, queryOutput, runShortCrawl } from '../support/e2e-web.js';

/** the repository (tests run from dist/test/browser) */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const CHARTS = ['pages-per-second', 'outcomes', 'error-reasons', 'error-hosts', 'domains-covered', 'bytes-stored', 'status-classes'];

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

describe('browser: crawl report opens from disk in Chromium, draws every chart and asks the network for nothing', () => {
  let web: TestWeb;
  let dir: string;
  let out: string;
  let reportUrl: string;
  let browser: Browser;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-report-browser-'));
    out = path.join(dir, 'out');
    web = await startTestWeb({ hosts: 2, pagesPerHost: 12, seed: E2E.seed });
    await runShortCrawl(web, out, 'report', ['--max-depth', '3', '--no-compact']);
    const report = await runCli(['report', '--out', out]);
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, /^wrote .*report\.html \([\d.]+ KiB\): \d+ pages, 2 hosts, 1 registrable domain, \d+ errors in \d+/);
    reportUrl = pathToFileURL(path.join(out, 'report.html')).href;
    browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  });
  after(async () => {
    await browser?.close();
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The report in a fresh page; every request but the file's own is recorded and refused. */
  async function openReport(): Promise<{ page: Page; requests: string[]; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    const requests: string[] = [];
    const errors: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e.message));
    await page.route('**/*', (route) => (route.request().url() === reportUrl ? route.continue() : route.abort()));
    const res = await page.goto(reportUrl);
    assert.ok(res === null || res.ok(), 'the file opens');
    return { page, requests, errors };
  }

  it('requests nothing but itself, logs no error, and draws every chart with the numbers SQL gives', async () => {
    const { page, requests, errors } = await openReport();
    const [[pages]] = (await queryOutput(out, 'SELECT count(*) FROM pages')) as [[number]];
    const [[errorsSql]] = (await queryOutput(out, 'SELECT sum(errors) FROM hosts')) as [[number]];
    assert.ok(Number(errorsSql) > 0, 'the test web gives the crawl some 404s to chart');
    const drawn = await page.evaluate((ids) => {
      return ids.map((id) => {
        const svg = document.querySelector(`#${id} svg.chart`);
        if (!svg) return { id, marks: 0 };
        // a mark is a bar with an area, or a line with a length
        const rects = [...svg.querySelectorAll('rect.bar')].filter((r) => (r as SVGRectElement).getBBox().width > 0 && (r as SVGRectElement).getBBox().height > 0);
        const lines = [...svg.querySelectorAll('path.line')].filter((p) => (p as SVGPathElement).getTotalLength() > 0);
        return { id, marks: rects.length + lines.length, box: svg.getBoundingClientRect().height };
      });
    }, CHARTS);
    for (const d of drawn) assert.ok(d.marks > 0 && (d.box ?? 0) > 20, `${d.id} is drawn: ${JSON.stringify(d)}`);
    // the status classes other than 2xx are told apart by a pattern, not by colour alone
    const fills = await page.$$eval('#status-classes rect.bar', (rs) => rs.map((r) => [r.getAttribute('class') ?? '', getComputedStyle(r).fill]));
    const patterned = fills.filter(([cls]) => !cls.includes('bar-solid'));
    assert.ok(patterned.length > 0, JSON.stringify(fills));
    for (const [cls, fill] of patterned) assert.match(fill!, /^url\(/, `${cls} is filled with its pattern`);
    const headline = await page.locator('.headline').innerText();
    assert.match(headline, new RegExp(`Pages stored\\s+${Number(pages).toLocaleString('en-US')}\\b`));
    assert.match(headline, new RegExp(`Errors\\s+${Number(errorsSql)}\\b`));
    assert.deepEqual(requests, [reportUrl], 'no request but the file itself');
    assert.deepEqual(errors, []);

    const shots = mkdtempSync(path.join(os.tmpdir(), 'crawl-report-shot-'));
    const shot = path.join(shots, 'report.png');
    await page.screenshot({ path: shot, fullPage: true });
    if (process.env.UPDATE_SCREENSHOTS === '1') copyFileSync(shot, path.join(ROOT, 'docs', 'images', 'report.png'));
    rmSync(shots, { recursive: true, force: true });
    await page.close();
  });

  it('axe-core finds no serious or critical violation, with the tables closed and open, in light and dark colours', async () => {
    const { page, requests } = await openReport();
    // evaluated through the browser's protocol, which the page's policy (no script) does not govern
    await page.evaluate(AXE_SOURCE);
    const audit = async () =>
      ((await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)')) as AxeViolation[]).filter(
        (v) => v.impact === 'serious' || v.impact === 'critical',
      );
    const closed = await audit();
    assert.deepEqual(closed.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), []);
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => (d.open = true)));
    const open = await audit();
    assert.deepEqual(open.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), []);
    // and in the reader's dark colours
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await audit();
    assert.deepEqual(dark.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), []);
    assert.deepEqual(requests, [reportUrl]);
    await page.close();
  });

  it('the keyboard reaches every chart by its link and opens its table', async () => {
    const { page } = await openReport();
    const stops: string[] = [];
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      stops.push(await page.evaluate(() => {
        const a = document.activeElement!;
        return a.tagName === 'A' ? `a ${a.getAttribute('href')}` : a.tagName === 'SUMMARY' ? `summary ${a.closest('section')!.id}` : a.tagName.toLowerCase();
      }));
    }
    assert.equal(stops[0], 'a #main', 'the first stop skips to the report');
    for (const id of CHARTS) {
      assert.ok(stops.includes(`a #${id}`), `a link to ${id}: ${stops.join(', ')}`);
      assert.ok(stops.includes(`summary ${id}`), `the table of ${id}: ${stops.join(', ')}`);
    }
    // Enter on a chart's link goes to it; Enter on its summary opens the table
    await page.focus('nav a[href="#error-reasons"]');
    await page.keyboard.press('Enter');
    assert.equal(new URL(page.url()).hash, '#error-reasons');
    await page.focus('#error-reasons summary');
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('#error-reasons details').getAttribute('open'), '');
    assert.ok(await page.locator('#error-reasons table').isVisible());
    await page.close();
  });
});
