import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiToken, isLoopbackHost } from '../../cli/api-access.js';
import { bearerMatches } from '../../app/service/http-api.js';
import { seedGuard } from '../../app/service/seed-guard.js';
import { parseSettings } from '../../pipeline/settings.js';
import { natsSecurityFrom } from '../../cli/nats-options.js';
import { describeNatsSecurity, redactUrl, securityOptions } from '../../pipeline/adapters/nats-connection.js';

describe('crawl serve: who may call the API', () => {
  test('loopback addresses, and the ones that are not', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) assert.equal(isLoopbackHost(h), true, h);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.5', 'example.com', 'crawler.internal', '::ffff:10.0.0.1']) assert.equal(isLoopbackHost(h), false, h);
  });

  test('outside loopback the service needs a token; a short one is refused; a file or CRAWL_API_TOKEN gives it', () => {
    assert.throws(() => apiToken({ host: '0.0.0.0' }, {}), /--host 0\.0\.0\.0 is reachable from other machines: give an API token/);
    assert.equal(apiToken({ host: '127.0.0.1' }, {}), undefined);
    assert.throws(() => apiToken({ host: '0.0.0.0' }, { CRAWL_API_TOKEN: 'short' }), /too short: at least 16/);
    assert.equal(apiToken({ host: '0.0.0.0' }, { CRAWL_API_TOKEN: 'a'.repeat(32) }), 'a'.repeat(32));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-token-'));
    try {
      writeFileSync(path.join(dir, 't'), `${'b'.repeat(20)}\n`);
      assert.equal(apiToken({ host: '::', apiTokenFile: path.join(dir, 't') }, { CRAWL_API_TOKEN: 'c'.repeat(20) }), 'b'.repeat(20), 'the file wins over the variable');
      assert.throws(() => apiToken({ host: '::', apiTokenFile: path.join(dir, 'none') }, {}), /--api-token-file: cannot read .*: ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a Bearer token matches only itself', () => {
    const t = 'tok-0123456789abcdef';
    assert.equal(bearerMatches(`Bearer ${t}`, t), true);
    assert.equal(bearerMatches(`bearer ${t}`, t), true);
    for (const h of [undefined, '', t, `Bearer ${t}x`, `Bearer ${t.slice(0, -1)}`, `Basic ${t}`, 'Bearer ']) assert.equal(bearerMatches(h, t), false, String(h));
  });
});

describe('job seeds: the crawl SSRF guard and scope rules apply at creation', () => {
  const settings = parseSettings({ crawlId: 't', resolve: ['*.site.test=127.0.0.1:9999'], exclude: ['*/private/*'] });
  const dns: Record<string, string[]> = { 'intranet.example': ['10.1.2.3'], 'public.example': ['93.184.216.34'], 'rebind.example': ['93.184.216.34', '169.254.169.254'] };
  const lookup = async (host: string) => {
    const a = dns[host];
    if (!a) throw new Error('ENOTFOUND');
    return a;
  };
  const guard = seedGuard(settings, lookup);

  for (const [seed, expected] of [
    ['http://10.0.0.5/', /refused to connect to 10\.0\.0\.5: private address \(allow it with --allow-network\)/],
    ['http://127.0.0.1:8080/', /loopback address/],
    ['http://169.254.169.254/latest/meta-data/', /link-local address/],
    ['http://[::1]/', /loopback/],
    ['http://[::ffff:10.0.0.1]/', /private \(in IPv6 form\)/],
    ['http://localhost:3000/', /loopback address/],
    ['http://db.localhost/', /loopback address/],
    ['http://intranet.example/', /intranet\.example resolves to 10\.1\.2\.3: refused to connect to 10\.1\.2\.3: private address/],
    ['http://rebind.example/', /resolves to 169\.254\.169\.254/],
    ['http://public.example/private/x', /excluded by the service's --exclude pattern/],
    ['http://public.example/', null],
    ['http://93.184.216.34/', null],
    ['http://h01.site.test/', null],
    ['http://does-not-resolve.example/', null],
  ] as const) {
    test(`${seed} → ${expected === null ? 'accepted' : String(expected)}`, async () => {
      const why = await guard(seed);
      if (expected === null) assert.equal(why, null);
      else assert.match(why ?? '(accepted)', expected);
    });
  }

  test('--allow-network on the service lets a private network in', async () => {
    const open = seedGuard(parseSettings({ crawlId: 't', allowNetworks: ['10.0.0.0/8'] }), lookup);
    assert.equal(await open('http://10.0.0.5/'), null);
    assert.equal(await open('http://intranet.example/'), null);
    assert.match((await open('http://192.168.0.1/')) ?? '', /private address/);
  });
});

describe('NATS credentials: flags, environment, and what may be said about them', () => {
  test('a flag overrides its variable; a flag-named way of authenticating ignores the environment\'s others', () => {
    assert.deepEqual(natsSecurityFrom({}, { NATS_USER: 'u', NATS_PASSWORD: 'p', NATS_CA: '/ca.pem' }), { user: 'u', password: 'p', caFile: '/ca.pem' });
    assert.deepEqual(natsSecurityFrom({ natsCreds: '/a.creds' }, { NATS_TOKEN: 't', NATS_CREDS: '/b.creds' }), { credsFile: '/a.creds' });
    assert.deepEqual(natsSecurityFrom({ natsUser: 'v' }, { NATS_USER: 'u', NATS_PASSWORD: 'p' }), { user: 'v', password: 'p' });
    assert.deepEqual(natsSecurityFrom({}, { NATS_TOKEN: '', NATS_NKEY: '/s.nk' }), { nkeySeedFile: '/s.nk' }, 'an empty variable is unset');
  });

  test('two ways at once, a user without password, a certificate without key: refused before connecting', () => {
    assert.throws(() => securityOptions({ user: 'u', password: 'p', token: 't' }), /give one way to authenticate/);
    assert.throws(() => securityOptions({ user: 'u' }), /needs its password/);
    assert.throws(() => securityOptions({ certFile: '/c.pem' }), /needs its key/);
  });

  test('descriptions and URLs carry no secret', () => {
    const d = describeNatsSecurity({ user: 'crawler', password: 'hunter2', token: 'tok', caFile: '/ca.pem' });
    assert.doesNotMatch(d, /hunter2|tok\b/);
    assert.equal(redactUrl('nats://crawler:hunter2@10.0.0.1:4222'), 'nats://10.0.0.1:4222');
    assert.equal(redactUrl('tls://s3cret@a:4222,nats://u:p@b:4222'), 'tls://a:4222,nats://b:4222');
    assert.equal(redactUrl('nats://127.0.0.1:4222'), 'nats://127.0.0.1:4222');
  });
});
