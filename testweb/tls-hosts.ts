// The test web over TLS. With `tls`, the web's port answers HTTPS as well as plain HTTP (the
// first byte of a connection tells a TLS ClientHello from a request line), so the `--resolve`
// rules that map a host's port 80 to the web's port map its port 443 there too, and a crawl
// reaches every host of the web at https:// as at http://. Over TLS:
//  - ALPN offers HTTP/2 first and HTTP/1.1 after it, as most servers do; hosts named in
//    `http1Only` (default: h01.site.test and every *.sharedip.test host) offer HTTP/1.1 only;
//  - the certificate is signed by the test web's own CA (test-ca.ts, made at start), whose
//    PEM file `caFile` a crawler is told to trust (`--ca-file`);
//  - a page's absolute links to the web are written https:// (a site served over HTTPS links
//    to its pages by https:// URLs), as are redirects' Locations and sitemaps' URLs;
//  - the hosts of *.badtls.test present certificates no crawler should accept: expired,
//    issued by an unknown CA, for another name, sent without their intermediate, self-signed;
//    and reset.badtls.test resets the connection in the middle of the handshake. Each serves
//    a tiny allow-all site (a crawler that exempts it from verification finds two pages).
// The hostile host's raw-socket tricks are for plain HTTP only.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { createSecureContext, createServer as createTlsServer, type SecureContext, type Server as TlsServer, type TLSSocket } from 'node:tls';
import { makeTestPki, type TestPki, type TlsIdentity } from './test-ca.js';

export const BADTLS_DOMAIN = 'badtls.test';
export const EXPIRED_CERT_HOST = 'expired.badtls.test';
export const UNKNOWN_CA_HOST = 'unknown-ca.badtls.test';
export const WRONG_NAME_HOST = 'wrong-name.badtls.test';
export const INCOMPLETE_CHAIN_HOST = 'incomplete-chain.badtls.test';
export const SELF_SIGNED_HOST = 'self-signed.badtls.test';
/** resets the TCP connection once the ClientHello arrives: a handshake failure that may heal */
export const HANDSHAKE_RESET_HOST = 'reset.badtls.test';
/** The hosts whose certificate a crawler must refuse, by what is wrong with it. */
export const BAD_CERT_HOSTS = { expired: EXPIRED_CERT_HOST, unknownCa: UNKNOWN_CA_HOST, wrongName: WRONG_NAME_HOST, incompleteChain: INCOMPLETE_CHAIN_HOST, selfSigned: SELF_SIGNED_HOST } as const;
export const BADTLS_HOSTS: readonly string[] = [...Object.values(BAD_CERT_HOSTS), HANDSHAKE_RESET_HOST];
/** Over TLS these offer HTTP/1.1 only (`*.domain` patterns allowed). */
export const DEFAULT_HTTP1_ONLY_HOSTS: readonly string[] = ['h01.site.test', '*.sharedip.test'];

export interface TlsHostsOptions {
  /** host names (or `*.domain`) that offer only HTTP/1.1 over TLS; default DEFAULT_HTTP1_ONLY_HOSTS */
  http1Only?: readonly string[];
}

export interface TlsResponse {
  status: number;
  type: string;
  body: string;
}

const TLS_HANDSHAKE_RECORD = 0x16;
const LOCAL_ADDRESS = Symbol('testweb local address');

const matches = (patterns: readonly string[], host: string): boolean =>
  patterns.some((p) => (p.startsWith('*.') ? host.endsWith(p.slice(1)) && host.length > p.length - 1 : host === p));

/**
 * `http://` links to the web (its hosts are all under .test) written as a site served over
 * HTTPS writes them, an explicit :80 dropped. Other URLs keep their scheme: links to the
 * outside, and XML namespaces such as the sitemaps' (http://www.sitemaps.org/...).
 */
export function httpsLinks(text: string): string {
  return text.replace(/http:\/\/([A-Za-z0-9.-]+\.test)(?::80)?(?=[/"'<>\s?#:]|$)/gi, (_, host: string) => `https://${host}`);
}

/**
 * A stream that hands the TLS server the ClientHello chunk already read off the socket, then
 * the rest: a TLS socket built on the socket itself would read from its handle and miss it.
 */
function replaying(socket: Socket, first: Buffer): Duplex {
  const stream = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk, encoding, callback) {
      socket.write(chunk, encoding, callback);
    },
    final(callback) {
      socket.end();
      callback();
    },
    destroy(err, callback) {
      socket.destroy(err ?? undefined);
      callback(err);
    },
  });
  stream.push(first);
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.on('end', () => stream.push(null));
  socket.on('error', (err) => stream.destroy(err));
  socket.on('close', () => stream.destroy());
  return stream;
}

export class TlsHosts {
  readonly pki: TestPki;
  /** the CA to trust, as a PEM file (`crawl run --ca-file`) */
  readonly caFile: string;
  readonly http1OnlyPatterns: readonly string[];
  readonly hostNames: readonly string[] = BADTLS_HOSTS;
  private readonly dir: string;
  private readonly contexts = new Map<string, SecureContext>();
  private readonly webContext: SecureContext;
  /** one TLS server per listening address, so a TLS socket's local address is known (it runs over a stream, not a TCP socket) */
  private readonly servers = new Map<string, TlsServer>();
  private readonly onSecure: (socket: TLSSocket) => void;
  private readonly resetMarker = Buffer.from(HANDSHAKE_RESET_HOST);

  /** `names`: what the web's certificate is valid for (host names, `*.domain`, addresses). */
  static async create(names: readonly string[], opts: TlsHostsOptions, onSecure: (socket: TLSSocket) => void): Promise<TlsHosts> {
    return new TlsHosts(await makeTestPki(names), opts, onSecure);
  }

  private constructor(pki: TestPki, opts: TlsHostsOptions, onSecure: (socket: TLSSocket) => void) {
    this.pki = pki;
    this.http1OnlyPatterns = opts.http1Only ?? DEFAULT_HTTP1_ONLY_HOSTS;
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'testweb-ca-'));
    this.caFile = path.join(this.dir, 'testweb-ca.pem');
    writeFileSync(this.caFile, this.pki.caPem);
    const ctx = (id: TlsIdentity) => createSecureContext({ key: id.key, cert: id.cert });
    this.webContext = ctx(this.pki.web);
    this.contexts.set(EXPIRED_CERT_HOST, ctx(this.pki.expired));
    this.contexts.set(UNKNOWN_CA_HOST, ctx(this.pki.unknownCa));
    this.contexts.set(WRONG_NAME_HOST, ctx(this.pki.wrongName));
    this.contexts.set(INCOMPLETE_CHAIN_HOST, ctx(this.pki.incompleteChain));
    this.contexts.set(SELF_SIGNED_HOST, ctx(this.pki.selfSigned));
    this.onSecure = onSecure;
  }

  private serverFor(localAddress: string): TlsServer {
    let server = this.servers.get(localAddress);
    if (server) return server;
    server = createTlsServer({
      key: this.pki.web.key,
      cert: this.pki.web.cert,
      SNICallback: (servername, callback) => callback(null, this.contexts.get(servername.toLowerCase()) ?? this.webContext),
      // h2 first where the client offers it, as most servers prefer; HTTP/1.1 only for some hosts
      ALPNCallback: ({ servername, protocols }) => {
        if (protocols.includes('h2') && !this.http1Only(servername ?? '')) return 'h2';
        return protocols.includes('http/1.1') ? 'http/1.1' : undefined;
      },
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      (socket as TLSSocket & { [LOCAL_ADDRESS]?: string })[LOCAL_ADDRESS] = localAddress;
      this.onSecure(socket);
    });
    // a client that gives up on a certificate ends the handshake: nothing to do here
    server.on('tlsClientError', () => undefined);
    this.servers.set(localAddress, server);
    return server;
  }

  http1Only(host: string): boolean {
    return matches(this.http1OnlyPatterns, host.toLowerCase());
  }

  has(host: string): boolean {
    return host.endsWith(`.${BADTLS_DOMAIN}`);
  }

  resolveRules(port: number): string[] {
    return [`*.${BADTLS_DOMAIN}=127.0.0.1:${port}`];
  }

  /**
   * A new connection to the web's port: TLS when its first byte opens a handshake record,
   * plain HTTP (`plain`) otherwise.
   */
  accept(socket: Socket, plain: (socket: Socket) => void): void {
    socket.once('data', (first: Buffer) => {
      socket.pause();
      if (first[0] !== TLS_HANDSHAKE_RECORD) {
        socket.unshift(first);
        plain(socket);
        socket.resume();
        return;
      }
      // the ClientHello names the host in clear (SNI)
      if (first.includes(this.resetMarker)) {
        socket.resetAndDestroy();
        return;
      }
      this.serverFor(socket.localAddress ?? '').emit('connection', replaying(socket, first));
    });
  }

  /**
   * The server address a TLS connection of this web arrived on. A property of the socket (not
   * a WeakMap): HTTP/2 hands out its session's socket behind a proxy, which passes reads through.
   */
  localAddress(tlsSocket: TLSSocket): string | undefined {
    return (tlsSocket as TLSSocket & { [LOCAL_ADDRESS]?: string })[LOCAL_ADDRESS];
  }

  /** The tiny site every *.badtls.test host serves (to a client that accepts its certificate). */
  respond(host: string, method: string, target: string): TlsResponse {
    const path = target.split('?')[0];
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: 'text/plain; charset=utf-8', body: 'method not allowed\n' };
    if (path === '/robots.txt') return { status: 200, type: 'text/plain; charset=utf-8', body: 'User-agent: *\nAllow: /\n' };
    const page = (title: string, link: string) =>
      `<!DOCTYPE html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1><p>A host whose certificate should not be trusted (${host}).</p><a href="${link}">more</a></body></html>\n`;
    if (path === '/') return { status: 200, type: 'text/html; charset=utf-8', body: page(`${host} home`, '/next') };
    if (path === '/next') return { status: 200, type: 'text/html; charset=utf-8', body: page(`${host} next`, '/') };
    return { status: 404, type: 'text/html; charset=utf-8', body: '<!DOCTYPE html><html><head><title>Not found</title></head><body>Not found</body></html>\n' };
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
