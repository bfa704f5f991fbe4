/**
 * nats-server processes with authentication, permissions and TLS, for the security tests:
 * certificates made with openssl, NKeys with @nats-io/nkeys, and an operator/account/user
 * JWT chain (creds files) signed here, so no `nsc` is needed. Everything lives in a temp dir
 * and listens on loopback only.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAccount, createOperator, createUser, type KeyPair } from '@nats-io/nkeys';
import { findNatsServer, freePort } from '../../ops/nats/embedded-server.js';

export interface ConfiguredNats {
  url: string;
  port: number;
  /** what nats-server printed (its log), for asserting on permission violations */
  log(): string;
  stop(): Promise<void>;
}

/** Whether the server answers with its INFO line (no client handshake: that would need the credentials). */
async function answersInfo(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    let data = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.on('data', (chunk) => {
      data += chunk.toString();
      if (data.includes('INFO ')) done(true);
    });
    socket.on('error', () => done(false));
    socket.setTimeout(1000, () => done(false));
  });
}

/**
 * nats-server with JetStream under `dir`, on a free loopback port, with `config` (auth,
 * accounts, tls blocks) added to its configuration file.
 */
export async function startConfiguredNats(dir: string, config: string[], opts: { jetstream?: boolean; port?: number } = {}): Promise<ConfiguredNats> {
  mkdirSync(dir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const file = path.join(dir, 'nats-server.conf');
  writeFileSync(
    file,
    [
      `listen: "127.0.0.1:${port}"`,
      ...(opts.jetstream === false ? [] : [`jetstream { store_dir: ${JSON.stringify(path.join(dir, 'js'))}, max_memory_store: 67108864 }`]),
      ...config,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(findNatsServer(), ['-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-200_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const deadline = Date.now() + 15_000;
  while (!(await answersInfo(port))) {
    if (exited) throw new Error(`nats-server exited: ${log.trim().split('\n').slice(-3).join(' | ')}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nats-server on ${port}: not ready after 15 s (${log.slice(-300)})`);
    }
    await sleep(50);
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    log: () => log,
    async stop() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(timer);
    },
  };
}

export interface TlsFiles {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** a CA that signed none of these: a client trusting only it must refuse the server */
  otherCa: string;
}

/** A CA, a server certificate for 127.0.0.1/localhost and a client certificate, made with openssl. */
export function makeTlsFiles(dir: string): TlsFiles {
  mkdirSync(dir, { recursive: true });
  const f = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ca = (name: string) => {
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.pem`));
  };
  ca('test-ca');
  ca('other-ca');
  const signed = (name: string, ext: string) => {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`));
    writeFileSync(f(`${name}.ext`), ext);
    ssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('test-ca.pem'), '-CAkey', f('test-ca.key'), '-CAcreateserial', '-days', '2', '-extfile', f(`${name}.ext`), '-out', f(`${name}.pem`));
  };
  signed('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  signed('client', 'extendedKeyUsage=clientAuth\n');
  return {
    ca: f('test-ca.pem'),
    serverCert: f('server.pem'),
    serverKey: f('server.key'),
    clientCert: f('client.pem'),
    clientKey: f('client.key'),
    otherCa: f('other-ca.pem'),
  };
}

export const hasOpenssl = (): boolean => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** An NKey user: its public key (for the server's config) and the seed file a client reads. */
export function makeNkeyUser(dir: string, name: string): { publicKey: string; seedFile: string } {
  const kp = createUser();
  const seedFile = path.join(dir, `${name}.nk`);
  writeFileSync(seedFile, new TextDecoder().decode(kp.getSeed()) + '\n', { mode: 0o600 });
  return { publicKey: kp.getPublicKey(), seedFile };
}

// --- operator mode: JWTs as nats-server reads them (header, claims, ed25519 signature by the issuer's NKey)

const b64url = (data: Uint8Array | string) => Buffer.from(data).toString('base64url');

function signJwt(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const claims: Record<string, unknown> = { jti: '', iat: Math.floor(Date.now() / 1000), iss: issuer.getPublicKey(), name, sub: subject, nats: { ...nats, version: 2 } };
  // the id is a hash of the claims, base32 as the Go library writes it (the server does not check it)
  claims.jti = createHash('sha256').update(JSON.stringify(claims)).digest('hex').slice(0, 52).toUpperCase();
  const payload = b64url(JSON.stringify(claims));
  const sig = issuer.sign(new TextEncoder().encode(`${header}.${payload}`));
  return `${header}.${payload}.${b64url(sig)}`;
}

const UNLIMITED = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };

export interface Permissions {
  pub?: { allow?: string[]; deny?: string[] };
  sub?: { allow?: string[]; deny?: string[] };
}

export interface OperatorSetup {
  /** lines for the server's configuration: operator, system account, in-memory resolver with the accounts */
  config: string[];
  /** a creds file for a new user of the crawl account with these permissions (all when none given) */
  userCreds(name: string, permissions?: Permissions): string;
  /** a creds file signed by a key that is not the account's: the server must refuse it */
  forgedCreds(name: string): string;
}

/** An operator, a system account and a `CRAWL` account with JetStream, resolved from memory. */
export function makeOperatorSetup(dir: string): OperatorSetup {
  mkdirSync(dir, { recursive: true });
  const operator = createOperator();
  const system = createAccount();
  const crawl = createAccount();
  const operatorJwt = signJwt(operator, operator.getPublicKey(), 'test-operator', { type: 'operator', system_account: system.getPublicKey() });
  const systemJwt = signJwt(operator, system.getPublicKey(), 'SYS', { type: 'account', limits: { ...UNLIMITED } });
  const crawlJwt = signJwt(operator, crawl.getPublicKey(), 'CRAWL', {
    type: 'account',
    limits: { ...UNLIMITED, mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 },
  });
  const operatorFile = path.join(dir, 'operator.jwt');
  writeFileSync(operatorFile, operatorJwt);
  const creds = (name: string, signer: KeyPair, permissions: Permissions = {}) => {
    const user = createUser();
    const jwt = signJwt(signer, user.getPublicKey(), name, { type: 'user', ...permissions, subs: -1, data: -1, payload: -1 });
    const file = path.join(dir, `${name}.creds`);
    writeFileSync(
      file,
      [
        '-----BEGIN NATS USER JWT-----',
        jwt,
        '------END NATS USER JWT------',
        '',
        '-----BEGIN USER NKEY SEED-----',
        new TextDecoder().decode(user.getSeed()),
        '------END USER NKEY SEED------',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    return file;
  };
  return {
    config: [
      `operator: ${JSON.stringify(operatorFile)}`,
      `system_account: ${system.getPublicKey()}`,
      'resolver: MEMORY',
      `resolver_preload: { ${system.getPublicKey()}: ${JSON.stringify(systemJwt)}, ${crawl.getPublicKey()}: ${JSON.stringify(crawlJwt)} }`,
    ],
    userCreds: (name, permissions) => creds(name, crawl, permissions),
    forgedCreds: (name) => creds(name, createAccount()),
  };
}

/** A child process's environment that connects to `url` as `user` with `password`, and with no other credential inherited from the test's own environment. */
export function roleEnv(url: string, user: string, password: string): NodeJS.ProcessEnv {
  return { NATS_URL: url, NATS_USER: user, NATS_PASSWORD: password, NATS_TOKEN: '', NATS_CREDS: '', NATS_NKEY: '', LOG_LEVEL: 'warn' };
}
