/**
 * The console of `crawl serve`, as a person uses it in Debian's Chromium: against a real
 * service crawling the test web, create a job in the form (a bad seed first: the API's error
 * shows beside the field), pause and resume it, see a host of it waiting with the reason and
 * until when, watch it reach `done`, open one of its pages as archived, run a query, page
 * through it, see DuckDB's error, download the CSV. With a token, the console asks for it and
 * nothing is answered without it. Every screen passes axe-core's check with no serious or
 * critical violation, and the browser logs no error. Screenshots of each screen go to a temp
 * directory (and to docs/images/console-*.png with UPDATE_SCREENSHOTS=1).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { chromiumPath } from '../../pipeline/adapters/browser/chromium-launch.js';
import { serveApiUrl, startCli, stopCli, type CliRun } from '../support/crawl-cli.js';
import { E2E } from '../support/e2e-web.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const AXE_JS = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TOKEN = 'console-tok-4f0b9e2d7a1c6e83';
/** a once job is done once nothing of it is in flight (checked every 5 s); the crawl itself takes some 10 s */
const DONE_WITHIN_MS = 60_000;

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

describe('browser: the crawl console', () => {
  let web: TestWeb;
  let dir: string;
  let shotsDir: string;
  let browser: Browser;
  const serves: CliRun[] = [];
  /** what the browser logged as errors, on every page of the test */
  const browserErrors: string[] = [];

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-console-'));
    shotsDir = path.join(dir, 'screenshots');
    mkdirSync(shotsDir);
    // site hosts 0..2: host 2's robots.txt asks for a 1 s Crawl-delay, so it waits between requests
    web = await startTestWeb({ hosts: 3, pagesPerHost: 10, seed: E2E.seed });
    browser = await chromium.launch({ executablePath: chromiumPath() });
  });
  after(async () => {
    // SIGTERM, not SIGKILL: a killed `crawl serve` leaves its embedded nats-server running
    await Promise.all(serves.map((s) => stopCli(s)));
    await browser?.close();
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function serve(out: string, env: NodeJS.ProcessEnv = {}, extra: string[] = []): CliRun {
    const args = ['serve', '--out', out, '--port', '0', '--min-delay-ms', String(E2E.minDelayMs), '--user-agent', E2E.userAgent, ...extra];
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    const run = startCli(args, { NATS_URL: '', ...env });
    serves.push(run);
    return run;
  }

  async function newPage(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    page.on('console', (m) => {
      if (m.type() === 'error') browserErrors.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => browserErrors.push(`${page.url()}: ${e.message}`));
    return page;
  }

  /** axe-core run in the page (evaluated, so the console's Content-Security-Policy need not admit it); serious and critical violations fail. */
  async function checkAccessibility(page: Page, screen: string): Promise<void> {
    await page.evaluate(AXE_JS);
    const violations = await page.evaluate(async () => {
      const w = window as unknown as { axe: { run(ctx: unknown, o: unknown): Promise<{ violations: Violation[] }> } };
      return (await w.axe.run(document, { resultTypes: ['violations'] })).violations;
    });
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(
      bad.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => String(n.target)).join(', ')})`),
      [],
      `axe-core on the ${screen} screen`,
    );
  }

  /** `tall`: down to 1,500 pixels of the page, for the screens whose tables run long */
  async function screenshot(page: Page, name: string, tall = false): Promise<void> {
    const file = path.join(shotsDir, `console-${name}.png`);
    await page.screenshot({ path: file, ...(tall ? { fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 1500 } } : {}) });
    if (process.env.UPDATE_SCREENSHOTS === '1') copyFileSync(file, path.join(REPO, 'docs', 'images', `console-${name}.png`));
  }

  /** what the service said when the job's page did not show what it should: the job, its activity and hosts as the API gives them, and serve's log */
  let failureContext: (() => Promise<string>) | null = null;
  const explained = (body: () => Promise<void>) => async () => {
    try {
      await body();
    } catch (err) {
      if (failureContext) (err as Error).message += `\n${await failureContext()}`;
      throw err;
    }
  };

  it('creates a job in the form, shows it live to done, opens an archived page, runs and downloads a query', explained(async () => {
    const run = serve(path.join(dir, 'out'));
    const base = await serveApiUrl(run);
    // no token: only requests addressed to this machine are answered (a rebound name of another site gets nothing)
    const rebound = await new Promise<number>((resolve, reject) =>
      get(`${base}/api/v1/jobs`, { headers: { host: 'rebound.example:80' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject),
    );
    assert.equal(rebound, 403);
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'New job' }).waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content', 'the first Tab reaches the skip link');

    // a seed the crawl cannot take: the API's reason beside the seeds field, which gets the focus
    const seeds = page.getByLabel('Seeds');
    await seeds.fill(`http://${web.model.siteHostNames[0]}/\nftp://files.site.test/`);
    await page.getByRole('button', { name: 'Create job' }).click();
    const seedError = page.locator('[data-field="seeds"] .field-error');
    await seedError.waitFor();
    assert.match(await seedError.innerText(), /seed 2 \(ftp:\/\/files\.site\.test\/\): .*scheme "ftp" is not http or https/);
    assert.equal(await seeds.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'f-seeds', 'the field at fault has the focus');
    await screenshot(page, 'new-job-error');
    await checkAccessibility(page, 'jobs (field error)');

    await page.getByLabel('Name').fill('console demo');
    await seeds.fill(web.model.siteHostNames.map((h) => `http://${h}/`).join('\n'));
    await page.getByLabel('Maximum depth').fill('3');
    await page.getByRole('button', { name: 'Create job' }).click();
    await page.waitForURL(/#\/jobs\/job-/);
    const jobId = /#\/jobs\/(job-[a-z0-9]+)/.exec(page.url())![1]!;
    const jobState = async () => ((await (await fetch(`${base}/api/v1/jobs/${jobId}`)).json()) as { state: string }).state;
    failureContext = async () => {
      const answers = await Promise.all(
        [`/api/v1/jobs/${jobId}`, `/api/v1/jobs/${jobId}/activity`, `/api/v1/crawl/status?job=${jobId}`].map(async (p) => `${p}: ${await (await fetch(`${base}${p}`, { signal: AbortSignal.timeout(10_000) })).text()}`.slice(0, 3000)),
      ).catch((e: Error) => [`the API did not answer: ${e.message}`]);
      const shown = await page.locator('#poll-status').innerText({ timeout: 2000 }).catch((e: Error) => e.message);
      return [`the page's refresh line: ${shown}`, ...answers, `crawl serve's stderr (tail): ${run.stderrSoFar().slice(-6000)}`].join('\n');
    };

    // pause and resume on the job's page: the badge and the API agree
    // from the keyboard: the buttons take Enter
    await page.getByRole('button', { name: 'Pause console demo' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('h1 .state-paused').waitFor();
    assert.equal(await jobState(), 'paused');
    await page.getByRole('button', { name: 'Resume console demo' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('h1 .state-active').waitFor();
    assert.equal(await jobState(), 'active');

    // a host of the job waiting, with why and until when (host 2 keeps a 1 s Crawl-delay)
    const waiting = page.locator('#job-hosts tbody tr', { hasText: 'crawl delay' }).first();
    await waiting.waitFor({ timeout: 45_000 });
    const cells = await waiting.locator('td').allInnerTexts();
    assert.match(cells[0]!, /\.site\.test$/, 'the host');
    assert.match(cells[3]!, /^\d\d:\d\d:\d\d UTC \(in \d+\.\d s\)$|^now$/, 'until when');
    await page.locator('#job-pages tbody tr').first().waitFor({ timeout: 45_000 });
    await screenshot(page, 'job-live', true);

    await page.locator('h1 .state-done').waitFor({ timeout: DONE_WITHIN_MS });
    assert.equal(await jobState(), 'done');
    await page.locator('#job-pages tbody tr').first().waitFor();
    await page.locator('#job-chart svg polyline').first().waitFor();
    const points = await page.locator('#job-chart svg.chart polyline').first().getAttribute('points');
    assert.ok((points ?? '').split(' ').length >= 2, `the chart has a line: ${points}`);
    assert.match((await page.locator('#job-outcomes').innerText()), /fetched\s+\d+/);
    assert.match(await page.locator('#job-lag').innerText(), /persist\s+0/, 'the queue depth per stage, empty once done');
    await screenshot(page, 'job-done', true);
    await checkAccessibility(page, 'job');

    // the newest page, as archived
    const firstPage = page.locator('#job-pages tbody tr').first().locator('a').first();
    const pageUrl = await firstPage.innerText();
    await firstPage.click();
    await page.locator('#record-warc pre').waitFor();
    const facts = await page.locator('#record-facts').innerText();
    assert.ok(facts.includes(pageUrl), facts);
    assert.match(facts, /WARC file\s+warc\/\S+\.warc\.gz/);
    assert.match(facts, /Offset\s+[\d,]+/);
    assert.match(await page.locator('#record-warc pre').innerText(), /WARC-Type: response/);
    assert.match(await page.locator('#record-http pre').innerText(), /^HTTP\/1\.1 200/);
    assert.match(await page.locator('#record-body pre').innerText(), /<html/i);
    await screenshot(page, 'record');
    await checkAccessibility(page, 'archived page');

    // a query: a page of rows, the next page, DuckDB's own error, the CSV of every row
    await page.getByRole('link', { name: 'Query' }).click();
    const sql = `SELECT url, outcome FROM fetch_log WHERE crawl_id = '${jobId}' ORDER BY url, outcome`;
    const total = (
      (await (await fetch(`${base}/api/v1/query`, { method: 'POST', body: JSON.stringify({ sql: `SELECT count(*) AS n FROM fetch_log WHERE crawl_id = '${jobId}'` }) })).json()) as {
        rows: number[][];
      }
    ).rows[0]![0]!;
    assert.ok(total > 25, `more rows than a page: ${total}`);
    await page.getByRole('textbox', { name: 'SQL', exact: true }).fill(sql);
    await page.getByLabel('Rows per page').selectOption('25');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByText('Rows 1–25 (more follow)').waitFor();
    assert.equal(await page.locator('#query-results tbody tr').count(), 25);
    await screenshot(page, 'query', true);
    await checkAccessibility(page, 'query');
    await page.getByRole('button', { name: 'Next page →' }).click();
    await page.getByText(/^Rows 26–/).waitFor();

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const file = path.join(dir, 'query.csv');
    await (await download).saveAs(file);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\r\n');
    assert.equal(lines[0], 'url,outcome');
    assert.equal(lines.length - 1, total, 'every row in the CSV');

    // the query box reads the output and nothing else: no writes, no other file, one statement at a time
    const refusal = async (statement: string) =>
      ((await (await fetch(`${base}/api/v1/query`, { method: 'POST', body: JSON.stringify({ sql: statement }) })).json()) as { error?: { reason: string } }).error?.reason;
    assert.match((await refusal(`COPY (SELECT 1) TO '${path.join(dir, 'out', 'x.csv')}'`))!, /the console only reads: COPY statements are for `crawl sql`/);
    assert.match((await refusal("SELECT * FROM read_text('/etc/hostname')"))!, /Permission Error: Cannot access file "\/etc\/hostname"/);
    assert.match((await refusal('SELECT 1; SELECT 2'))!, /one statement at a time/);

    await page.getByRole('textbox', { name: 'SQL', exact: true }).fill('SELECT nope FROM pages');
    await page.getByRole('button', { name: 'Run' }).click();
    const error = page.locator('#query-error .alert');
    await error.waitFor();
    assert.match(await error.innerText(), /^DuckDB: Binder Error: Referenced column "nope" not found/);
    await screenshot(page, 'query-error');

    // the crawl report, from the nav: the page `crawl report` writes, made from the output now
    await page.getByRole('link', { name: 'Report', exact: true }).click();
    await page.getByRole('heading', { name: 'Crawl report', level: 1 }).waitFor();
    assert.ok((await page.locator('svg[role="img"]').count()) >= 5, 'the report\'s charts are drawn');

    // Chromium logs each answer of 400 to the page's own requests (the bad seed, the bad column) as a failed load
    assert.deepEqual(browserErrors.filter((e) => !/status of 400 \(Bad Request\)/.test(e)), [], 'nothing logged as an error in the browser');
    await page.close();
  }));

  it('with a token, asks for it, and answers nothing without it', async () => {
    const run = serve(path.join(dir, 'out-token'), { CRAWL_API_TOKEN: TOKEN }, ['--stages', 'none']);
    const base = await serveApiUrl(run);
    for (const [method, p] of [['GET', '/'], ['GET', '/console/console.js'], ['GET', '/api/v1/jobs'], ['GET', '/api/v1/crawl/status'], ['POST', '/api/v1/query'], ['GET', '/api/v1/record?url=x']] as const) {
      const r = await fetch(`${base}${p}`, { method, ...(method === 'POST' ? { body: '{"sql":"SELECT 1"}' } : {}) });
      assert.equal(r.status, 401, `${method} ${p} without the token`);
      assert.doesNotMatch(await r.text(), /console\.js|crawl_console=/, `${method} ${p}: no console without the token`);
    }
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.getByLabel('API token').fill('not-the-token-0000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.match(await page.getByRole('alert').innerText(), /that is not the API token/);
    assert.ok(!page.url().includes('token'), 'the token is never in the URL');
    await page.getByLabel('API token').fill(TOKEN);
    await screenshot(page, 'sign-in');
    await checkAccessibility(page, 'sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'New job' }).waitFor();
    assert.equal(new URL(page.url()).search, '', 'the token is never in the URL');
    assert.ok(await page.getByRole('button', { name: 'Sign out' }).isVisible());
    // the page's own requests carry the session cookie; the same request without it is refused
    const withCookie = await page.evaluate(async () => (await fetch('/api/v1/jobs')).status);
    const without = await page.evaluate(async () => (await fetch('/api/v1/jobs', { credentials: 'omit' })).status);
    assert.deepEqual([withCookie, without], [200, 401]);
    const cookies = await page.context().cookies();
    assert.equal(cookies.length, 1);
    assert.ok(cookies[0]!.httpOnly && cookies[0]!.sameSite === 'Strict', 'an HttpOnly, SameSite=Strict cookie');
    assert.notEqual(cookies[0]!.value, TOKEN, 'the cookie is not the token');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    assert.deepEqual(browserErrors.filter((e) => !/status of (400 \(Bad Request\)|401 \(Unauthorized\))/.test(e)), [], 'nothing logged as an error but the refusals the test asked for');
    await page.close();
  });
});
