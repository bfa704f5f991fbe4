/**
 * Recrawl: a second crawl (a new --crawl-id) over the same output directory fetches every
 * URL again with the validators of the first fetch. Unchanged pages answer 304 and are
 * recorded as `not_modified`; pages changed in between are stored again.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { E2E, runShortCrawl } from '../support/e2e-web.js';

describe('recrawl with conditional GET', () => {
  let web: TestWeb;
  let out: string;
  before(async () => {
    web = await startTestWeb({ hosts: 3, pagesPerHost: 10, seed: E2E.seed });
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-recrawl-'));
  });
  after(async () => {
    await web?.close();
    rmSync(out, { recursive: true, force: true });
  });

  const crawl = (crawlId: string) => runShortCrawl(web, out, crawlId);

  async function query(sql: string): Promise<unknown[][]> {
    const db = await openOutputDatabase(out);
    try {
      return (await db.run(sql)).rows;
    } finally {
      await db.close();
    }
  }

  it('sends conditional headers, records not_modified for unchanged pages and stores changed ones again', async () => {
    await crawl('crawl-1');
    const firstPages = (await query(`SELECT url FROM pages WHERE crawl_id = 'crawl-1' ORDER BY url`)).map((r) => String(r[0]));
    assert.ok(firstPages.length >= 15, `the first crawl stored pages (${firstPages.length})`);

    const changed = firstPages.filter((u) => !u.includes('?')).slice(0, 4);
    web.touch(changed);
    web.clearLog();
    await crawl('crawl-2');

    const log = web.requestLog().filter((r) => r.path !== '/robots.txt');
    const notModifiedAnswers = log.filter((r) => r.status === 304).length;
    assert.ok(notModifiedAnswers > 0, 'the server answered 304s: conditional headers were sent');

    const recorded = new Map((await query(`SELECT url, outcome FROM fetch_log WHERE crawl_id = 'crawl-2' AND outcome IN ('not_modified', 'fetched')`)).map((r) => [String(r[0]), String(r[1])]));
    for (const url of firstPages) {
      const expected = changed.includes(url) ? 'fetched' : 'not_modified';
      assert.equal(recorded.get(url), expected, `${url} in the second crawl`);
    }
    const restored = (await query(`SELECT url FROM pages WHERE crawl_id = 'crawl-2' ORDER BY url`)).map((r) => String(r[0]));
    assert.deepEqual(restored, [...changed].sort(), 'exactly the changed pages are stored again');
    // the test web appends the update note after the footer: outside the main text, in the full text
    const text = await query(`SELECT text_full FROM pages WHERE crawl_id = 'crawl-2' AND url = '${changed[0]}'`);
    assert.match(String(text[0]![0]), /updated \(revision 1\)/, 'with their new content');
  });
});
