import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { runCli } from '../support/crawl-cli.js';

const oneLine = (s: string) => s.trim().split('\n').filter((l) => !l.startsWith('{')).length === 1;

// each case is a process of its own that exits at once: four at a time, not one after another
// (one by one, the 13 start-ups took 41 s of a loaded e2e run)
describe('crawl CLI: bad input gets one line naming the problem and exit code 2', { concurrency: 4 }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: Array<[string, string[], RegExp]> = [
    ['an invalid seed', ['run', '--seed', 'ftp://example.com/x'], /invalid --seed "ftp:\/\/example.com\/x": unsupported_scheme/],
    ['a seed that is not a URL', ['run', '--seed', 'not a url'], /invalid --seed "not a url"/],
    ['an unreadable seeds file', ['run', '--seeds-file', '/nonexistent/seeds.txt'], /cannot read seeds file \/nonexistent\/seeds.txt: ENOENT/],
    ['a bad number', ['run', '--seed', 'http://a.test/', '--max-depth', 'deep'], /--max-depth must be a whole number, got "deep"/],
    ['a number out of range', ['run', '--seed', 'http://a.test/', '--partitions', '0'], /--partitions must be between 1 and 1024/],
    ['a page cap too small', ['run', '--seed', 'http://a.test/', '--max-page-bytes', '100'], /--max-page-bytes must be between 1024 and/],
    ['a bad thread count', ['run', '--seed', 'http://a.test/', '--extract-threads', 'all'], /--extract-threads must be a whole number, got "all"/],
    ['a bad --resolve', ['run', '--seed', 'http://a.test/', '--resolve', 'nonsense'], /--resolve/],
    ['an unknown option', ['run', '--sed', 'http://a.test/'], /unknown option '--sed'/],
    ['a scope mode it does not know', ['run', '--seed', 'http://a.test/', '--scope', 'web'], /--scope <mode>' argument 'web' is invalid. Allowed choices are domain, host, prefix, open/],
    ['an unknown stage', ['worker', '--stage', 'fetcher'], /unknown stage "fetcher": one of normalize, /],
    ['a bad sql format', ['sql', '--format', 'xml', 'SELECT 1'], /--format must be one of table, csv, json/],
    ['no seeds for a new crawl', ['run'], /no seeds/],
  ];
  for (const [what, args, message] of cases) {
    it(what, async () => {
      const out = path.join(dir, what.replaceAll(' ', '-'));
      const r = await runCli([...args, ...(args[0] === 'run' || args[0] === 'sql' ? ['--out', out] : [])], { NATS_URL: '' }, 60_000);
      assert.equal(r.code, 2, `exit code for ${what}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.ok(oneLine(r.stderr), `one line, got: ${r.stderr}`);
    });
  }
});

describe('crawl CLI: a seeds file with invalid lines, then crawl sql in every format', () => {
  let web: TestWeb;
  let dir: string;
  before(async () => {
    web = await startTestWeb({ hosts: 3, pagesPerHost: 20, seed: 5 });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-cli-seeds-'));
  });
  after(async () => {
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports the invalid lines, crawls the valid seeds, and answers SQL as table, csv and json', async () => {
    const seeds = path.join(dir, 'seeds.txt');
    writeFileSync(seeds, ['# demo seeds', 'http://h00.site.test/', 'mailto:someone@example.com', '', 'http://h01.site.test/', 'http://bad host/'].join('\n'));
    const out = path.join(dir, 'out');
    // extract on the main thread here (every other crawl uses the default worker threads)
    const args = ['run', '--seeds-file', seeds, '--out', out, '--max-depth', '0', '--min-delay-ms', '0', '--extract-threads', '0'];
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    const r = await runCli([...args, '--until-idle'], { NATS_URL: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /seeds file line 3: skipped "mailto:someone@example.com": unsupported_scheme/);
    assert.match(r.stderr, /seeds file line 6: skipped "http:\/\/bad host\/"/);

    const sql = 'SELECT url, fetch_status FROM pages ORDER BY url';
    // four readers of the same output at once (each `crawl sql` opens it read-only)
    const [table, csv, json, bad] = await Promise.all([
      runCli(['sql', '--out', out, sql]),
      runCli(['sql', '--out', out, '--format', 'csv', sql]),
      runCli(['sql', '--out', out, '--format', 'json', sql]),
      runCli(['sql', '--out', out, 'SELECT nope FROM pages']),
    ]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /http:\/\/h00\.site\.test\/ +\| +200/);
    assert.match(table.stdout, /\(2 rows\)/);
    assert.deepEqual(csv.stdout.trim().split(/\r?\n/), ['url,fetch_status', 'http://h00.site.test/,200', 'http://h01.site.test/,200']);
    assert.deepEqual(JSON.parse(json.stdout), [
      { url: 'http://h00.site.test/', fetch_status: 200 },
      { url: 'http://h01.site.test/', fetch_status: 200 },
    ]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /sql error: .*nope/);
  });
});
