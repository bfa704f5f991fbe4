import { readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import {
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type Authenticator,
  type ConnectionOptions,
  type NatsConnection,
} from '@nats-io/transport-node';
import { waitForJetStream } from './jetstream-ready.js';
import { retryFor } from '../retry.js';
import { batchSocketWrites } from './nats-write-batching.js';
import { settleRequestsWithoutErrors } from './nats-request-settle.js';

/** `nats://a:4222,nats://b:4222` (as NATS_URL lists a cluster's servers) as the client's server list. */
export function natsServers(url: string): string[] {
  return url.split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * How a process proves who it is to NATS, and how it checks the server: at most one of
 * credentials file / NKey seed / user+password / token, plus TLS. Secrets are read here and
 * handed to the client only: none of them is ever part of a message, a log record or a
 * stored setting (see `describeNatsSecurity` for what may be said about them).
 */
export interface NatsSecurity {
  /** a `.creds` file: the user JWT and its NKey seed (operator/account mode) */
  credsFile?: string;
  /** a file holding an NKey user seed (`SU...`) */
  nkeySeedFile?: string;
  user?: string;
  password?: string;
  token?: string;
  /** CA certificate(s) that sign the server's certificate (PEM file) */
  caFile?: string;
  /** client certificate and key (PEM files), for servers that verify clients */
  certFile?: string;
  keyFile?: string;
}

/** Why a connection was refused, in words a person can act on; the secret itself never appears. */
export class NatsConnectError extends Error {
  override name = 'NatsConnectError';
  constructor(
    message: string,
    /** `auth`: the server refused the credentials; `tls`: the TLS handshake failed; `config`: a file could not be read; `unreachable`: anything else */
    readonly kind: 'auth' | 'tls' | 'config' | 'unreachable',
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A server URL without the user and password it may carry (`nats://u:p@host:4222` → `nats://host:4222`). */
export function redactUrl(url: string): string {
  return url
    .split(',')
    .map((u) => u.replace(/^(\s*(?:[a-z][a-z0-9+.-]*:\/\/)?)[^@/\s]*@/i, '$1'))
    .join(',');
}

function readSecretFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    // the path is not a secret; the contents would be, and a read error does not carry them
    throw new NatsConnectError(`reading the ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 'config', { cause: err });
  }
}

/** What the connection uses, for messages: kinds and file names, never a secret. */
export function describeNatsSecurity(s: NatsSecurity): string {
  const parts: string[] = [];
  if (s.credsFile) parts.push(`credentials file ${s.credsFile}`);
  if (s.nkeySeedFile) parts.push(`NKey seed file ${s.nkeySeedFile}`);
  if (s.user) parts.push(`user ${s.user}`);
  if (s.token) parts.push('a token');
  if (s.caFile || s.certFile) parts.push(`TLS${s.certFile ? ' with a client certificate' : ''}`);
  return parts.length > 0 ? parts.join(', ') : 'no credentials';
}

/** The client options for `s`: authenticators built from the files, TLS options. Throws NatsConnectError on an unreadable or malformed file. */
export function securityOptions(s: NatsSecurity): Partial<ConnectionOptions> {
  const ways = [s.credsFile, s.nkeySeedFile, s.user ?? s.password, s.token].filter((w) => w !== undefined).length;
  if (ways > 1) throw new NatsConnectError('give one way to authenticate to NATS: a credentials file, an NKey seed, a user and password, or a token', 'config');
  if ((s.user === undefined) !== (s.password === undefined)) throw new NatsConnectError('a NATS user needs its password, and a password its user', 'config');
  if ((s.certFile === undefined) !== (s.keyFile === undefined)) throw new NatsConnectError('a TLS client certificate needs its key, and a key its certificate', 'config');
  let authenticator: Authenticator | undefined;
  if (s.credsFile) {
    const creds = readSecretFile(s.credsFile, 'NATS credentials file');
    if (!/-----BEGIN NATS USER JWT-----/.test(creds) || !/-----BEGIN USER NKEY SEED-----/.test(creds)) {
      throw new NatsConnectError(`the NATS credentials file ${s.credsFile} holds no user JWT and seed`, 'config');
    }
    authenticator = credsAuthenticator(new TextEncoder().encode(creds));
  } else if (s.nkeySeedFile) {
    const seed = readSecretFile(s.nkeySeedFile, 'NKey seed file')
      .split('\n')
      .map((l) => l.trim())
      .find((l) => /^SU[A-Z2-7]{50,}$/.test(l));
    if (!seed) throw new NatsConnectError(`the NKey seed file ${s.nkeySeedFile} holds no user seed (a line starting SU)`, 'config');
    authenticator = nkeyAuthenticator(new TextEncoder().encode(seed));
  } else if (s.user !== undefined) {
    authenticator = usernamePasswordAuthenticator(s.user, s.password);
  } else if (s.token !== undefined) {
    authenticator = tokenAuthenticator(s.token);
  }
  const tls = s.caFile || s.certFile ? { ...(s.caFile ? { caFile: s.caFile } : {}), ...(s.certFile ? { certFile: s.certFile, keyFile: s.keyFile! } : {}) } : undefined;
  for (const [file, what] of [
    [s.caFile, 'TLS CA file'],
    [s.certFile, 'TLS certificate file'],
    [s.keyFile, 'TLS key file'],
  ] as const) {
    if (file) readSecretFile(file, what);
  }
  return { ...(authenticator ? { authenticator } : {}), ...(tls ? { tls } : {}) };
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL|EPROTO|HOSTNAME|ALTNAME/;

/** One line a person can act on, from whatever the client threw while connecting. */
export function classifyConnectError(err: unknown, where: string, s: NatsSecurity): NatsConnectError {
  if (err instanceof NatsConnectError) return err;
  const e = err as NodeJS.ErrnoException & { name?: string };
  const text = `${e?.name ?? ''} ${e?.code ?? ''} ${e?.message ?? String(err)}`;
  const cause = (e as { cause?: NodeJS.ErrnoException })?.cause;
  const causeText = cause ? `${cause.code ?? ''} ${cause.message ?? ''}` : '';
  if (e?.name === 'AuthorizationError' || /authorization violation|authentication/i.test(text)) {
    return new NatsConnectError(`NATS at ${where} refused the credentials (${describeNatsSecurity(s)}): authorization violation`, 'auth', { cause: err });
  }
  if (TLS_CODES.test(text) || TLS_CODES.test(causeText) || /tls|certificate|ssl/i.test(text)) {
    const detail = (cause?.message ?? e?.message ?? String(err)).split('\n')[0];
    return new NatsConnectError(`TLS with NATS at ${where} failed (${describeNatsSecurity(s)}): ${detail}`, 'tls', { cause: err });
  }
  return new NatsConnectError(`cannot reach the crawl's NATS server at ${where}: ${(e?.message ?? String(err)).split('\n')[0]}`, 'unreachable', { cause: err });
}

/** The handshake (TCP, TLS, CONNECT and its PONG) takes milliseconds; the client's default of 20 s only delays saying what is wrong. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Connects with unlimited reconnects: a stage outlives a server restart and resumes. Not so
 * after the server refuses the credentials twice in a row: the client then gives up (its
 * default `ignoreAuthErrorAbort: false`), and `nc.closed()` says why; a wrong secret never
 * turns into an endless reconnect loop. Given one server of a cluster, the client learns the
 * others from it (and reconnects to them when it goes away); NATS_URL may also list several,
 * comma-separated.
 * noAsyncTraces: the client otherwise builds an Error (with a stack trace) for every
 * request in case it fails; with a KV round trip per message that was a quarter of the CPU.
 * settleRequestsWithoutErrors: the same, for the Error it built after every successful reply.
 * Failures are NatsConnectError, whose message names the server without any password in its URL.
 */
export async function connectNats(url: string, name: string, security: NatsSecurity = {}): Promise<NatsConnection> {
  settleRequestsWithoutErrors();
  const where = redactUrl(url);
  const withUrlAuth = { ...urlCredentials(url, security), ...security };
  const secured = securityOptions(withUrlAuth);
  try {
    const nc = await connect({ servers: natsServers(where), name, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true, timeout: CONNECT_TIMEOUT_MS, ...secured });
    batchSocketWrites(nc);
    return nc;
  } catch (err) {
    const failure = classifyConnectError(err, where, withUrlAuth);
    // a server that verifies client certificates drops a TLS 1.3 client without one after the
    // handshake, and the client only sees a timeout: its INFO line says why
    if (failure.kind === 'unreachable' && !withUrlAuth.certFile && (await serverInfo(where.split(',')[0]!))?.tls_verify === true) {
      throw new NatsConnectError(`TLS with NATS at ${where} failed: the server verifies client certificates; give one with --nats-cert and --nats-key (NATS_CERT, NATS_KEY)`, 'tls', { cause: err });
    }
    throw failure;
  }
}

/** The server's INFO line (sent before any handshake), or null when it does not answer. */
async function serverInfo(url: string): Promise<{ tls_verify?: boolean; tls_required?: boolean; auth_required?: boolean } | null> {
  const { hostname, port } = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url.replace(/^[a-z][a-z0-9+.-]*:/i, 'nats:') : `nats://${url}`);
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || 4222) });
    let data = '';
    const done = (info: Record<string, unknown> | null) => {
      socket.destroy();
      resolve(info);
    };
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString();
      const line = /^INFO\s+(\{.*\})\s*\n/.exec(data);
      if (!line) return;
      try {
        done(JSON.parse(line[1]!) as Record<string, unknown>);
      } catch {
        done(null);
      }
    });
    socket.on('error', () => done(null));
    socket.setTimeout(2000, () => done(null));
  });
}

/**
 * The conventional `nats://user:password@host` and `nats://token@host` forms, which the
 * client does not read itself: used unless credentials were given another way.
 */
function urlCredentials(url: string, security: NatsSecurity): NatsSecurity {
  if (security.credsFile || security.nkeySeedFile || security.user !== undefined || security.token !== undefined) return {};
  const m = /^\s*(?:[a-z][a-z0-9+.-]*:\/\/)?([^@/\s]*)@/i.exec(url.split(',')[0] ?? '');
  if (!m || m[1] === '') return {};
  const [user, password] = m[1]!.split(':').map((p) => decodeURIComponent(p));
  return password !== undefined ? { user: user!, password } : { token: user! };
}

/** A permission the server denied this connection: `publish` or `subscription` to `subject`. */
export interface PermissionDenial {
  operation: string;
  subject: string;
  message: string;
}

/**
 * The denial a NATS client error stands for (the error itself or its cause), if it is one: the
 * same error reaches the connection's status and a publish the server refused, in either order.
 */
export function permissionDenialOf(error: unknown): PermissionDenial | undefined {
  for (let e = error as (Error & { operation?: string; subject?: string }) | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.name !== 'PermissionViolationError') continue;
    return {
      operation: e.operation ?? 'publish',
      subject: e.subject ?? '',
      message: `permission denied: this NATS user may not ${e.operation === 'subscription' ? 'subscribe to' : 'publish to'} ${e.subject ?? '(a subject)'}`,
    };
  }
  return undefined;
}

/**
 * Reports every permission the server denies, as one line that names the operation and the
 * subject, and how the connection ended if it was refused its credentials. A denied publish
 * is otherwise seen only as a JetStream publish timeout: the server drops the message and
 * says why on the connection, not to the request.
 */
export function watchNatsConnection(
  nc: NatsConnection,
  on: { denied?: (d: PermissionDenial) => void; closedByServer?: (message: string) => void },
  security: NatsSecurity = {},
): { last(subject?: string): PermissionDenial | undefined } {
  const denials: PermissionDenial[] = [];
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type !== 'error') continue;
      const d = permissionDenialOf(s.error);
      if (!d) continue;
      denials.push(d);
      if (denials.length > 100) denials.shift();
      on.denied?.(d);
    }
  })().catch(() => undefined);
  void nc.closed().then((err) => {
    if (err) on.closedByServer?.(classifyConnectError(err, redactUrl(nc.getServer()), security).message);
  });
  return {
    last: (subject) => [...denials].reverse().find((d) => subject === undefined || d.subject === subject || d.subject.startsWith(`${subject}.`)),
  };
}

/**
 * How long a process that joins a crawl waits for JetStream before giving up: a cluster that
 * lost a server elects new leaders within seconds, and a worker started meanwhile should wait
 * for that rather than fail.
 */
export const JETSTREAM_WAIT_MS = 60_000;

/** Waits (up to JETSTREAM_WAIT_MS) until JetStream answers on `nc`, saying so once on stderr if it has to; closes `nc` when it gives up. */
export async function awaitJetStream(nc: NatsConnection, name: string): Promise<NatsConnection> {
  try {
    await waitForJetStream(nc, JETSTREAM_WAIT_MS, (why) => process.stderr.write(`${name}: waiting for JetStream (${why}); a cluster elects its leaders after losing a server\n`));
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
  return nc;
}

/** connectNats, then awaitJetStream. */
export async function connectJetStream(url: string, name: string, security: NatsSecurity = {}): Promise<NatsConnection> {
  return awaitJetStream(await connectNats(url, name, security), name);
}

/**
 * Whether a failed JetStream request may succeed if tried again shortly: a timeout, no
 * responders, JetStream not (yet) enabled on the server asked. A cluster answers so while
 * it elects a stream's or a consumer's leader, after `waitForJetStream` has returned too.
 */
export function isTransientJetStreamError(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: unknown };
  if (e?.name === 'TimeoutError' || e?.name === 'NoRespondersError') return true;
  const message = String(e?.message ?? '');
  return /\btimeout\b|no responders|jetstream is not enabled|jetstream not enabled|\b503\b/i.test(message) || String(e?.code) === '503';
}

/**
 * Runs `start` again while it fails with a transient JetStream error, until `timeoutMs` has
 * passed: a worker started while the cluster is still electing leaders waits for them rather
 * than exiting. `start` must leave nothing running when it throws.
 */
export function retryWhileElecting<T>(start: () => Promise<T>, timeoutMs: number, onRetry?: (why: string) => void): Promise<T> {
  return retryFor(start, timeoutMs, { retryable: isTransientJetStreamError, ...(onRetry ? { onRetry } : {}) });
}
