/**
 * `node --test --test-concurrency=N --test-reporter=spec DIR...`, with the files named by
 * --first started first, in that order, and the rest after them in the order of their paths.
 *
 *   node dist/test/support/run-tier.js --concurrency 4 --first politeness-audit --first serve-jobs dist/test/e2e/
 *
 * A tier runs N files at a time, and `node --test` starts them in the order of their paths
 * (whatever order they are given in): a file of two minutes whose name sorts late starts when
 * most of the others are done, and runs alone at the tier's end. Started first, the longest
 * files run beside the short ones. A --first name (a file name without `.test.js`) that is not
 * a file of the directories is an error, so that a renamed file is not quietly sent back to
 * its place in the path order.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

function usage(problem: string): never {
  process.stderr.write(`run-tier: ${problem}\nusage: run-tier --concurrency N [--first NAME]... DIR...\n`);
  process.exit(2);
}

let concurrency = 0;
const first: string[] = [];
const dirs: string[] = [];
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!;
  if (arg === '--concurrency') concurrency = Number(args[++i]);
  else if (arg === '--first') first.push(args[++i] ?? usage('--first needs a name'));
  else if (arg.startsWith('--')) usage(`unknown option ${arg}`);
  else dirs.push(arg);
}
if (!Number.isInteger(concurrency) || concurrency < 1) usage('--concurrency must be a whole number above 0');
if (dirs.length === 0) usage('no directory');

const files = dirs
  .flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith('.test.js')).map((f) => path.resolve(dir, f)))
  .sort();
const firstFiles = first.map((name) => {
  const found = files.filter((f) => path.basename(f) === `${name}.test.js`);
  if (found.length !== 1) usage(`--first ${name}: ${found.length} files named ${name}.test.js in ${dirs.join(' ')}`);
  return found[0]!;
});
const ordered = [...firstFiles, ...files.filter((f) => !firstFiles.includes(f))];

const stream = run({ files: ordered, concurrency });
stream.on('test:fail', () => {
  process.exitCode = 1;
});
stream.compose(new spec()).pipe(process.stdout);
