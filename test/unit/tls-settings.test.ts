// The TLS flags as a crawl stores them: --ca-file is read and checked at start and its
// certificates travel in the settings (a worker on another machine reads them from the
// crawl-config bucket, not from a path it may not have); --insecure-host and --no-http2.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rootCertificates } from 'node:tls';
import { mergeSettings, type SettingsFlags } from '../../cli/settings-flags.js';
import { UsageError } from '../../cli/usage-error.js';
import { parseSettings } from '../../pipeline/settings.js';
import { connectTls } from '../../pipeline/adapters/http/tls-options.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'tls-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const flags = (o: Partial<SettingsFlags>): SettingsFlags => ({ resolve: [], include: [], exclude: [], ...o });
// two real CA certificates (Node's own list), in a bundle with a comment line between, as bundles have
const BUNDLE = `# two CAs\n${rootCertificates[0]}\n${rootCertificates[1]}\n`;

test('--ca-file: the certificates travel in the settings, and a worker reading them back gets the same', () => {
  const ca = file('bundle.pem', BUNDLE);
  const s = mergeSettings(null, flags({ caFile: [ca] }));
  assert.equal(s.caCerts.length, 1);
  assert.equal(s.caCerts[0]!.file, ca);
  assert.equal(s.caCerts[0]!.pem.match(/-----BEGIN CERTIFICATE-----/g)?.length, 2, 'both certificates, the comment left out');
  assert.deepEqual(parseSettings(JSON.parse(JSON.stringify(s))).caCerts, s.caCerts, 'as crawl worker reads them from crawl-config');
  // resumed without the flag: kept; given again: replaced
  assert.deepEqual(mergeSettings(s, flags({})).caCerts, s.caCerts);
  assert.equal(mergeSettings(s, flags({ caFile: [file('one.pem', rootCertificates[2]!)] })).caCerts[0]!.pem.match(/BEGIN CERTIFICATE/g)?.length, 1);
});

test('--ca-file: a file that is missing, holds no certificate or a broken one is a usage error naming it', () => {
  const cases: Array<[string, RegExp]> = [
    [path.join(dir, 'missing.pem'), /^cannot read --ca-file .*missing\.pem: ENOENT/],
    [file('key.pem', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'), /^--ca-file .*key\.pem: no PEM certificate in it/],
    [file('broken.pem', `${rootCertificates[0]}\n-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n`), /^--ca-file .*broken\.pem: certificate 2 of 2 does not parse/],
  ];
  for (const [p, message] of cases) {
    assert.throws(() => mergeSettings(null, flags({ caFile: [p] })), (err: Error) => err instanceof UsageError && message.test(err.message), p);
  }
});

test('--ca-file: more certificates than the settings can carry are refused at start', () => {
  const huge = file('huge.pem', rootCertificates.join('\n').repeat(3));
  assert.throws(() => mergeSettings(null, flags({ caFile: [huge] })), (err: Error) => err instanceof UsageError && /more than the 524288 the crawl's settings can carry/.test(err.message));
});

test('--insecure-host: names, *.domain and * are kept (lowercased); anything else is a usage error', () => {
  assert.deepEqual(mergeSettings(null, flags({ insecureHost: ['Intranet.Example', '*.corp.example', '*'] })).insecureHosts, ['intranet.example', '*.corp.example', '*']);
  for (const bad of ['https://x.example/', 'x.*.example', '', 'a b']) {
    assert.throws(() => mergeSettings(null, flags({ insecureHost: [bad] })), (err: Error) => err instanceof UsageError && err.message.startsWith('invalid --insecure-host'), bad);
  }
  assert.deepEqual(mergeSettings(null, flags({})).insecureHosts, [], 'verification on everywhere by default');
});

test('--no-http2 turns HTTP/2 off; a resumed crawl keeps what it was started with', () => {
  const on = mergeSettings(null, flags({}));
  assert.equal(on.http2, true);
  const off = mergeSettings(null, flags({ http2: false }));
  assert.equal(off.http2, false);
  // commander gives http2: true when --no-http2 is absent: the stored choice stands
  assert.equal(mergeSettings(off, flags({ http2: true })).http2, false);
});

test('which hosts --insecure-host exempts: the name, or one or more labels under *.domain, or every host with *', () => {
  const keyFor = (patterns: string[], host: string) => connectTls({ caPems: [], insecureHosts: patterns })(host).key;
  assert.equal(keyFor(['*.corp.example'], 'wiki.corp.example'), 'unverified');
  assert.equal(keyFor(['*.corp.example'], 'A.B.CORP.EXAMPLE.'), 'unverified');
  assert.equal(keyFor(['*.corp.example'], 'corp.example'), 'verified', 'the wildcard needs a label under it');
  assert.equal(keyFor(['*.corp.example'], 'evilcorp.example'), 'verified');
  assert.equal(keyFor(['intranet.example'], 'intranet.example'), 'unverified');
  assert.equal(keyFor(['intranet.example'], 'www.intranet.example'), 'verified');
  assert.equal(keyFor(['*'], '10.0.0.1'), 'unverified');
  assert.equal(keyFor([], 'anything.example'), 'verified');
  // with extra CAs, one context made once for every connection; without, Node's default store as it is
  const withCa = connectTls({ caPems: [rootCertificates[0]!], insecureHosts: ['*.corp.example'] });
  assert.ok(withCa('x.example').options.secureContext);
  assert.equal(withCa('x.example').options.secureContext, withCa('y.example').options.secureContext);
  assert.equal(withCa('a.corp.example').options.secureContext, withCa('x.example').options.secureContext);
  assert.equal(connectTls({ caPems: [], insecureHosts: [] })('x.example').options.secureContext, undefined);
});
