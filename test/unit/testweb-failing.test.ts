// The failing hosts of the test web, over real HTTP on loopback: each endpoint fails the way
// it says, within short, bounded reads (nothing here waits for a timeout of the crawler's).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import {
  DEAD_HOST,
  FAILING_HOST,
  FAILING_PATHS,
  FAILING_RESET_DECLARED,
  FAILING_RESET_SENT,
  failingPagePaths,
  getFromTestWeb,
  resolveFailingOptions,
  startTestWeb,
  type TestWeb,
} from '../../testweb/index.js';

const DRIP_MS = 300;
let web: TestWeb;
before(async () => {
  web = await startTestWeb({ hosts: 1, seed: 1, failing: { dripIntervalMs: DRIP_MS, slowMs: 60_000 } });
});
after(async () => {
  await web.close();
});

interface Seen {
  status: number | null;
  bytes: number;
  /** 'end': the body ended; 'error': the connection failed (its code); 'cut': we stopped waiting */
  how: 'end' | 'error' | 'cut';
  code?: string;
}

/** A GET read for at most `ms`: what arrived, and how it stopped. */
function readFor(host: string, path: string, ms: number): Promise<Seen> {
  return new Promise((resolve) => {
    const seen: Seen = { status: null, bytes: 0, how: 'cut' };
    const req = request({ host: '127.0.0.1', port: web.port, path, headers: { host } }, (res) => {
      seen.status = res.statusCode ?? null;
      res.on('data', (c: Buffer) => (seen.bytes += c.length));
      res.on('end', () => finish('end'));
      res.on('error', (err: NodeJS.ErrnoException) => finish('error', err.code));
    });
    const timer = setTimeout(() => finish('cut'), ms);
    req.on('error', (err: NodeJS.ErrnoException) => finish('error', err.code));
    req.end();
    let done = false;
    function finish(how: Seen['how'], code?: string) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ ...seen, how, ...(code ? { code } : {}) });
    }
  });
}

describe('failing.test', () => {
  test('"/" links every working page and every failing endpoint, failing ones between working ones', async () => {
    const res = await getFromTestWeb(web.port, FAILING_HOST, '/');
    assert.equal(res.status, 200);
    const links = [...res.body.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual([...links].sort(), [...failingPagePaths(web.failing!.options), ...FAILING_PATHS.map((f) => f.path)].sort());
    assert.equal(links[0], '/page/1');
    assert.ok(FAILING_PATHS.every((f) => links.indexOf(f.path) > 0));
    assert.equal((await getFromTestWeb(web.port, FAILING_HOST, '/robots.txt')).body, 'User-agent: *\nAllow: /\n');
  });

  test('a working page answers', async () => {
    const res = await getFromTestWeb(web.port, FAILING_HOST, '/page/3');
    assert.equal(res.status, 200);
    assert.match(res.body, /Working page 3/);
    assert.equal((await getFromTestWeb(web.port, FAILING_HOST, `/page/${web.failing!.options.pages + 1}`)).status, 404);
  });

  test('/hang sends nothing, not even a status line', async () => {
    const seen = await readFor(FAILING_HOST, '/hang', 400);
    assert.deepEqual(seen, { status: null, bytes: 0, how: 'cut' });
  });

  test('/drip sends its headers, then a byte per interval', async () => {
    const seen = await readFor(FAILING_HOST, '/drip', DRIP_MS * 3 + 150);
    assert.equal(seen.status, 200);
    assert.equal(seen.how, 'cut');
    assert.ok(seen.bytes >= 3 && seen.bytes <= 5, `${seen.bytes} bytes in ${DRIP_MS * 3 + 150} ms`);
  });

  test('/reset sends part of the body it declares, then resets the connection', async () => {
    const seen = await readFor(FAILING_HOST, '/reset', 2000);
    assert.equal(seen.status, 200);
    assert.equal(seen.how, 'error');
    assert.ok(seen.bytes <= FAILING_RESET_SENT && FAILING_RESET_SENT < FAILING_RESET_DECLARED, `${seen.bytes} bytes`);
  });

  test('/timeout sends its headers and half the page, then waits', async () => {
    const seen = await readFor(FAILING_HOST, '/timeout', 400);
    assert.equal(seen.status, 200);
    assert.equal(seen.how, 'cut');
    assert.ok(seen.bytes > 0);
  });

  test('the server forgets a request the client gave up on: it is logged, with no status', async () => {
    web.clearLog();
    await readFor(FAILING_HOST, '/hang', 100);
    const held = () => web.inFlight().filter((r) => r.host === FAILING_HOST).length;
    for (let i = 0; i < 100 && held() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(held(), 0, 'no request held after its client left');
    assert.deepEqual(web.requestLog().filter((r) => r.path === '/hang').map((r) => r.status), [0]);
  });
});

describe('dead.failing.test', () => {
  test('robots.txt answers; every other request is reset before a byte is sent', async () => {
    assert.equal((await getFromTestWeb(web.port, DEAD_HOST, '/robots.txt')).status, 200);
    for (const path of ['/', '/page/1', '/anything']) {
      const seen = await readFor(DEAD_HOST, path, 2000);
      assert.deepEqual([seen.status, seen.bytes, seen.how], [null, 0, 'error'], path);
    }
  });
});

test('options are checked', () => {
  assert.equal(resolveFailingOptions(false), null);
  assert.deepEqual(resolveFailingOptions({ pages: 2 })?.pages, 2);
  assert.throws(() => resolveFailingOptions({ pages: 0 }), /pages/);
  assert.throws(() => resolveFailingOptions({ dripIntervalMs: -1 }), /dripIntervalMs/);
});
