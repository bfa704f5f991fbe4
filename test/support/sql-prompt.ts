import assert from 'node:assert/strict';
import { runCli } from './crawl-cli.js';

/** what `crawl sql` prints before each statement it reads at its prompt */
const PROMPT = 'crawl> ';

/**
 * Pastes the statements into the prompt of one `crawl sql --format json` (stdin, as a user
 * would, each ended by ";") and returns what each printed: its JSON result, or its
 * "sql error: ..." line. One process and one DuckDB for all of them.
 */
export async function promptResults(out: string, statements: string[], timeoutMs = 120_000): Promise<string[]> {
  const input = statements.map((s) => (s.trimEnd().endsWith(';') ? s.trimEnd() : `${s.trimEnd()};`)).join('\n') + '\n.quit\n';
  const res = await runCli(['sql', '--out', out, '--format', 'json'], {}, timeoutMs, input);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /^views: pages, /, 'the prompt greets with the views');
  // the prompt is printed again after every line read; lines inside a statement print nothing else
  return res.stdout
    .slice(res.stdout.indexOf('\n') + 1)
    .split(PROMPT)
    .map((chunk) => chunk.trim())
    .filter((chunk) => chunk !== '');
}
