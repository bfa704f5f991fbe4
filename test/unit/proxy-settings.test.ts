/**
 * The proxy as a crawl is told about it: the URL forms, the NO_PROXY list as curl reads it, the
 * environment convention and its precedence, and credentials that never reach the settings.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NoProxyList, parseProxyUrl, proxyRouter, splitNoProxy } from '../../pipeline/adapters/http/proxy-config.js';
import { proxyCredentialsFor, proxySettingsFrom } from '../../cli/proxy-options.js';
import { mergeSettings, type SettingsFlags } from '../../cli/settings-flags.js';
import { parseSettings } from '../../pipeline/settings.js';

const flags = (over: Partial<SettingsFlags> = {}): SettingsFlags => ({ resolve: [], include: [], exclude: [], ...over });

describe('proxy URLs', () => {
  test('the accepted forms: the port defaults to the scheme’s, credentials come apart', () => {
    const cases: Array<[string, string, { user: string; password: string } | null]> = [
      ['http://proxy.example:3128', 'http://proxy.example:3128/', null],
      ['http://proxy.example', 'http://proxy.example/', null],
      ['proxy.example:8080', 'http://proxy.example:8080/', null],
      ['https://proxy.example/', 'https://proxy.example/', null],
      ['http://[::1]:3128', 'http://[::1]:3128/', null],
      ['http://us%40r:p%3Ass@proxy.example:3128', 'http://proxy.example:3128/', { user: 'us@r', password: 'p:ss' }],
    ];
    for (const [raw, href, credentials] of cases) {
      const p = parseProxyUrl(raw, '--proxy');
      assert.equal(p.url.href, href, raw);
      assert.deepEqual(p.credentials, credentials, raw);
    }
  });

  test('bad values are refused with the reason, and a password is never repeated', () => {
    assert.throws(() => parseProxyUrl('socks5://proxy:1080', '--proxy'), /socks5 proxies are not supported/);
    assert.throws(() => parseProxyUrl('http://proxy:3128/path', '--proxy'), /no path or query/);
    assert.throws(() => parseProxyUrl('http://u:secretPw@proxy:3128/x', 'HTTPS_PROXY'), (err: Error) => {
      assert.match(err.message, /^invalid HTTPS_PROXY "http:\/\/\*\*\*@proxy:3128\/x"/);
      assert.ok(!err.message.includes('secretPw'));
      return true;
    });
  });
});

describe('NO_PROXY', () => {
  test('entries as curl and undici read them', () => {
    const list = new NoProxyList(splitNoProxy('example.org, .internal.test *.corp.test  only-8080.test:8080,10.0.0.0/8,192.0.2.7,[::1],2001:db8::/32'));
    const cases: Array<[string, number, boolean]> = [
      ['example.org', 80, true],
      ['www.example.org', 443, true],
      ['notexample.org', 80, false],
      ['internal.test', 80, true],
      ['a.b.internal.test', 80, true],
      ['corp.test', 80, true],
      ['x.corp.test', 80, true],
      ['only-8080.test', 8080, true],
      ['only-8080.test', 80, false],
      ['10.1.2.3', 80, true],
      ['11.1.2.3', 80, false],
      ['192.0.2.7', 80, true],
      ['[::1]', 80, true],
      ['[2001:db8::5]', 443, true],
      ['EXAMPLE.ORG.', 80, true],
      ['other.test', 80, false],
    ];
    for (const [host, port, direct] of cases) assert.equal(list.matches(host, port), direct, `${host}:${port}`);
    assert.equal(new NoProxyList(['*']).matches('anything.test', 80), true);
    assert.equal(new NoProxyList([]).matches('anything.test', 80), false);
  });

  test('the router: each scheme its proxy, the list bypasses it, credentials by proxy origin', () => {
    const route = proxyRouter(
      { httpProxy: 'http://p1.test:3128', httpsProxy: 'http://p2.test:3129', noProxy: ['direct.test'] },
      new Map([['http://p2.test:3129', { user: 'u', password: 'pw' }]]),
    )!;
    assert.equal(route('http:', 'a.test', 80)?.url.host, 'p1.test:3128');
    assert.equal(route('http:', 'a.test', 80)?.authorization, null);
    assert.equal(route('https:', 'a.test', 443)?.url.host, 'p2.test:3129');
    assert.equal(route('https:', 'a.test', 443)?.authorization, `Basic ${Buffer.from('u:pw').toString('base64')}`);
    assert.equal(route('https:', 'www.direct.test', 443), null);
    assert.equal(proxyRouter({ httpProxy: null, httpsProxy: null, noProxy: [] }), null);
    const httpsOnly = proxyRouter({ httpProxy: null, httpsProxy: 'http://p2.test:3129', noProxy: [] })!;
    assert.equal(httpsOnly('http:', 'a.test', 80), null, 'http:// URLs go direct when only HTTPS_PROXY is set (as curl)');
  });
});

describe('the proxy flags and the environment', () => {
  test('--proxy wins over the environment; each scheme has its variable, lowercase first; credentials stay out', () => {
    const env = { HTTPS_PROXY: 'http://u:envPw@upper.test:1', https_proxy: 'http://u:envPw@lower.test:2', HTTP_PROXY: 'http://plain.test:3', NO_PROXY: 'a.test,b.test' };
    assert.deepEqual(proxySettingsFrom({}, env), { httpsProxy: 'http://lower.test:2', httpProxy: 'http://plain.test:3', noProxy: ['a.test', 'b.test'] });
    assert.deepEqual(proxySettingsFrom({ proxy: 'http://flag.test:8080', noproxy: ['c.test, d.test', 'e.test'] }, env), {
      httpProxy: 'http://flag.test:8080',
      httpsProxy: 'http://flag.test:8080',
      noProxy: ['c.test', 'd.test', 'e.test'],
    });
    assert.deepEqual(proxySettingsFrom({}, {}), {});
  });

  test('credentials in --proxy are refused (a command line shows in ps), without repeating them', () => {
    assert.throws(() => proxySettingsFrom({ proxy: 'http://u:flagPw@proxy.test:3128' }, {}), (err: Error) => {
      assert.match(err.message, /credentials in a flag's value show in `ps`/);
      assert.ok(!err.message.includes('flagPw'));
      return true;
    });
    assert.throws(() => proxySettingsFrom({}, { HTTP_PROXY: 'ftp://proxy.test' }), /invalid HTTP_PROXY "ftp:\/\/proxy.test": ftp proxies are not supported/);
  });

  test('mergeSettings: the environment is a flag; a resumed crawl keeps its proxy unless told otherwise; no credentials stored', () => {
    const env = { HTTPS_PROXY: 'http://user:envPw@proxy.test:3128', HTTP_PROXY: 'http://user:envPw@proxy.test:3128' };
    const first = mergeSettings(null, flags(), env);
    assert.equal(first.httpProxy, 'http://proxy.test:3128');
    assert.equal(first.httpsProxy, 'http://proxy.test:3128');
    assert.ok(!JSON.stringify(first).includes('envPw'));
    const resumed = mergeSettings(first, flags(), {});
    assert.equal(resumed.httpsProxy, 'http://proxy.test:3128', 'kept when nothing says otherwise');
    assert.deepEqual(mergeSettings(first, flags({ noproxy: ['*'] }), {}).noProxy, ['*']);
    assert.equal(mergeSettings(null, flags(), {}).httpProxy, null, 'no proxy by default');
    assert.throws(() => parseSettings({ crawlId: 'c', httpProxy: 'http://u:p@proxy.test:3128' }), /carries no credentials/);
  });

  test("a process's credentials: the file's for every proxy, else the environment's for the same proxy", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'proxy-cred-'));
    const file = path.join(dir, 'cred');
    writeFileSync(file, 'fileUser:file:Pw\n');
    const settings = { httpProxy: 'http://proxy.test:3128', httpsProxy: 'http://other.test:3129' };
    assert.deepEqual(
      [...proxyCredentialsFor(settings, file, {})],
      [
        ['http://proxy.test:3128', { user: 'fileUser', password: 'file:Pw' }],
        ['http://other.test:3129', { user: 'fileUser', password: 'file:Pw' }],
      ],
    );
    const env = { HTTPS_PROXY: 'http://envUser:envPw@other.test:3129', HTTP_PROXY: 'http://x:y@elsewhere.test:1' };
    assert.deepEqual([...proxyCredentialsFor(settings, undefined, env)], [['http://other.test:3129', { user: 'envUser', password: 'envPw' }]]);
    writeFileSync(file, 'no colon here\n');
    assert.throws(() => proxyCredentialsFor(settings, file, {}), /expected one line USER:PASSWORD/);
    assert.throws(() => proxyCredentialsFor({ httpProxy: null, httpsProxy: null }, file, {}), /the crawl uses no proxy/);
    assert.throws(() => proxyCredentialsFor(settings, path.join(dir, 'missing'), {}), /cannot read --proxy-credentials-file .*ENOENT/);
  });
});
