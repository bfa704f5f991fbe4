/**
 * Where a connection goes, and whether it may: the addresses of `--resolve` rules first (the
 * user's choice, never refused), else the host's IP literal or DNS answers, each checked by
 * the SSRF guard before any connection is attempted (connect-targets.ts); the socket a direct
 * connection ends up on is checked once more. Several addresses (A and AAAA, or a rule naming
 * several) are raced as happy eyeballs (connect-race.ts): the next is tried when one does not
 * connect. Through a proxy, each attempt is a CONNECT to a checked address (proxy-tunnel.ts);
 * the proxy's own address is not the guard's business.
 *
 * `--resolve` rules are applied at connection time only: only the TCP target changes. The
 * undici origin (and therefore the Host header, TLS servername, pool key and URL) stays
 * `http://h01.site.test`, so virtual hosting keeps working.
 */
import net, { type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { buildConnector, errors } from 'undici';
import { RefusedAddressError } from '../address-policy.js';
import type { AddressHealth } from '../address-health.js';
import { preferAddress, type ConnectTarget, type ConnectTargets } from '../connect-targets.js';
import { DnsCache } from '../dns-cache.js';
import { raceConnect } from './connect-race.js';
import { markConnectedAddress } from './exchange-tap.js';
import type { ProxyEndpoint } from './proxy-config.js';
import type { ConnectTls } from './tls-options.js';
import { authorityOf, openTunnel, ProxyRefusedError, ProxyUnreachableError } from './proxy-tunnel.js';

export type { Guard } from '../connect-targets.js';

/** RFC 8305's recommended Connection Attempt Delay. */
export const ATTEMPT_DELAY_MS = 250;

/**
 * TLS sessions kept for resumption, one per host name (undici keeps 100): a crawl goes back
 * to many more hosts than that, and a resumed handshake skips the certificate exchange and
 * its verification. A session is a few KB.
 */
const TLS_SESSIONS_CACHED = 2000;

/** One DNS cache per process unless the caller brings its own. */
let sharedDnsCache: DnsCache | null = null;
export function defaultDnsCache(): DnsCache {
  sharedDnsCache ??= new DnsCache({ minTtlMs: 60_000, maxTtlMs: 3_600_000, negativeTtlMs: 30_000 });
  return sharedDnsCache;
}

export interface ConnectorOptions {
  targets: ConnectTargets;
  health: AddressHealth;
  /** why the guard refuses the address a direct connection's socket ended up on, or null (always null with the guard off) */
  recheck: (address: string) => string | null;
  /** the proxy a connection to this URL origin goes through; null: direct */
  proxyFor: ((protocol: string, hostname: string, port: number) => ProxyEndpoint | null) | null;
  /**
   * undici's connect timeout is a connector setting, not a request option; requests carry
   * their own, so a new connection uses `timeoutFor(origin)`: the timeout of the latest
   * request in flight for that origin (connections are only opened while one is queued).
   * It bounds everything a connection takes: DNS, every address tried, the proxy, TLS.
   */
  timeoutFor: (origin: string) => number;
  /** the address to try first for the origin: the one its request was charged to (per-IP cap) */
  preferFor?: (origin: string) => string | null;
  attemptDelayMs?: number;
  /** TLS options for an https:// host (trust, verification: tls-options.ts); default: verified against Node's store */
  tlsFor?: (hostname: string) => ConnectTls;
}

/** TLS over a socket the connector opened, for one host: by its trust options and whether ALPN offers HTTP/2. */
type TlsConnectors = (hostname: string, allowH2: boolean) => buildConnector.connector;

const VERIFIED: ConnectTls = { key: 'verified', options: { rejectUnauthorized: true } };

/** undici's connector for the agent. */
export function guardedConnector(o: ConnectorOptions): buildConnector.connector {
  // connectors by TLS options and ALPN (the agent's allowH2, which undici passes with each
  // connection); the deadline is ours (timeout 0: undici sets none)
  const connectors = new Map<string, buildConnector.connector>();
  const tlsFor = o.tlsFor ?? (() => VERIFIED);
  const tls: TlsConnectors = (hostname, allowH2) => {
    const t = tlsFor(hostname);
    const key = `${t.key} ${allowH2}`;
    let c = connectors.get(key);
    if (!c) {
      c = buildConnector({ ...t.options, allowH2, maxCachedSessions: TLS_SESSIONS_CACHED, timeout: 0 });
      connectors.set(key, c);
    }
    return c;
  };
  return (opts, callback) => {
    connect(o, tls, opts).then(
      (socket) => callback(null, socket),
      (err: Error) => callback(err, null),
    );
  };
}

async function connect(o: ConnectorOptions, tls: TlsConnectors, opts: buildConnector.Options): Promise<Socket | TLSSocket> {
  const origin = `${opts.protocol}//${opts.host ?? opts.hostname}`;
  const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
  const timeoutMs = o.timeoutFor(origin);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new errors.ConnectTimeoutError(`connect timeout after ${timeoutMs} ms`)), timeoutMs);
  try {
    // the charged address first, unless it failed lately here (it is still charged: see docs/politeness-and-robots.md#addresses)
    const charged = o.preferFor?.(origin) ?? null;
    const targets = preferAddress(await abortable(o.targets.of(opts.hostname, port), deadline.signal), charged && !o.health.failedLately(charged) ? charged : null);
    const proxy = o.proxyFor?.(opts.protocol, opts.hostname, port) ?? null;
    const { socket, index } = await raceConnect<Socket>(
      targets.length,
      (i, signal) => (proxy ? openTunnel(proxy, targets[i]!.address, targets[i]!.port, signal) : openTcp(targets[i]!, signal)),
      (i) => authorityOf(targets[i]!.address, targets[i]!.port),
      {
        attemptDelayMs: o.attemptDelayMs ?? ATTEMPT_DELAY_MS,
        signal: deadline.signal,
        // a proxy that is down or refuses would fail every address the same way
        isFatal: (err) => err instanceof ProxyUnreachableError || err instanceof ProxyRefusedError,
        onFailed: (i) => o.health.connectFailed(targets[i]!.address),
      },
    );
    const target = targets[index]!;
    // the addresses before it failed, or had not connected a whole attempt delay later: the
    // winner goes first from now on (and the gate charges it), as browsers remember theirs
    for (let i = 0; i < index; i++) o.health.connectFailed(targets[i]!.address);
    o.health.connected(target.address);
    if (!proxy && !target.viaRule) {
      // the address actually connected to, checked once more (whatever chose it)
      const why = socket.remoteAddress ? o.recheck(socket.remoteAddress) : null;
      if (why) {
        socket.destroy();
        throw new RefusedAddressError(why);
      }
    }
    markConnectedAddress(socket, target.address);
    if (opts.protocol !== 'https:') {
      // as undici's own connector sets a plain socket up
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 60_000);
      return socket;
    }
    const secure = await abortable(
      new Promise<TLSSocket>((resolve, reject) => {
        const allowH2 = (opts as { allowH2?: boolean }).allowH2 === true;
        tls(opts.hostname, allowH2)({ ...opts, httpSocket: socket }, (err, s) => (err ? reject(err) : resolve(s as TLSSocket)));
      }),
      deadline.signal,
      () => socket.destroy(),
    );
    markConnectedAddress(secure, target.address);
    return secure;
  } finally {
    clearTimeout(timer);
  }
}

/** A TCP connection to one checked address. */
function openTcp(target: ConnectTarget, signal: AbortSignal): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    // the read buffer undici's own connector gives a plain socket (a Socket option @types/node omits)
    const socket = net.connect({ host: target.address, port: target.port, highWaterMark: 64 * 1024 } as net.NetConnectOpts);
    const onAbort = () => {
      socket.destroy();
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(socket);
    });
    socket.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
  });
}

/** `p`, unless `signal` aborts first (then `onAbort` cleans up what `p` may still produce). */
function abortable<T>(p: Promise<T>, signal: AbortSignal, onAbort?: () => void): Promise<T> {
  if (signal.aborted) {
    onAbort?.();
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort?.();
      reject(signal.reason);
    };
    signal.addEventListener('abort', abort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', abort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(e);
      },
    );
  });
}
