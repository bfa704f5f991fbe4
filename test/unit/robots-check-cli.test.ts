import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI } from '../support/crawl-cli.js';
import { robotsCheck, type RobotsCheckIo, type RobotsCheckOptions } from '../../cli/robots-check.js';
import { UsageError } from '../../cli/usage-error.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'robots-check-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A robots.txt in the temp dir; returns its path. */
function robotsFile(body: string | Uint8Array): string {
  const file = path.join(dir, `robots-${++files}.txt`);
  writeFileSync(file, body);
  return file;
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `crawl robots-check ARGS...` as its own process, with `stdin` piped in when given. */
function check(args: string[], stdin?: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'robots-check', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(stdin ?? '');
  });
}

const lines = (s: string) => s.split('\n').filter((l) => l !== '');

const SITE = [
  'User-agent: *',
  'Disallow: /private/',
  'Allow: /private/public/',
  'Disallow: /page',
  'Allow: /page', // same length as the Disallow: Allow wins the tie
  'Disallow: /*.pdf$',
  'Disallow: /tmp$',
  'Crawl-delay: 2.5',
  '',
  'User-agent: MyBot',
  'User-agent: other-bot',
  'Disallow: /mybot-only/',
  'Allow: /',
  '',
].join('\n');

// each test is CLI processes of its own, reading files it does not change: four at a time, not
// one after another (one by one, their thirty or so CLI start-ups took 44 s of a loaded unit run)
describe('crawl robots-check (CLI)', { concurrency: 4 }, () => {
  const site = robotsFile(SITE);
  const ua = ['--robots', site, '--user-agent'];

  test('one line per URL, in argument order', async () => {
    const urls = ['http://h.test/', 'http://h.test/private/x', 'https://h.test/about', 'http://h.test/private/', 'http://h.test/a'];
    const r = await check([...ua, 'somebot', ...urls]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), [
      'allowed http://h.test/',
      'disallowed http://h.test/private/x',
      'allowed https://h.test/about',
      'disallowed http://h.test/private/',
      'allowed http://h.test/a',
    ]);
    assert.ok(r.stdout.endsWith('\n'));
  });

  test('longest match wins; Allow wins a tie', async () => {
    const r = await check([...ua, 'somebot', '--why', 'http://h.test/private/public/x', 'http://h.test/private/publi', 'http://h.test/page', 'http://h.test/pages/2']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), [
      'allowed http://h.test/private/public/x\tAllow: /private/public/',
      'disallowed http://h.test/private/publi\tDisallow: /private/',
      'allowed http://h.test/page\tAllow: /page',
      'allowed http://h.test/pages/2\tAllow: /page',
    ]);
  });

  test('$ and * patterns', async () => {
    const r = await check([
      ...ua,
      'somebot',
      '--why',
      'http://h.test/docs/a.pdf',
      'http://h.test/a.pdf?download=1',
      'http://h.test/a.pdfx',
      'http://h.test/tmp',
      'http://h.test/tmp/',
      'http://h.test/tmp?x=1',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), [
      'disallowed http://h.test/docs/a.pdf\tDisallow: /*.pdf$',
      'allowed http://h.test/a.pdf?download=1\t(no matching rule)',
      'allowed http://h.test/a.pdfx\t(no matching rule)',
      'disallowed http://h.test/tmp\tDisallow: /tmp$',
      'allowed http://h.test/tmp/\t(no matching rule)',
      'allowed http://h.test/tmp?x=1\t(no matching rule)',
    ]);
  });

  test('an agent with its own group does not use the * group', async () => {
    const urls = ['http://h.test/private/x', 'http://h.test/mybot-only/y'];
    const mine = await check([...ua, 'mybot', '--why', ...urls]);
    assert.equal(mine.code, 0, mine.stderr);
    assert.deepEqual(lines(mine.stdout), ['allowed http://h.test/private/x\tAllow: /', 'disallowed http://h.test/mybot-only/y\tDisallow: /mybot-only/']);
    // a second User-agent line of the same group
    const other = await check([...ua, 'Other-Bot', ...urls]);
    assert.deepEqual(lines(other.stdout), ['allowed http://h.test/private/x', 'disallowed http://h.test/mybot-only/y']);
    // any other agent: the * group
    const star = await check([...ua, 'mybotx', ...urls]);
    assert.deepEqual(lines(star.stdout), ['disallowed http://h.test/private/x', 'allowed http://h.test/mybot-only/y']);
  });

  test('a full User-Agent string is matched by its product token', async () => {
    const urls = ['http://h.test/private/x', 'http://h.test/mybot-only/y'];
    const full = await check([...ua, 'MyBot/1.0 (+http://example.org/bot)', ...urls]);
    const token = await check([...ua, 'MyBot', ...urls]);
    assert.equal(full.code, 0, full.stderr);
    assert.equal(full.stdout, token.stdout);
    assert.deepEqual(lines(full.stdout), ['allowed http://h.test/private/x', 'disallowed http://h.test/mybot-only/y']);
  });

  test('a compatible; user agent is matched by the product after "compatible;", as Google\'s crawlers are', async () => {
    const urls = ['http://h.test/private/x', 'http://h.test/mybot-only/y'];
    const r = await check([...ua, 'Mozilla/5.0 (compatible; MyBot/1.0; +http://example.org/bot)', ...urls]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), ['allowed http://h.test/private/x', 'disallowed http://h.test/mybot-only/y'], "MyBot's group, not the * group Mozilla would get");
  });

  test('--robots-token overrides the user agent\'s token, and needs no --user-agent', async () => {
    const urls = ['http://h.test/private/x', 'http://h.test/mybot-only/y'];
    const over = await check([...ua, 'somebot/2.0', '--robots-token', 'MyBot', ...urls]);
    assert.equal(over.code, 0, over.stderr);
    assert.deepEqual(lines(over.stdout), ['allowed http://h.test/private/x', 'disallowed http://h.test/mybot-only/y']);
    const alone = await check(['--robots', site, '--robots-token', 'mybot', ...urls]);
    assert.equal(alone.stdout, over.stdout);
  });

  test('--why: the deciding rule, or (no matching rule)', async () => {
    const r = await check([...ua, 'somebot', '--why', 'http://h.test/private/x', 'http://h.test/open', 'http://h.test/robots.txt']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\n'), [
      'disallowed http://h.test/private/x\tDisallow: /private/',
      'allowed http://h.test/open\t(no matching rule)',
      'allowed http://h.test/robots.txt\t(/robots.txt is always allowed)',
      '',
    ]);
  });

  test('URLs are checked in the form the crawler sees them (canonical)', async () => {
    // '//' collapsed and utm_* dropped by the normalize stage: the crawler checks /private/x
    const r = await check([...ua, 'somebot', 'http://h.test//private//x', 'http://h.test/tmp?utm_source=feed']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), ['disallowed http://h.test//private//x', 'disallowed http://h.test/tmp?utm_source=feed']);
  });

  test('--robots - reads stdin', async () => {
    const r = await check(['--robots', '-', '--user-agent', 'somebot', 'http://h.test/private/x', 'http://h.test/ok'], SITE);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), ['disallowed http://h.test/private/x', 'allowed http://h.test/ok']);
  });

  test('a UTF-8 BOM at the start of the file is skipped', async () => {
    const file = robotsFile(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('User-agent: *\nDisallow: /x\n')]));
    const r = await check(['--robots', file, '--user-agent', 'somebot', 'http://h.test/x']);
    assert.deepEqual(lines(r.stdout), ['disallowed http://h.test/x']);
  });

  test('Crawl-delay goes to stderr only', async () => {
    const r = await check([...ua, 'somebot', 'http://h.test/private/x']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, 'disallowed http://h.test/private/x\n');
    assert.equal(r.stderr, 'crawl-delay: 2.5 s\n');
    // MyBot's group has no Crawl-delay: nothing on stderr
    const mine = await check([...ua, 'mybot', 'http://h.test/']);
    assert.equal(mine.stdout, 'allowed http://h.test/\n');
    assert.equal(mine.stderr, '');
  });

  describe('errors: one line on stderr, exit 2, nothing on stdout', { concurrency: 4 }, () => {
    const cases: Array<[string, string[], RegExp]> = [
      ['missing --robots', ['--user-agent', 'bot', 'http://h.test/'], /--robots/],
      ['missing --user-agent', ['--robots', site, 'http://h.test/'], /--user-agent <ua> or --robots-token <name> is required/],
      ['no URLs', ['--robots', site, '--user-agent', 'bot'], /argument/],
      ['unreadable file', ['--robots', path.join(dir, 'absent.txt'), '--user-agent', 'bot', 'http://h.test/'], /cannot read robots file .*absent\.txt: ENOENT/],
      ['a directory as the file', ['--robots', dir, '--user-agent', 'bot', 'http://h.test/'], /cannot read robots file .*EISDIR/],
      ['a relative URL', ['--robots', site, '--user-agent', 'bot', 'http://h.test/', '/private/x'], /"\/private\/x" is not an absolute http\(s\) URL/],
      ['a URL without a scheme', ['--robots', site, '--user-agent', 'bot', 'h.test/x'], /"h\.test\/x" is not an absolute http\(s\) URL/],
      ['an ftp URL', ['--robots', site, '--user-agent', 'bot', 'ftp://h.test/x'], /"ftp:\/\/h\.test\/x" is not an absolute http\(s\) URL/],
      ['a UA without a product token', ['--robots', site, '--user-agent', '2bot/1.0', 'http://h.test/'], /--user-agent "2bot\/1\.0" names no product token/],
      ['an empty UA', ['--robots', site, '--user-agent', '', 'http://h.test/'], /--user-agent "" names no product token/],
      ['a --robots-token with a digit', ['--robots', site, '--robots-token', 'bot2', 'http://h.test/'], /--robots-token must be a product token of letters, _ and - \(RFC 9309\), got "bot2"/],
      ['a --robots-token with a version', ['--robots', site, '--user-agent', 'bot', '--robots-token', 'MyBot/1.0', 'http://h.test/'], /--robots-token must be a product token/],
    ];
    for (const [name, args, message] of cases) {
      test(name, async () => {
        const r = await check(args);
        assert.equal(r.code, 2, `exit code; stderr: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /^crawl: [^\n]+\n$/, 'exactly one line');
        assert.match(r.stderr, message);
      });
    }
  });

  test('listed in crawl --help', async () => {
    const r = await new Promise<Result>((resolve) => {
      const child = spawn(process.execPath, [CLI, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr: '' }));
    });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /robots-check \[options\] <url\.\.\.>/);
  });
});

describe('robotsCheck (function)', () => {
  function fakeIo(files: Record<string, string | Uint8Array>) {
    const notes: string[] = [];
    const reads: string[] = [];
    const io: RobotsCheckIo = {
      read: async (file) => {
        reads.push(file);
        const body = files[file];
        if (body === undefined) throw Object.assign(new Error(`no such file ${file}`), { code: 'ENOENT' });
        return typeof body === 'string' ? new TextEncoder().encode(body) : body;
      },
      note: (line) => notes.push(line),
    };
    return { io, notes, reads };
  }
  const run = (opts: RobotsCheckOptions, urls: string[], files: Record<string, string | Uint8Array> = { r: SITE }) => {
    const f = fakeIo(files);
    return { f, result: robotsCheck(opts, urls, f.io) };
  };

  test('lines in order, crawl-delay as a note', async () => {
    const { f, result } = run({ robots: 'r', userAgent: 'somebot' }, ['http://h.test/private/a', 'http://h.test/b', 'http://h.test/x.pdf']);
    assert.deepEqual(await result, ['disallowed http://h.test/private/a', 'allowed http://h.test/b', 'disallowed http://h.test/x.pdf']);
    assert.deepEqual(f.notes, ['crawl-delay: 2.5 s']);
    assert.deepEqual(f.reads, ['r']);
  });

  test('why, full UA string, agent group', async () => {
    const { f, result } = run({ robots: '-', userAgent: 'MyBot/2.0 (compatible)', why: true }, ['http://h.test/mybot-only/', 'http://h.test/private/'], { '-': SITE });
    assert.deepEqual(await result, ['disallowed http://h.test/mybot-only/\tDisallow: /mybot-only/', 'allowed http://h.test/private/\tAllow: /']);
    assert.deepEqual(f.notes, []);
  });

  test('why notes the canonical form when it differs', async () => {
    const { f, result } = run({ robots: 'r', userAgent: 'mybot', why: true }, ['HTTP://H.test//mybot-only//z']);
    assert.deepEqual(await result, ['disallowed HTTP://H.test//mybot-only//z\tDisallow: /mybot-only/']);
    assert.deepEqual(f.notes, ['HTTP://H.test//mybot-only//z is checked as http://h.test/mybot-only/z']);
  });

  test('the 500 KiB cut applies to the file', async () => {
    const filler = '# filler\n'.repeat(Math.ceil((500 * 1024) / 9));
    const body = `User-agent: *\nDisallow: /early\n${filler}Disallow: /late\n`;
    const { result } = run({ robots: 'r', userAgent: 'bot' }, ['http://h.test/early', 'http://h.test/late'], { r: body });
    assert.deepEqual(await result, ['disallowed http://h.test/early', 'allowed http://h.test/late']);
  });

  test('usage errors, raised before the file is read', async () => {
    const bad: Array<[RobotsCheckOptions, string[], RegExp]> = [
      [{ userAgent: 'bot' }, ['http://h.test/'], /--robots <file> is required/],
      [{ robots: 'r' }, ['http://h.test/'], /--user-agent <ua> or --robots-token <name> is required/],
      [{ robots: 'r', robotsToken: 'bot/1' }, ['http://h.test/'], /--robots-token must be a product token/],
      [{ robots: 'r', userAgent: 'bot' }, [], /at least one URL/],
      [{ robots: 'r', userAgent: '*' }, ['http://h.test/'], /product token/],
      [{ robots: 'r', userAgent: 'bot' }, ['mailto:a@h.test'], /not an absolute http\(s\) URL/],
    ];
    for (const [opts, urls, message] of bad) {
      const { f, result } = run(opts, urls);
      await assert.rejects(result, (err: unknown) => err instanceof UsageError && message.test(err.message));
      assert.deepEqual(f.reads, [], 'the file is not read');
    }
    const { result } = run({ robots: 'missing', userAgent: 'bot' }, ['http://h.test/']);
    await assert.rejects(result, (err: unknown) => err instanceof UsageError && /cannot read robots file missing: ENOENT/.test(err.message));
  });
});
