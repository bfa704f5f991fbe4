/**
 * Output that pipes: `crawl sql` in every format writes all of its output to a pipe (a
 * reader slower than the command, several MB), and a reader that stops early (`| head -1`)
 * ends the command quietly with status 0. Real pipes through bash, as a user runs them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, shellQuote } from '../support/crawl-cli.js';

/** ~40,000 rows of 200+ characters: several MB in every format */
const BIG_QUERY = "SELECT i, repeat('x', 200) || i AS pad FROM range(40000) t(i)";
const sh = (script: string) => spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 120_000 });
describe('crawl sql output through a pipe', () => {
  let dir: string;
  let out: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-pipes-'));
    out = path.join(dir, 'out');
    mkdirSync(out); // an output directory with no tables yet: the query needs none
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const format of ['table', 'csv', 'json'] as const) {
    it(`${format}: a slow pipe receives every byte the same query writes to a file`, () => {
      const sql = `${shellQuote(process.execPath)} ${shellQuote(CLI)} sql --out ${shellQuote(out)} --format ${format} ${shellQuote(BIG_QUERY)}`;
      const file = path.join(dir, `result.${format}`);
      const toFile = sh(`${sql} > ${shellQuote(file)}`);
      assert.equal(toFile.status, 0, toFile.stderr);
      const size = statSync(file).size;
      assert.ok(size > 3_000_000, `several MB of output (${size} bytes)`);
      // the reader starts late and reads slowly, so the pipe's buffer fills many times over
      const piped = sh(`set -o pipefail; ${sql} | (sleep 1; cat) | wc -c`);
      assert.equal(piped.status, 0, piped.stderr);
      assert.equal(Number(piped.stdout.trim()), size, 'the pipe got the whole output');
      if (format === 'json') {
        const parsed = sh(`${sql} | node -e "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>console.log(JSON.parse(s).length))"`);
        assert.equal(parsed.stdout.trim(), '40000', 'valid JSON with every row');
      }
    });

    it(`${format}: | head -1 ends the command with status 0 and nothing on stderr`, () => {
      const r = sh(`${shellQuote(process.execPath)} ${shellQuote(CLI)} sql --out ${shellQuote(out)} --format ${format} ${shellQuote(BIG_QUERY)} 2>${shellQuote(path.join(dir, 'err'))} | head -1; echo "status=\${PIPESTATUS[0]}"; cat ${shellQuote(path.join(dir, 'err'))}`);
      const lines = r.stdout.trim().split('\n');
      assert.equal(lines.length, 2, `one line of output, then the status, and no error output: ${r.stdout}`);
      assert.equal(lines[1], 'status=0');
    });
  }
});
