/**
 * Every example query of the README and of docs/output-and-queries.md (between the
 * `example-queries` markers) runs through `crawl sql` against a real crawl and returns rows. The output has what the examples ask
 * about: two crawls over one store (with pages changed in between) and a replay.
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

describe('example queries of the README and the docs', () => {
  let web: TestWeb;
  let out: string;
  before(async () => {
    web = await startTestWeb({ hosts: 4, pagesPerHost: 12, seed: E2E.seed });
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-readme-'));
  });
  after(async () => {
    await web?.close();
    rmSync(out, { recursive: true, force: true });
  });

  const crawl = (crawlId: string) => runShortCrawl(web, out, crawlId);

  it('each returns rows from a real crawl, recrawl and replay', async () => {
    const queries = QUERY_FILES.flatMap((f) => exampleQueries(readFileSync(path.join(ROOT, f), 'utf8'), f));
    assert.ok(queries.length >= 9, `found ${queries.length} queries`);

    await crawl('crawl-1');
    const db = await openOutputDatabase(out);
    const urls = (await db.run(`SELECT url FROM pages WHERE url NOT LIKE '%?%' ORDER BY url LIMIT 3`)).rows.map((r) => String(r[0]));
    await db.close();
    web.touch(urls);
    await crawl('crawl-2');
    const replay = await runCli(['replay', '--from', 'extract', '--out', out], {}, 120_000);
    assert.equal(replay.code, 0, replay.stderr);

    for (const q of queries) {
      // '--' ends the options: the query starts with an SQL comment
      const res = await runCli(['sql', '--out', out, '--format', 'json', '--', q.sql]);
      assert.equal(res.code, 0, `${q.name}: ${res.stderr}`);
      const rows = JSON.parse(res.stdout) as unknown[];
      assert.ok(rows.length > 0, `"${q.name}" returned no rows`);
      console.log(`${q.name}: ${rows.length} rows`);
    }
  });

  it('--format parquet writes the result to a Parquet file', async () => {
    const file = path.join(out, 'status.parquet');
    const res = await runCli(['sql', '--out', out, '--format', 'parquet', '--output', file, 'SELECT fetch_status, count(*) AS n FROM fetch_log GROUP BY 1']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^wrote \d+ rows to /);
    const db = await openOutputDatabase(out);
    try {
      const direct = await db.run('SELECT fetch_status, count(*) AS n FROM fetch_log GROUP BY 1 ORDER BY 1');
      const fromFile = await db.run(`SELECT * FROM read_parquet('${file}') ORDER BY 1`);
      assert.deepEqual(fromFile.rows, direct.rows);
    } finally {
      await db.close();
    }
    const bad = await runCli(['sql', '--out', out, '--format', 'parquet', 'SELECT 1']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--format parquet writes a file: give --output FILE/);
  });
});
