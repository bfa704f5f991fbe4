/**
 * Which forward proxy a URL goes through, as the crawl's settings say (`--proxy`, else the
 * HTTP_PROXY / HTTPS_PROXY convention) minus the hosts of the exclusion list (`--no-proxy`,
 * else NO_PROXY). Pure: parsing and matching only; proxy-tunnel.ts talks to the proxy.
 *
 * NO_PROXY as curl and undici read it: entries separated by commas or spaces; `*` alone means
 * every host; `example.org` (also written `.example.org` or `*.example.org`) means that host
 * and every host under it; `HOST:PORT` only that port; an IP address matches a URL with that
 * IP literal, and `ADDRESS/PREFIX` (curl 7.86) every IP literal in the range. Names are
 * matched as written in the URL, never resolved.
 */
import { BlockList, isIP } from 'node:net';

export interface ProxyCredentials {
  user: string;
  password: string;
}

/** A proxy the client may use: where it is, and the Proxy-Authorization it is sent (null: none). */
export interface ProxyEndpoint {
  /** `http://host:port` or `https://host:port`: no credentials, no path */
  url: URL;
  authorization: string | null;
}

/** The crawl's proxy settings (pipeline/settings.ts): URLs without credentials. */
export interface ProxySettings {
  httpProxy: string | null;
  httpsProxy: string | null;
  noProxy: readonly string[];
}

/**
 * `http://[user:password@]host[:port][/]` or `https://...`; a missing port is the scheme's
 * (80, 443), as curl reads it. Throws an Error naming `what` and saying what is wrong.
 * The credentials, when present, are returned apart and never put back into the URL.
 */
export function parseProxyUrl(raw: string, what: string): { url: URL; credentials: ProxyCredentials | null } {
  let u: URL;
  try {
    // curl's shorthand `host:port` means http://
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new Error(`invalid ${what} ${JSON.stringify(redactedProxy(raw))}: not a URL (expected http://HOST:PORT)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new Error(`invalid ${what} ${JSON.stringify(redactedProxy(raw))}: ${u.protocol.replace(/:$/, '')} proxies are not supported (expected http:// or https://)`);
  }
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) {
    throw new Error(`invalid ${what} ${JSON.stringify(redactedProxy(raw))}: a proxy URL has no path or query (expected http://HOST:PORT)`);
  }
  const credentials = u.username || u.password ? { user: decodeURIComponent(u.username), password: decodeURIComponent(u.password) } : null;
  const url = new URL(`${u.protocol}//${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`);
  return { url, credentials };
}

/** `http://host:port` of a proxy URL (what settings store and logs show). */
export const proxyOrigin = (url: URL): string => `${url.protocol}//${url.host}`;

/** A proxy URL as it may be shown: any userinfo replaced by `***`. */
export function redactedProxy(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/@]*@/i, (_m, scheme: string | undefined) => `${scheme ?? ''}***@`);
}

export function basicAuthorization(c: ProxyCredentials): string {
  return `Basic ${Buffer.from(`${c.user}:${c.password}`, 'utf8').toString('base64')}`;
}

/** `a.example, .b.example  c:8080` -> ['a.example', '.b.example', 'c:8080'] */
export function splitNoProxy(value: string): string[] {
  return value.split(/[\s,]+/).filter((e) => e !== '');
}

interface NoProxyEntry {
  host: string;
  port: number | null;
}

/** The exclusion list: `matches(hostname, port)` says a URL goes direct. */
export class NoProxyList {
  private readonly all: boolean;
  private readonly entries: NoProxyEntry[] = [];
  private readonly ranges = new BlockList();
  private hasRanges = false;

  constructor(list: readonly string[]) {
    this.all = list.some((e) => e.trim() === '*');
    for (const raw of list) {
      const entry = raw.trim().toLowerCase();
      if (entry === '' || entry === '*') continue;
      const cidr = /^\[?([0-9a-f:.]+)\]?\/(\d{1,3})$/.exec(entry);
      if (cidr && isIP(cidr[1]!)) {
        const family = isIP(cidr[1]!) === 4 ? 'ipv4' : 'ipv6';
        const prefix = Number(cidr[2]);
        if (prefix <= (family === 'ipv4' ? 32 : 128)) {
          this.ranges.addSubnet(cidr[1]!, prefix, family);
          this.hasRanges = true;
        }
        continue;
      }
      // [::1]:8080, [::1], ::1, host:8080, host
      let host = entry;
      let port: number | null = null;
      const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
      const withPort = /^([^:]+):(\d+)$/.exec(entry);
      if (bracketed) {
        host = bracketed[1]!;
        port = bracketed[2] ? Number(bracketed[2]) : null;
      } else if (withPort) {
        host = withPort[1]!;
        port = Number(withPort[2]);
      }
      host = host.replace(/^\*?\./, '').replace(/\.$/, '');
      if (host !== '') this.entries.push({ host, port });
    }
  }

  /** `hostname` as in the URL (IPv6 with or without brackets), `port` the URL's (default filled in). */
  matches(hostname: string, port: number): boolean {
    if (this.all) return true;
    const host = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
    for (const e of this.entries) {
      if (e.port !== null && e.port !== port) continue;
      if (host === e.host || host.endsWith(`.${e.host}`)) return true;
    }
    if (this.hasRanges) {
      const family = isIP(host);
      if (family !== 0 && this.ranges.check(host, family === 4 ? 'ipv4' : 'ipv6')) return true;
    }
    return false;
  }
}

/**
 * The router the client asks per origin: the proxy for its scheme, unless the exclusion list
 * names the host. `credentials` are looked up by proxy origin (`http://host:port`).
 */
export function proxyRouter(
  settings: ProxySettings,
  credentials: ReadonlyMap<string, ProxyCredentials> = new Map(),
): ((protocol: string, hostname: string, port: number) => ProxyEndpoint | null) | null {
  const endpoint = (raw: string | null): ProxyEndpoint | null => {
    if (!raw) return null;
    const { url } = parseProxyUrl(raw, 'proxy');
    const c = credentials.get(proxyOrigin(url));
    return { url, authorization: c ? basicAuthorization(c) : null };
  };
  const http = endpoint(settings.httpProxy);
  const https = endpoint(settings.httpsProxy);
  if (!http && !https) return null;
  const direct = new NoProxyList(settings.noProxy);
  return (protocol, hostname, port) => {
    const via = protocol === 'https:' ? https : http;
    if (!via || direct.matches(hostname, port)) return null;
    return via;
  };
}
