/**
 * What a user checks of the `urls` view after a crawl that was killed and resumed: it has the
 * URLs fetch_log has, each once, and each URL's last outcome is its newest fetch_log row's.
 * The newest row is found here from the rows themselves, not with the view's SQL.
 */
import assert from 'node:assert/strict';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';

/** Asserts `urls` agrees with `fetch_log` in the output `out`; returns how many URLs it has. */
export async function assertUrlsAgreeWithFetchLog(out: string): Promise<number> {
  const db = await openOutputDatabase(out);
  try {
    const log = await db.run('SELECT crawl_id, url, outcome, fetch_time FROM fetch_log');
    const urls = await db.run('SELECT crawl_id, url, last_outcome, content_digest FROM urls');
    const key = (crawl: unknown, url: unknown) => `${String(crawl)} ${String(url)}`;

    const newest = new Map<string, { at: string; outcomes: Set<string> }>();
    for (const [crawl, url, outcome, at] of log.rows as Array<[string, string, string, string]>) {
      const k = key(crawl, url);
      const seen = newest.get(k);
      if (!seen || at > seen.at) newest.set(k, { at, outcomes: new Set([outcome]) });
      else if (at === seen.at) seen.outcomes.add(outcome);
    }
    const shown = new Map<string, string>();
    for (const [crawl, url, lastOutcome] of urls.rows as Array<[string, string, string]>) {
      const k = key(crawl, url);
      assert.ok(!shown.has(k), `urls has ${k} twice`);
      shown.set(k, lastOutcome);
    }
    assert.deepEqual([...shown.keys()].sort(), [...newest.keys()].sort(), 'urls has the URLs of fetch_log');
    for (const [k, { outcomes }] of newest) {
      const last = shown.get(k)!;
      // rows at the same millisecond: any of them is the newest, but a finished one before a retry
      const expected = outcomes.size > 1 ? [...outcomes].filter((o) => o !== 'retry') : [...outcomes];
      assert.ok(expected.includes(last), `${k}: urls says ${last}, fetch_log's newest row says ${[...outcomes].join(' or ')}`);
    }

    const digests = await db.run('SELECT p.url, p.content_digest, u.content_digest FROM pages p JOIN urls u USING (crawl_id, url) WHERE u.content_digest IS DISTINCT FROM p.content_digest');
    assert.deepEqual(digests.rows, [], "urls' content_digest is its stored page's");
    return shown.size;
  } finally {
    await db.close();
  }
}
