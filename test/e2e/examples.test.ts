import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { installedPackage } from '../support/user-package.js';
import { EXAMPLE_PRODUCTS, EXAMPLE_SHOP_HOST, EXAMPLE_TOPICS_HOST, SHOP_OTHER_PAGES, startTestWeb, TOPIC_PAGES, type TestWeb } from '../../testweb/index.js';

/** `node ARGS...` in `cwd`, as the example's README says to run it. */
function node(cwd: string, args: string[], timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin`, LOG_LEVEL: 'warn', http_proxy: '', HTTP_PROXY: '', https_proxy: '', HTTPS_PROXY: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the worked examples, each its own package importing the crawler by name, against the test web', () => {
  let web: TestWeb;
  const dirs: string[] = [];
  before(async () => {
    web = await startTestWeb({ hosts: 1, pagesPerHost: 2, seed: 1, examples: true });
  });
  after(async () => {
    await web.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const resolveArgs = () => web.resolveRules.filter((r) => r.startsWith('*.examples.test')).flatMap((r) => ['--resolve', r]);
  const requestedPaths = (host: string) => web.requestLog().filter((r) => r.host === host).map((r) => r.path.split('?')[0]!);

  it('product-extractor: its tests pass, and its crawl finds every product in JSON-LD and microdata', async () => {
    const dir = installedPackage('examples/product-extractor', ['parse5']);
    dirs.push(dir);
    const unit = await node(dir, ['--test']);
    assert.equal(unit.code, 0, unit.stdout + unit.stderr);
    const run = await node(dir, ['crawl.js', '--seed', `http://${EXAMPLE_SHOP_HOST}/`, '--out', path.join(dir, 'out'), '--min-delay-ms', '50', ...resolveArgs()]);
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const rows = JSON.parse(run.stdout) as Array<{ name: string; price: number; currency: string; availability: string; source_url: string }>;
    const expected = EXAMPLE_PRODUCTS.map((p) => ({ name: p.name, price: p.price, currency: p.currency, availability: p.availability, source_url: `http://${EXAMPLE_SHOP_HOST}${p.path}` }));
    assert.deepEqual(rows, [...expected].sort((a, b) => a.name.localeCompare(b.name)));
    for (const p of SHOP_OTHER_PAGES) assert.ok(requestedPaths(EXAMPLE_SHOP_HOST).includes(p), `${p} was crawled and made no row`);
  });

  it('focused-crawl: only the links on the topic are crawled, up to the budget', async () => {
    const dir = installedPackage('examples/focused-crawl');
    dirs.push(dir);
    const unit = await node(dir, ['--test']);
    assert.equal(unit.code, 0, unit.stdout + unit.stderr);
    const run = await node(dir, ['crawl.js', '--seed', `http://${EXAMPLE_TOPICS_HOST}/`, '--topic', 'astronomy', '--budget', '3', '--out', path.join(dir, 'out'), '--min-delay-ms', '50', ...resolveArgs()]);
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const pages = (JSON.parse(run.stdout) as Array<{ url: string }>).map((p) => new URL(p.url).pathname);
    const onTopic = TOPIC_PAGES.filter((t) => t.astronomy).map((t) => t.path);
    const offTopic = TOPIC_PAGES.filter((t) => !t.astronomy).map((t) => t.path);
    assert.equal(pages.length, 4, `the seed and three pages: ${pages.join(' ')}`);
    assert.ok(pages.includes('/'));
    assert.ok(pages.filter((p) => p !== '/').every((p) => onTopic.includes(p)), `only astronomy pages: ${pages.join(' ')}`);
    // the page matching by its anchor text only is among the best-scored links of the seed
    assert.ok(pages.includes('/guides/night-sky.html'));
    const requested = requestedPaths(EXAMPLE_TOPICS_HOST);
    assert.deepEqual(requested.filter((p) => offTopic.includes(p)), [], 'no off-topic page was requested');
    assert.equal(requested.filter((p) => onTopic.includes(p)).length, 3, 'the budget held');
  });
});
