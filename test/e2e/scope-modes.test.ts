/**
 * `--scope` through the CLI over the test web's scope hosts (testweb/scope-hosts.ts), from one
 * seed that redirects to another registrable domain (moved-seed.test -> www.scope-home.test):
 * the seed's scope goes with it; `domain` keeps to scope-home.test (both its hosts), `host` to
 * www.scope-home.test, and `open` follows the link to www.scope-away.test. What is left out
 * is a filtered row with its reason.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SCOPE_SEED_URL, startTestWeb, type TestWeb } from '../../testweb/index.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E, queryOutput, storedPages } from '../support/e2e-web.js';

const HOME = 'www.scope-home.test';
const BLOG = 'blog.scope-home.test';
const AWAY = 'www.scope-away.test';

describe('crawl run --scope: a seed that moved takes its scope along; open crosses registrable domains', () => {
  let web: TestWeb;
  let dir: string;
  before(async () => {
    web = await startTestWeb({ hosts: 1, pagesPerHost: 2, scopeHosts: true });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-scope-'));
  });
  after(async () => {
    await web?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function crawl(mode: string | null): Promise<{ stored: string[]; filtered: Map<string, string> }> {
    const out = path.join(dir, mode ?? 'default');
    const args = ['run', '--out', out, '--until-idle', '--seed', SCOPE_SEED_URL, '--min-delay-ms', '0', '--adaptive-delay-factor', '0', '--no-sitemaps', '--user-agent', E2E.userAgent];
    if (mode) args.push('--scope', mode);
    for (const r of web.resolveRules) args.push('--resolve', r);
    const run = await runCli(args, {}, 120_000);
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const rows = await queryOutput(out, "SELECT url, reason FROM fetch_log WHERE outcome = 'filtered'");
    return { stored: (await storedPages(out)).urls, filtered: new Map(rows.map((r) => [String(r[0]), String(r[1]).split(':')[0]!])) };
  }

  it('domain (the default): the seed\'s target domain, both its hosts; the other domain filtered out_of_scope', async () => {
    const { stored, filtered } = await crawl(null);
    assert.deepEqual(stored, web.scopeHosts!.pageUrls([HOME, BLOG]));
    assert.equal(filtered.get(`http://${AWAY}/`), 'out_of_scope');
  });

  it('host: the seed\'s target host only', async () => {
    const { stored, filtered } = await crawl('host');
    assert.deepEqual(stored, web.scopeHosts!.pageUrls([HOME]));
    assert.equal(filtered.get(`http://${BLOG}/`), 'out_of_scope');
    assert.equal(filtered.get(`http://${AWAY}/`), 'out_of_scope');
  });

  it('open: follows the link to another registrable domain', async () => {
    const { stored, filtered } = await crawl('open');
    assert.deepEqual(stored, web.scopeHosts!.pageUrls());
    assert.deepEqual([...filtered.values()].filter((r) => r === 'out_of_scope'), []);
  });
});
