import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger, readableRecord, scrubUrls } from '../../pipeline/logger.js';

// what the terminal shows depends on LOG_LEVEL; these tests say it themselves
delete process.env.LOG_LEVEL;

/** a stand-in for stderr that records what is written */
function fakeStderr(isTTY: boolean) {
  const written: string[] = [];
  const stream = { isTTY, write: (s: string) => (written.push(String(s)), true) } as unknown as NodeJS.WriteStream;
  return { stream, text: () => written.join('') };
}

function logSome(log: ReturnType<typeof createLogger>) {
  log.info({ host: 'a.example' }, 'robots.txt fetched');
  log.warn({ host: 'b.example', status: 503 }, 'robots.txt unavailable');
}

test('on a terminal: warnings only, one readable line each, clearing the progress line', () => {
  const err = fakeStderr(true);
  logSome(createLogger('crawl', { level: undefined }, err.stream));
  assert.equal(err.text(), '\r\x1b[Kwarning: robots.txt unavailable (host=b.example status=503)\n');
});

test('on a terminal with --log-level info: info lines too', () => {
  const err = fakeStderr(true);
  logSome(createLogger('crawl', { level: 'info' }, err.stream));
  assert.match(err.text(), /info: robots\.txt fetched \(host=a\.example\)\n.*warning: robots\.txt unavailable/s);
});

test('not a terminal: JSON lines at info, as machines read them', () => {
  const err = fakeStderr(false);
  logSome(createLogger('crawl', {}, err.stream));
  const records = err.text().trim().split('\n').map((l) => JSON.parse(l) as { msg: string; level: number });
  assert.deepEqual(records.map((r) => [r.level, r.msg]), [[30, 'robots.txt fetched'], [40, 'robots.txt unavailable']]);
});

test('--log-file gets every record at the level as JSON lines while the terminal shows warnings', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-log-'));
  try {
    const file = path.join(dir, 'crawl.log');
    const err = fakeStderr(true);
    logSome(createLogger('crawl', { file }, err.stream));
    await sleep(100); // the file stream writes asynchronously
    assert.deepEqual(readFileSync(file, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { msg: string }).msg), ['robots.txt fetched', 'robots.txt unavailable']);
    assert.doesNotMatch(err.text(), /robots\.txt fetched/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unknown level is an error that names it', () => {
  assert.throws(() => createLogger('crawl', { level: 'loud' }, fakeStderr(false).stream), /log level .* must be one of .*got "loud"/);
});

test('a record that is not JSON is shown as it is', () => {
  assert.equal(readableRecord('plain text'), 'plain text');
});

describe('log records carry no URL beyond scheme and host, and no password in one', () => {
  test('scrubUrls keeps the origin only', async () => {
    for (const [text, expected] of [
      ['fetching http://a.example/x?sid=1 failed', 'fetching http://a.example/… failed'],
      ['nats://u:p@127.0.0.1:4222', 'nats://127.0.0.1:4222'],
      ['tls://tok@a:1,nats://b:2', 'tls://a:1,nats://b:2'],
      ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
      ['https://h.test/', 'https://h.test'],
      ['no url here: /var/lib/crawl', 'no url here: /var/lib/crawl'],
    ] as const) {
      assert.equal(scrubUrls(text), expected);
    }
  });

  test('a logger scrubs its message, its fields and an error', async () => {
    const { PassThrough } = await import('node:stream');
    const sink = new PassThrough();
    let text = '';
    sink.on('data', (c: Buffer) => (text += c.toString()));
    const log = createLogger('t', { level: 'info' }, sink as unknown as NodeJS.WriteStream);
    log.warn({ url: 'http://x.test/p?token=abc', err: new Error('GET http://u:pw@y.test/q failed') }, 'at http://z.test/r?k=v');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.doesNotMatch(text, /token=abc|pw@|\/q|\/r\?/);
    assert.match(text, /http:\/\/x\.test\/…/);
  });
});
