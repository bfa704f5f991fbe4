/**
 * Where a connection goes, and whether it may: `--resolve` rules first (the user's choice,
 * never refused), else the DNS cache; the SSRF guard checks the resolved address, an IP
 * literal before connecting, and the socket's actual remote address after (so DNS
 * rebinding cannot slip through).
 *
 * `--resolve` rules (see resolve-map.ts) are applied at connection time only:
 *  - the address: a custom `lookup` handed to net/tls.connect through the connector options
 *    returns the rule's address for matching host names;
 *  - the port: the connector wraps undici's `buildConnector` and swaps the port it is
 *    asked to connect to. The undici origin (and therefore the Host header, TLS servername,
 *    pool key and URL) stays `http://h01.site.test`, so virtual hosting keeps working.
 */
import { isIP, type BlockList, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { matchResolve, type ResolveRule } from '../resolve-map.js';
import { RefusedAddressError, refusal } from '../address-policy.js';
import { DnsCache } from '../dns-cache.js';
import type { ConnectTls } from './tls-options.js';

/**
 * Name → address for every connection: a `--resolve` rule (the user's choice, never
 * refused), else the DNS cache, whose first address must pass the SSRF guard.
 */
export function makeLookup(rules: readonly ResolveRule[], cache: DnsCache, guard: Guard | null): LookupFunction {
  return (hostname, options, callback) => {
    const answer = (address: string) => {
      const family = isIP(address);
      if (options.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const rule = matchResolve(rules, hostname);
    if (rule !== undefined) {
      process.nextTick(() => answer(rule.address));
      return;
    }
    cache.lookup(hostname).then(
      (addresses) => {
        const address = addresses[0]!;
        const why = guard ? refusal(address, guard.allowed, false) : null;
        if (why) callback(new RefusedAddressError(`${hostname} resolves to ${address}: ${why}`), '', 0);
        else answer(address);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}

export interface Guard {
  allowed: BlockList;
}

/** One DNS cache per process unless the caller brings its own. */
let sharedDnsCache: DnsCache | null = null;
export function defaultDnsCache(): DnsCache {
  sharedDnsCache ??= new DnsCache({ minTtlMs: 60_000, maxTtlMs: 3_600_000, negativeTtlMs: 30_000 });
  return sharedDnsCache;
}

/**
 * TLS sessions kept for resumption, one per host name (undici keeps 100): a crawl goes back
 * to many more hosts than that, and a resumed handshake skips the certificate exchange and
 * its verification. A session is a few KB.
 */
const TLS_SESSIONS_CACHED = 2000;

/**
 * undici's connector for the agent. undici's connect timeout is a connector setting, not a
 * request option; requests carry their own, so connectors are built per timeout value and
 * a new connection uses `timeoutFor(origin)`: the timeout of the latest request in flight
 * for that origin (connections are only opened while a request for the origin is queued).
 * The TLS options (tls-options.ts: trust, verification) and whether ALPN offers HTTP/2 (the
 * agent's `allowH2`, passed with each connection) are connector settings too.
 */
export function guardedConnector(
  rules: readonly ResolveRule[],
  guard: Guard | null,
  lookup: LookupFunction,
  timeoutFor: (origin: string) => number,
  tlsFor: (hostname: string) => ConnectTls = () => ({ key: 'verified', options: { rejectUnauthorized: true } }),
): buildConnector.connector {
  const connectors = new Map<string, buildConnector.connector>();
  const connectorFor = (ms: number, tls: ConnectTls, allowH2: boolean): buildConnector.connector => {
    const key = `${ms} ${tls.key} ${allowH2}`;
    let c = connectors.get(key);
    if (!c) {
      c = buildConnector({ timeout: ms, lookup, allowH2, ...tls.options, maxCachedSessions: TLS_SESSIONS_CACHED });
      connectors.set(key, c);
    }
    return c;
  };
  return (o, callback) => {
    const timeoutMs = timeoutFor(`${o.protocol}//${o.host ?? o.hostname}`);
    const allowH2 = (o as { allowH2?: boolean }).allowH2 === true;
    const rule = matchResolve(rules, o.hostname);
    let port = o.port;
    if (rule?.port !== undefined) {
      const effective = port === '' || port == null ? (o.protocol === 'https:' ? '443' : '80') : String(port);
      if (effective === '80' || effective === '443') port = String(rule.port);
    }
    if (guard && !rule) {
      // an IP literal never goes through the lookup: check it before connecting
      const literal = o.hostname.startsWith('[') ? o.hostname.slice(1, -1) : o.hostname;
      const why = isIP(literal) ? refusal(literal, guard.allowed, false) : null;
      if (why) {
        process.nextTick(() => callback(new RefusedAddressError(why), null));
        return;
      }
    }
    // Only the TCP target changes; host/servername (→ Host header, SNI) are untouched.
    connectorFor(timeoutMs, tlsFor(o.hostname), allowH2)(port === o.port ? o : { ...o, port }, (err, socket) => {
      // and the address actually connected to is checked once more (whatever resolved it)
      const remote = socket?.remoteAddress;
      const why = !err && guard && !rule && remote ? refusal(remote, guard.allowed, false) : null;
      if (why) {
        socket!.destroy();
        callback(new RefusedAddressError(why), null);
        return;
      }
      if (err) callback(err, null);
      else callback(null, socket!);
    });
  };
}
