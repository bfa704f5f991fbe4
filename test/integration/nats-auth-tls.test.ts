import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats, NatsConnectError, type NatsSecurity } from '../../pipeline/adapters/nats-connection.js';
import { runCli, startCli } from '../support/crawl-cli.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { hasOpenssl, makeNkeyUser, makeOperatorSetup, makeTlsFiles, startConfiguredNats, type ConfiguredNats } from '../support/secure-nats.js';

const PASSWORD = 'pw-Zq81-never-printed';
const TOKEN = 'tok-Hx55-never-printed';
/** variables of the test's own environment that would otherwise leak into the CLI's */
const CLEAN_ENV = { NATS_CREDS: '', NATS_NKEY: '', NATS_USER: '', NATS_PASSWORD: '', NATS_TOKEN: '', NATS_CA: '', NATS_CERT: '', NATS_KEY: '' };

async function connects(url: string, security: NatsSecurity): Promise<true | NatsConnectError> {
  try {
    const nc = await connectNats(url, 'auth-test', security);
    await jetstreamManager(nc).then((jsm) => jsm.getAccountInfo());
    await nc.close();
    return true;
  } catch (err) {
    if (err instanceof NatsConnectError) return err;
    throw err;
  }
}

/** `crawl topology apply` against `url` with `env`: the CLI's whole answer to a secret. */
const applyTopology = (url: string, env: NodeJS.ProcessEnv, args: string[] = []) =>
  runCli(['topology', 'apply', '--partitions', '2', ...args], { ...CLEAN_ENV, NATS_URL: url, ...env }, 60_000);

function assertOneLineRefusal(r: { code: number | null; stderr: string; stdout: string }, re: RegExp, secrets: string[]): void {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, `one line: ${r.stderr}`);
  assert.match(r.stderr, re);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  for (const s of secrets) assert.ok(!r.stderr.includes(s) && !r.stdout.includes(s), `the secret is not echoed: ${r.stderr}`);
}

// each case starts servers of its own (own directory, own port): three at a time, not one
// after another (one by one they took 81 s of a loaded integration run, mostly CLI start-ups)
describe('NATS authentication and TLS (real nats-server processes)', { concurrency: 3 }, () => {
  let dir: string;
  const servers: ConfiguredNats[] = [];
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-auth-'));
  });
  after(async () => {
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async (name: string, config: string[]) => {
    const s = await startConfiguredNats(path.join(dir, name), config);
    servers.push(s);
    return s;
  };

  it('user and password: the right ones connect; a wrong password is one line, exit 2, and quick', async () => {
    const s = await start('userpass', [`authorization { users = [ { user: crawler, password: ${JSON.stringify(PASSWORD)} } ] }`]);
    assert.equal(await connects(s.url, { user: 'crawler', password: PASSWORD }), true);
    const wrong = await connects(s.url, { user: 'crawler', password: 'not-it' });
    assert.ok(wrong instanceof NatsConnectError);
    assert.equal(wrong.kind, 'auth');
    assert.doesNotMatch(wrong.message, /not-it/);

    const ok = await applyTopology(s.url, { NATS_USER: 'crawler', NATS_PASSWORD: PASSWORD });
    assert.equal(ok.code, 0, ok.stderr);
    const pwFile = path.join(dir, 'pw.txt');
    writeFileSync(pwFile, `${PASSWORD}\n`);
    const viaFile = await applyTopology(s.url, {}, ['--nats-user', 'crawler', '--nats-password-file', pwFile]);
    assert.equal(viaFile.code, 0, viaFile.stderr);

    const started = Date.now();
    const bad = await applyTopology(s.url, { NATS_USER: 'crawler', NATS_PASSWORD: 'wrong-Pw-77' });
    assertOneLineRefusal(bad, /refused the credentials \(user crawler\): authorization violation/, ['wrong-Pw-77', PASSWORD]);
    assert.ok(Date.now() - started < 15_000, 'no reconnect loop');
    // no credentials at all, against a server that wants them
    assertOneLineRefusal(await applyTopology(s.url, {}), /refused the credentials \(no credentials\)/, [PASSWORD]);
  });

  it('every command that connects takes the credentials: a wrong password is the same one line for each', async () => {
    const s = await start('commands', [`authorization { users = [ { user: crawler, password: ${JSON.stringify(PASSWORD)} } ] }`]);
    const out = path.join(dir, 'commands-out');
    const commands = [['status'], ['streams'], ['dead-letters'], ['seed', 'http://a.example/'], ['worker', '--stage', 'persist'], ['replay', '--from', 'persist'], ['run', '--seed', 'http://a.example/'], ['serve', '--port', '0']];
    await Promise.all(
      commands.map(async (args) => {
        const r = await runCli([...args, '--out', out], { ...CLEAN_ENV, NATS_URL: s.url, NATS_USER: 'crawler', NATS_PASSWORD: 'wrong-Pw-55' }, 60_000);
        assertOneLineRefusal(r, /^crawl: NATS at nats:\/\/127\.0\.0\.1:\d+ refused the credentials \(user crawler\): authorization violation$/m, ['wrong-Pw-55']);
      }),
    );
  });

  it('a token: right connects, wrong is refused without echoing it', async () => {
    const s = await start('token', [`authorization { token: ${JSON.stringify(TOKEN)} }`]);
    assert.equal(await connects(s.url, { token: TOKEN }), true);
    assertOneLineRefusal(await applyTopology(s.url, { NATS_TOKEN: 'tok-wrong-31' }), /refused the credentials \(a token\)/, ['tok-wrong-31', TOKEN]);
    assert.equal((await applyTopology(s.url, { NATS_TOKEN: TOKEN })).code, 0);
  });

  it('an NKey seed file: the registered key connects, another key is refused', async () => {
    const keys = path.join(dir, 'nkeys');
    mkdirSync(keys);
    const good = makeNkeyUser(keys, 'good');
    const other = makeNkeyUser(keys, 'other');
    const s = await start('nkey', [`authorization { users = [ { nkey: ${good.publicKey} } ] }`]);
    assert.equal(await connects(s.url, { nkeySeedFile: good.seedFile }), true);
    assert.equal((await applyTopology(s.url, { NATS_NKEY: good.seedFile })).code, 0);
    const bad = await applyTopology(s.url, {}, ['--nats-nkey', other.seedFile]);
    assertOneLineRefusal(bad, /refused the credentials \(NKey seed file .*other\.nk\)/, []);
    // a seed file that is not one: said before connecting
    const junk = path.join(keys, 'junk.nk');
    writeFileSync(junk, 'hello\n');
    assertOneLineRefusal(await applyTopology(s.url, { NATS_NKEY: junk }), /holds no user seed/, []);
  });

  it('a creds file (operator mode, account with JetStream): works; one signed by a stranger is refused', async () => {
    const op = makeOperatorSetup(path.join(dir, 'operator'));
    const s = await start('operator', op.config);
    const creds = op.userCreds('crawler');
    assert.equal(await connects(s.url, { credsFile: creds }), true);
    const ok = await applyTopology(s.url, { NATS_CREDS: creds });
    assert.equal(ok.code, 0, ok.stderr);
    assertOneLineRefusal(await applyTopology(s.url, {}, ['--nats-creds', op.forgedCreds('forged')]), /refused the credentials \(credentials file .*forged\.creds\)/, []);
    assertOneLineRefusal(await applyTopology(s.url, { NATS_CREDS: path.join(dir, 'missing.creds') }), /reading the NATS credentials file .*missing\.creds: ENOENT/, []);
  });

  it('TLS with verified clients: CA and client certificate connect; no client certificate or an unknown CA fail in one line', { skip: !hasOpenssl() && 'openssl is not installed' }, async () => {
    const t = makeTlsFiles(path.join(dir, 'tls'));
    const s = await start('tls', [`tls { cert_file: ${JSON.stringify(t.serverCert)}, key_file: ${JSON.stringify(t.serverKey)}, ca_file: ${JSON.stringify(t.ca)}, verify: true, timeout: 2 }`]);
    assert.equal(await connects(s.url, { caFile: t.ca, certFile: t.clientCert, keyFile: t.clientKey }), true);
    const ok = await applyTopology(s.url, { NATS_CA: t.ca, NATS_CERT: t.clientCert, NATS_KEY: t.clientKey });
    assert.equal(ok.code, 0, ok.stderr);

    assertOneLineRefusal(await applyTopology(s.url, { NATS_CA: t.ca }), /the server verifies client certificates; give one with --nats-cert/, []);
    const unknownCa = await applyTopology(s.url, {}, ['--nats-ca', t.otherCa, '--nats-cert', t.clientCert, '--nats-key', t.clientKey]);
    assertOneLineRefusal(unknownCa, /TLS with NATS at nats:\/\/127\.0\.0\.1:\d+ failed \(TLS with a client certificate\): .*(certificate|self.signed)/i, []);
    assertOneLineRefusal(await applyTopology(s.url, { NATS_CERT: t.clientCert }), /a TLS client certificate needs its key/, []);
  });

  it('a password in NATS_URL is never printed', async () => {
    const s = await start('urlpass', [`authorization { users = [ { user: crawler, password: ${JSON.stringify(PASSWORD)} } ] }`]);
    const withPw = s.url.replace('nats://', `nats://crawler:${PASSWORD}@`);
    const ok = await applyTopology(withPw, {});
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(!ok.stdout.includes(PASSWORD) && !ok.stderr.includes(PASSWORD), ok.stdout);
    assert.match(ok.stdout, /topology applied on nats:\/\/127\.0\.0\.1:\d+/);
    const wrong = await applyTopology(s.url.replace('nats://', 'nats://crawler:bad-Url-Pw@'), {});
    assertOneLineRefusal(wrong, /refused the credentials/, ['bad-Url-Pw']);
  });

  it('a server that stops accepting the credentials mid-connection: the client gives up instead of reconnecting forever', async () => {
    const s = await start('revoke', [`authorization { users = [ { user: crawler, password: ${JSON.stringify(PASSWORD)} } ] }`]);
    const nc = await connectNats(s.url, 'revoke-test', { user: 'crawler', password: PASSWORD });
    // a server on the same port that knows another password (the password was rotated)
    await s.stop();
    servers.push(await startConfiguredNats(path.join(dir, 'revoke-2'), ['authorization { users = [ { user: crawler, password: "rotated-pw" } ] }'], { port: s.port }));
    const closed = await Promise.race([nc.closed(), new Promise((resolve) => setTimeout(() => resolve('still reconnecting'), 20_000))]);
    assert.notEqual(closed, 'still reconnecting');
    assert.match(String((closed as Error)?.message ?? closed), /authorization violation/i);
  });

  it('a worker whose password stops being accepted says so in one line and exits 2', async () => {
    const s = await start('revoke-cli', [`authorization { users = [ { user: crawler, password: ${JSON.stringify(PASSWORD)} } ] }`]);
    const env = { ...CLEAN_ENV, NATS_URL: s.url, NATS_USER: 'crawler', NATS_PASSWORD: PASSWORD, LOG_LEVEL: 'error' };
    assert.equal((await applyTopology(s.url, env)).code, 0);
    const out = path.join(dir, 'revoke-cli-out');
    const worker = startCli(['worker', '--stage', 'persist', '--out', out], env);
    await sleep(2000);
    assert.equal(worker.child.exitCode, null, 'the worker runs');
    await s.stop();
    servers.push(await startConfiguredNats(path.join(dir, 'revoke-cli-2'), ['authorization { users = [ { user: crawler, password: "rotated-pw" } ] }'], { port: s.port }));
    const timer = setTimeout(() => worker.child.kill('SIGKILL'), 30_000);
    const r = await worker.done;
    clearTimeout(timer);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^crawl: NATS at (nats:\/\/)?127\.0\.0\.1:\d+ refused the credentials \(user crawler\): authorization violation$/m);
    assert.ok(!r.stderr.includes(PASSWORD));
  });
});

