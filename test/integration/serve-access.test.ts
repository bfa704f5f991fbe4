import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli, startCli, type CliRun } from '../support/crawl-cli.js';

const TOKEN = 'api-tok-5d1e0c9a7b3f4e21';

/** Waits for `crawl serve` to print where it listens. */
async function servedUrl(run: CliRun, stderr: () => string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const m = /jobs API on (http:\/\/\S+)\/api\/v1\/jobs/.exec(stderr());
    if (m) return m[1]!;
    if (run.child.exitCode !== null) throw new Error(`crawl serve exited: ${stderr()}`);
    await sleep(100);
  }
  throw new Error(`crawl serve did not start: ${stderr()}`);
}

describe('crawl serve: the API is guarded', () => {
  let out: string;
  let run: CliRun;
  let base: string;
  before(async () => {
    out = mkdtempSync(path.join(os.tmpdir(), 'crawl-serve-'));
    run = startCli(['serve', '--out', out, '--port', '0', '--stages', 'none', '--exclude', '*/admin/*'], { NATS_URL: '', CRAWL_API_TOKEN: TOKEN, LOG_LEVEL: 'info' });
    let err = '';
    run.child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    base = await servedUrl(run, () => err);
  });
  after(async () => {
    run.child.kill('SIGTERM');
    await run.done;
    rmSync(out, { recursive: true, force: true });
  });
  const call = (p: string, init: { method?: string; token?: string | null; body?: unknown } = {}) =>
    fetch(`${base}${p}`, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.token === null ? {} : { authorization: `Bearer ${init.token ?? TOKEN}` }),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
    });

  it('without the token, or with another, every path answers 401 and nothing is created', async () => {
    for (const [p, method] of [['/api/v1/jobs', 'GET'], ['/api/v1/jobs', 'POST'], ['/api/v1/crawl/start', 'POST'], ['/healthz', 'GET'], ['/nowhere', 'GET']] as const) {
      for (const token of [null, 'wrong-token-0000000000', `${TOKEN}x`]) {
        const r = await call(p, { method, token, ...(method === 'POST' ? { body: { seeds: ['http://public.example/'] } } : {}) });
        assert.equal(r.status, 401, `${method} ${p} with ${token}`);
        assert.equal(r.headers.get('www-authenticate'), 'Bearer realm="crawl"');
        assert.deepEqual(await r.json(), { error: { field: 'authorization', reason: 'a valid token is required: Authorization: Bearer <token>' } });
      }
    }
    const list = await call('/api/v1/jobs');
    assert.equal(list.status, 200);
    assert.deepEqual(((await list.json()) as { jobs: unknown[] }).jobs, []);
  });

  it('a job whose seed is a private, loopback or metadata address is refused with the reason', async () => {
    for (const [seed, why] of [
      ['http://10.0.0.5/', /refused to connect to 10\.0\.0\.5: private address \(allow it with --allow-network\)/],
      ['http://127.0.0.1:8080/', /loopback address/],
      ['http://169.254.169.254/latest/meta-data/', /link-local address/],
      ['http://localhost/', /loopback address/],
    ] as const) {
      const r = await call('/api/v1/jobs', { method: 'POST', body: { seeds: ['http://93.184.216.34/', seed] } });
      assert.equal(r.status, 400, seed);
      const body = (await r.json()) as { error: { field: string; reason: string } };
      assert.equal(body.error.field, 'seeds[1]');
      assert.match(body.error.reason, why);
    }
    const excluded = await call('/api/v1/jobs', { method: 'POST', body: { seeds: ['http://93.184.216.34/admin/x'] } });
    assert.match(((await excluded.json()) as { error: { reason: string } }).error.reason, /excluded by the service's --exclude pattern/);
  });

  it('size caps: a body over 1 MiB is 413, more than 10,000 seeds is 400; a valid job with the token is created', async () => {
    const big = await call('/api/v1/jobs', { method: 'POST', body: JSON.stringify({ seeds: ['http://93.184.216.34/' + 'a'.repeat(1024 * 1024)] }) });
    assert.equal(big.status, 413);
    const many = await call('/api/v1/jobs', { method: 'POST', body: { seeds: Array.from({ length: 10_001 }, (_, i) => `http://93.184.216.34/${i}`) } });
    assert.equal(many.status, 400);
    assert.equal(((await many.json()) as { error: { field: string } }).error.field, 'seeds');
    const ok = await call('/api/v1/jobs', { method: 'POST', body: { seeds: ['http://93.184.216.34/'], schedule: { kind: 'interval', every: '1d' } } });
    assert.equal(ok.status, 201);
    const id = ((await ok.json()) as { id: string }).id;
    assert.equal((await call(`/api/v1/jobs/${id}/pause`, { method: 'POST' })).status, 200, 'paused at once: nothing is fetched from outside in a test');
  });

  it("the console: a sign-in form without the token, a session cookie (not the token) with it, no request from another site's page", async () => {
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 401);
    const form = await page.text();
    assert.match(form, /<form method="post" action="\/console\/sign-in">/);
    assert.doesNotMatch(form, /console\.js/, 'the console itself is not served');
    const signIn = (token: string) =>
      fetch(`${base}/console/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString() });
    const wrong = await signIn('wrong-token-0000000000');
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('set-cookie'), null);
    assert.match(await wrong.text(), /that is not the API token/);
    const right = await signIn(TOKEN);
    assert.equal(right.status, 303);
    assert.equal(right.headers.get('location'), '/');
    const cookie = right.headers.get('set-cookie')!;
    assert.match(cookie, /^crawl_console=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/$/);
    assert.ok(!cookie.includes(TOKEN), 'the cookie does not hold the token');
    const session = cookie.split(';')[0]!;
    const consolePage = await fetch(`${base}/`, { headers: { cookie: session } });
    assert.equal(consolePage.status, 200);
    assert.match(consolePage.headers.get('content-security-policy')!, /script-src 'self'/);
    assert.match(await consolePage.text(), /data-signed-in="yes"/);
    assert.equal((await fetch(`${base}/api/v1/jobs`, { headers: { cookie: session } })).status, 200);
    assert.equal((await fetch(`${base}/api/v1/jobs`, { headers: { cookie: `${session}x` } })).status, 401, 'another cookie value opens nothing');
    for (const headers of [{ cookie: session }, { authorization: `Bearer ${TOKEN}` }] as Array<Record<string, string>>) {
      const r = await fetch(`${base}/api/v1/jobs`, { method: 'POST', headers: { ...headers, origin: 'http://elsewhere.example' }, body: JSON.stringify({ seeds: ['http://93.184.216.34/'] }) });
      assert.equal(r.status, 403, `a page of another site, with ${Object.keys(headers)[0]}`);
    }
  });
});

describe('crawl serve: outside loopback', () => {
  it('refuses to start without a token: one line, exit 2, nothing started', async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'crawl-serve-'));
    try {
      for (const host of ['0.0.0.0', '::', '192.168.1.10']) {
        const r = await runCli(['serve', '--out', out, '--host', host, '--port', '0'], { NATS_URL: '', CRAWL_API_TOKEN: '' }, 30_000);
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`--host ${host.replace(/\./g, '\\.')} is reachable from other machines: give an API token`));
      }
      assert.equal(existsSync(path.join(out, 'nats')), false, 'no server was started');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
