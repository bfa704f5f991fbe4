import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRAWL_ENV, CRAWL_NODE_FLAGS, crawlShebang } from '../../cli/node-flags.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/main.js');

test("the crawl command's first line starts node with CRAWL_ENV and CRAWL_NODE_FLAGS", () => {
  assert.equal(readFileSync(CLI, 'utf8').split('\n', 1)[0], crawlShebang());
  assert.ok(CRAWL_NODE_FLAGS.includes('--single-threaded-gc'));
  assert.ok(CRAWL_NODE_FLAGS.includes('--max-semi-space-size=8'));
  assert.ok(CRAWL_NODE_FLAGS.includes('--heap-growing-percent=70'));
});

test('run as a program, the crawl command is a node process with those flags', async () => {
  // a command that stays up (the test web) so that its process can be looked at
  const child = spawn(CLI, ['testweb', '--hosts', '1', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let stdout = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (c: Buffer) => {
        stdout += c.toString();
        if (stdout.includes('listening')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`exited ${code} before listening: ${stdout}`)));
    });
    // env -S replaces itself with node: the child's pid is node's
    const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    assert.match(path.basename(argv[0]!), /^node/);
    for (const flag of CRAWL_NODE_FLAGS) assert.ok(argv.includes(flag), `${flag} in ${argv.join(' ')}`);
    assert.ok(argv.includes(CLI), `${CLI} in ${argv.join(' ')}`);
    // and with the crawl's environment (glibc reads it at start)
    const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
    for (const [k, v] of Object.entries(CRAWL_ENV)) assert.ok(environ.includes(`${k}=${v}`), `${k}=${v} in the process's environment`);
  } finally {
    child.kill();
  }
});
