/**
 * One output directory through a crawl's life, as a user has it: a crawl with a deliberate
 * extract bug (titles off), `crawl replay` with it fixed, a recrawl with some pages changed in
 * between, and then every example query of the README and of docs/output-and-queries.md
 * (between the `example-queries` markers) over the result, which has what the examples ask
 * about: two crawls over one store and replayed versions. The checks share these crawls
 * because each needs what the one before made; each `it` is one user-visible promise.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E, runShortCrawl } from '../support/e2e-web.js';
import { promptResults } from '../support/sql-prompt.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** where example queries are written down for users */
const QUERY_FILES = ['README.md', 'docs/output-and-queries.md'];

/** The ```sql blocks between the markers, each with its first comment line as its name. */
export function exampleQueries(text: string, file: string): Array<{ name: string; sql: string }> {
  const start = text.indexOf('<!-- example-queries:start -->');
  const end = text.indexOf('<!-- example-queries:end -->');
  assert.ok(start >= 0 && end > start, `${file} has the query markers`);
  return [...text.slice(start, end).matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => ({
    name: /^--\s*(.*)$/m.exec(m[1]!)?.[1] ?? m[1]!.slice(0, 40),
    sql: m[1]!.trim(),
  }));
}

describe('one output directory: a crawl, its replay after a fix, a recrawl, then the example queries', () => {
  let web: TestWeb;
  let out: string;
  /** pages the first crawl stored */
  let pages = 0;
  before(async () => {
    web = await startTestWeb({ hosts: 3, pagesPerHost: 10, seed: E2E.seed });
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-recrawl-replay-'));
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

  it('crawl replay --from extract rewrites the pages into version 1 with titles, keeps version 0, and fetches nothing', async () => {
    await runShortCrawl(web, out, 'crawl-1', ['--no-titles']);

    pages = await one('SELECT count(*) FROM pages');
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
  });

  it('a second crawl replay (--from persist) is version 2, and fetches nothing either', async () => {
    assert.ok(pages > 0, 'the first crawl and its replay ran');
    web.clearLog();
    const again = await runCli(['replay', '--from', 'persist', '--out', out], {}, 120_000);
    assert.equal(again.code, 0, again.stderr.slice(-2000));
    assert.match(again.stdout, /-> version 2 in /);
    assert.equal(await one('SELECT count(*) FROM pages WHERE version = 2'), pages);
    assert.deepEqual(web.requestLog(), []);
  });

  it('a recrawl sends conditional headers, records not_modified for unchanged pages and stores changed ones again', async () => {
    const firstPages = (await query(`SELECT url FROM pages WHERE crawl_id = 'crawl-1' ORDER BY url`)).map((r) => String(r[0]));
    assert.ok(firstPages.length >= 15, `the first crawl stored pages (${firstPages.length})`);

    const changed = firstPages.filter((u) => !u.includes('?')).slice(0, 4);
    web.touch(changed);
    web.clearLog();
    await runShortCrawl(web, out, 'crawl-2');

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

  it('each example query returns rows through crawl sql: the first as an argument, all of them at its prompt', async () => {
    const queries = QUERY_FILES.flatMap((f) => exampleQueries(readFileSync(path.join(ROOT, f), 'utf8'), f));
    assert.ok(queries.length >= 9, `found ${queries.length} queries`);
    assert.ok(await one(`SELECT count(DISTINCT crawl_id) FROM fetch_log`) >= 2, 'the output has the two crawls the examples compare');

    // as a user runs one: '--' ends the options, the query starts with an SQL comment
    const first = await runCli(['sql', '--out', out, '--format', 'json', '--', queries[0]!.sql]);
    assert.equal(first.code, 0, `${queries[0]!.name}: ${first.stderr}`);
    assert.ok((JSON.parse(first.stdout) as unknown[]).length > 0, `"${queries[0]!.name}" returned no rows`);

    // every one pasted into one prompt: one process, one DuckDB, the same statements
    const results = await promptResults(out, queries.map((q) => q.sql));
    assert.equal(results.length, queries.length, 'one result per query');
    queries.forEach((q, i) => {
      const result = results[i]!;
      assert.ok(!result.startsWith('sql error:'), `${q.name}: ${result}`);
      const rows = JSON.parse(result) as unknown[];
      assert.ok(rows.length > 0, `"${q.name}" returned no rows`);
      console.log(`${q.name}: ${rows.length} rows`);
    });
  });

  it('crawl sql --format parquet writes the result to a Parquet file', async () => {
    const file = path.join(out, 'status.parquet');
    const res = await runCli(['sql', '--out', out, '--format', 'parquet', '--output', file, 'SELECT fetch_status, count(*) AS n FROM fetch_log GROUP BY 1']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^wrote \d+ rows to /);
    const direct = await query('SELECT fetch_status, count(*) AS n FROM fetch_log GROUP BY 1 ORDER BY 1');
    const fromFile = await query(`SELECT * FROM read_parquet('${file}') ORDER BY 1`);
    assert.ok(direct.length > 0, 'the crawl logged fetches');
    assert.deepEqual(fromFile, direct);
    const bad = await runCli(['sql', '--out', out, '--format', 'parquet', 'SELECT 1']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--format parquet writes a file: give --output FILE/);
  });
});
