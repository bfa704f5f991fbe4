/**
 * A tunnel through a forward proxy: `CONNECT address:port` (RFC 9110 §9.3.6), for http://
 * and https:// URLs alike. The crawler asks for the address it resolved and the SSRF guard
 * checked, never for the name: the proxy's own DNS (which may know internal names) is never
 * consulted, so the proxy can only reach what the crawler itself would connect to. TLS, the
 * Host header and SNI stay the crawler's, end to end inside the tunnel.
 *
 * What can go wrong, and what it means:
 *  - the proxy cannot be reached, or drops the CONNECT: ProxyUnreachableError (the proxy's
 *    fault, not the target address's: no other address is tried through it);
 *  - 407, 403 or another refusal: ProxyRefusedError (`proxy` error code), with the status;
 *  - 502, 503: the proxy could not connect to that address (ProxyGatewayError, like a
 *    refused connection: the next address is tried); 504: it timed out doing so.
 * The Proxy-Authorization value is never part of an error or a log line.
 */
import http from 'node:http';
import https from 'node:https';
import { isIPv6, type Socket } from 'node:net';
import { proxyOrigin, type ProxyEndpoint } from './proxy-config.js';

/** Response headers of a CONNECT answer: a proxy needs far fewer; the cap bounds a bad one. */
const MAX_CONNECT_HEADER_BYTES = 16 * 1024;

export class ProxyUnreachableError extends Error {
  override readonly name = 'ProxyUnreachableError';
  /** the underlying socket error's code (ECONNREFUSED, ECONNRESET, ...) so the failure is classified like one */
  readonly code: string;
  constructor(message: string, code: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export class ProxyRefusedError extends Error {
  override readonly name = 'ProxyRefusedError';
  readonly code = 'ERR_CRAWL_PROXY';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export class ProxyGatewayError extends Error {
  override readonly name = 'ProxyGatewayError';
  readonly code: 'ERR_CRAWL_PROXY_BAD_GATEWAY' | 'ERR_CRAWL_PROXY_GATEWAY_TIMEOUT';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.code = status === 504 ? 'ERR_CRAWL_PROXY_GATEWAY_TIMEOUT' : 'ERR_CRAWL_PROXY_BAD_GATEWAY';
  }
}

/** `1.2.3.4:443`, `[2001:db8::1]:443` */
export const authorityOf = (address: string, port: number): string => (isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`);

/**
 * Opens a tunnel through `proxy` to `address:port`; resolves with the raw socket once the proxy
 * answered 2xx. `signal` aborts the attempt (its socket is destroyed).
 */
export function openTunnel(proxy: ProxyEndpoint, address: string, port: number, signal: AbortSignal): Promise<Socket> {
  const target = authorityOf(address, port);
  const where = `proxy ${proxyOrigin(proxy.url)}`;
  return new Promise<Socket>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const client = proxy.url.protocol === 'https:' ? https : http;
    const req = client.request({
      host: proxy.url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(proxy.url.port || (proxy.url.protocol === 'https:' ? 443 : 80)),
      method: 'CONNECT',
      path: target,
      headers: { host: target, ...(proxy.authorization ? { 'proxy-authorization': proxy.authorization } : {}) },
      // a socket of its own: a tunnel is never pooled
      agent: false,
      maxHeaderSize: MAX_CONNECT_HEADER_BYTES,
    });
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.once('connect', (res: http.IncomingMessage, socket: Socket, head: Buffer) => {
      signal.removeEventListener('abort', onAbort);
      if (settled) {
        socket.destroy();
        return;
      }
      settled = true;
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        // bytes the proxy passed on with its answer belong to the tunnel
        if (head.length > 0) socket.unshift(head);
        resolve(socket);
        return;
      }
      socket.destroy();
      const answered = `${where} answered ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''} to CONNECT ${target}`;
      if (status === 502 || status === 503 || status === 504) reject(new ProxyGatewayError(`${answered}: it could not connect to the address`, status));
      else if (status === 407) reject(new ProxyRefusedError(`${answered}: ${proxy.authorization ? 'the proxy refused the credentials given' : 'the proxy requires credentials (--proxy-credentials-file, or user:password in HTTPS_PROXY/HTTP_PROXY)'}`, status));
      else if (status === 403 || status === 405) reject(new ProxyRefusedError(`${answered}: the proxy does not allow this tunnel (a proxy that allows CONNECT only to port 443 carries no http:// URLs)`, status));
      else reject(new ProxyRefusedError(answered, status));
    });
    req.once('response', (res: http.IncomingMessage) => {
      // a CONNECT answer is delivered as 'connect'; anything else is a proxy that did not understand it
      res.resume();
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      req.destroy();
      reject(new ProxyRefusedError(`${where} answered ${res.statusCode ?? 0} to CONNECT ${target} without opening a tunnel`, res.statusCode ?? 0));
    });
    req.once('error', (err: NodeJS.ErrnoException) => {
      signal.removeEventListener('abort', onAbort);
      if (settled) return;
      settled = true;
      const code = typeof err.code === 'string' ? err.code : 'ECONNRESET';
      reject(new ProxyUnreachableError(`${where}: ${err.message || code} (asking it to CONNECT ${target})`, code, { cause: err }));
    });
    req.end();
  });
}
