import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import { runConsoleQuery, toCsv } from '../../app/console/console-query.js';
import { ConsoleFiles } from '../../app/console/console-files.js';
import { cookieOf, crossSite, loopbackHostHeader, sessionMatches, sessionValue } from '../../app/console/console-session.js';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('the console server', () => {
  it('CSV: a header line, RFC 4180 quoting, NULL empty, nested values as JSON', () => {
    assert.equal(
      toCsv(['url', 'title', 'n', 'tags'], [['http://a.test/?x=1,2', 'say "hi"\nthere', null, ['a', 'b']], ['http://b.test/', 'plain', 3, { k: 1 }]]),
      'url,title,n,tags\r\n"http://a.test/?x=1,2","say ""hi""\nthere",,"[""a"",""b""]"\r\nhttp://b.test/,plain,3,"{""k"":1}"\r\n',
    );
  });

  it('files: / is the console, /console/<name> its files, nothing else of the disk', () => {
    const files = new ConsoleFiles();
    const index = files.answer('/', false)!;
    assert.equal(index.status, 200);
    assert.match(String(index.raw!.data), /data-signed-in="no"/);
    assert.match(String(files.answer('/', true)!.raw!.data), /data-signed-in="yes"/);
    assert.match(index.raw!.headers!['content-security-policy']!, /default-src 'self'/);
    assert.equal(files.answer('/console/console.js', false)!.raw!.contentType, 'text/javascript; charset=utf-8');
    for (const p of ['/console/../package.json', '/console/%2e%2e/package.json', '/console/nope.js']) assert.equal(files.answer(p, false)!.status, 404, p);
    assert.equal(files.answer('/api/v1/jobs', false), null, 'not a console path');
  });

  it('session: the cookie holds an HMAC of the token, checked in full', () => {
    const token = 'a-token-of-32-characters-or-so-00';
    const value = sessionValue(token);
    assert.notEqual(value, token);
    assert.equal(cookieOf(`a=1; crawl_console=${value}; b=2`, 'crawl_console'), value);
    assert.ok(sessionMatches(request({ cookie: `crawl_console=${value}` }), token));
    assert.ok(!sessionMatches(request({ cookie: `crawl_console=${value.slice(0, -1)}` }), token));
    assert.ok(!sessionMatches(request({ cookie: `crawl_console=${sessionValue('another-token-000000000000')}` }), token));
    assert.ok(!sessionMatches(request({}), token));
  });

  it("cross-site: a browser's Origin naming another host is refused; no Origin (curl) is not", () => {
    assert.equal(crossSite(request({ host: '127.0.0.1:8080' })), false);
    assert.equal(crossSite(request({ host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' })), false);
    assert.equal(crossSite(request({ host: '127.0.0.1:8080', origin: 'http://127.0.0.1:9090' })), true);
    assert.equal(crossSite(request({ host: '127.0.0.1:8080', origin: 'https://evil.example' })), true);
    assert.equal(crossSite(request({ host: '127.0.0.1:8080', origin: 'null' })), true, 'an opaque origin (a sandboxed frame, a file page)');
  });

  it('without a token, a Host header must name this machine (a rebound name of another site is refused)', () => {
    for (const host of ['127.0.0.1:8080', '127.3.4.5', 'localhost:8080', 'LOCALHOST', '[::1]:8080']) assert.ok(loopbackHostHeader(request({ host })), host);
    for (const host of ['evil.example:8080', '127.0.0.1.evil.example', '0.0.0.0:8080', '[::2]:8080']) assert.ok(!loopbackHostHeader(request({ host })), host);
    assert.ok(loopbackHostHeader(request({})), 'HTTP/1.0 without Host');
  });

  // a bounded scan (seconds), so that a broken interrupt fails the test rather than hanging it
  it('a console query past its time limit is stopped, with the reason', { timeout: 60_000 }, async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'console-query-'));
    try {
      const started = Date.now();
      const a = await runConsoleQuery(out, 'SELECT sum(hash(i)) FROM range(3000000000) t(i)', { offset: 0, limit: 10 }, 300);
      assert.equal(a.ok, false);
      assert.match(a.ok ? '' : a.reason, /^stopped after 0\.3 s \(crawl sql has no time limit\): .*Interrupt/i);
      assert.ok(Date.now() - started < 10_000, 'stopped soon after the limit');
      const ok = await runConsoleQuery(out, 'SELECT 42 AS answer', { offset: 0, limit: 10 });
      assert.deepEqual(ok, { ok: true, columns: ['answer'], rows: [[42]], offset: 0, has_more: false });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
