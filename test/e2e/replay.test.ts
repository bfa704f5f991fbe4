/**
 * Replay after a bug fix (the acceptance test of issue 5, item 6): a crawl with a
 * deliberately wrong extract setting (titles off), then `crawl replay --from extract` with
 * it fixed. The newest version has titles, the old one is still there, and the test web
 * sees no request during the replay.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E, runShortCrawl } from '../support/e2e-web.js';

describe('crawl replay --from extract', () => {
  let web: TestWeb;
  let out: string;
  before(async () => {
    web = await startTestWeb({ hosts: 3, pagesPerHost: 10, seed: E2E.seed });
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-replay-'));
  });
  after(async () => {
    await web?.close();
    rmSync(out, { recursive: true, force: true });
  });

  async function query(sql: string, version?: number): Promise<unknown[][]> {
    const db = await openOutputDatabase(out, { version });
    try {
      return (await db.run(sql)).rows;
    } finally {
      await db.close();
    }
  }
  const one = async (sql: string, version?: number) => Number((await query(sql, version))[0]![0]);

  it('rewrites the pages into version 1 with titles, keeps version 0, and fetches nothing', async () => {
    await runShortCrawl(web, out, 'c1', ['--no-titles']);

    const pages = await one('SELECT count(*) FROM pages');
    assert.ok(pages >= 15, `the crawl stored pages (${pages})`);
    assert.equal(await one(`SELECT count(*) FROM pages WHERE title <> ''`), 0, 'the bug: no titles');
    const linksBefore = await one('SELECT count(*) FROM links');
    const dupsBefore = await query('SELECT url, near_duplicate_of FROM pages WHERE near_duplicate_of IS NOT NULL ORDER BY url');

    web.clearLog();
    const replay = await runCli(['replay', '--from', 'extract', '--out', out], {}, 120_000);
    assert.equal(replay.code, 0, replay.stderr.slice(-2000));
    const replayed = /replay from extract: (\d+) messages .* -> version 1 in /.exec(replay.stdout);
    assert.ok(replayed && Number(replayed[1]) >= pages, replay.stdout);
    console.log(replay.stdout.trim());
    assert.deepEqual(web.requestLog(), [], 'no request reached the test web during the replay');

    // the newest version: every page, now with its title
    assert.equal(await one('SELECT count(*) FROM pages'), pages);
    assert.equal(await one('SELECT count(*) FROM pages WHERE version = 1'), pages);
    assert.equal(await one(`SELECT count(*) FROM pages WHERE title = '' AND NOT noindex`), 0, 'every page has a title');
    assert.equal(await one('SELECT count(*) FROM links'), linksBefore, 'the same links, once');
    assert.deepEqual(await query('SELECT url, near_duplicate_of FROM pages WHERE near_duplicate_of IS NOT NULL ORDER BY url'), dupsBefore, 'the same near-duplicate verdicts');
    assert.equal(await one('SELECT count(*) FROM pages WHERE near_duplicate_of = url'), 0, 'no page is a duplicate of itself');

    // the old version is still there: in pages_all, and as the whole output with --version 0
    assert.equal(await one(`SELECT count(*) FROM pages_all WHERE version = 0 AND title = ''`), pages);
    assert.equal(await one(`SELECT count(*) FROM pages WHERE title <> ''`, 0), 0);
    const cli = await runCli(['sql', '--out', out, '--version', '0', '--format', 'csv', "SELECT count(*) AS n FROM pages WHERE title = ''"]);
    assert.equal(cli.stdout.trim().split(/\r?\n/)[1], String(pages), cli.stderr);

    // a second replay (from persist this time) is version 2
    const again = await runCli(['replay', '--from', 'persist', '--out', out], {}, 120_000);
    assert.equal(again.code, 0, again.stderr.slice(-2000));
    assert.match(again.stdout, /-> version 2 in /);
    assert.equal(await one('SELECT count(*) FROM pages WHERE version = 2'), pages);
    assert.deepEqual(web.requestLog(), []);
  });
});
