/**
 * TLS for the crawler's connections: which CAs it trusts, which hosts the user exempted from
 * certificate checks, and what a connection's socket says about how it was made.
 *
 * Trust is Node's default CA store (Mozilla's list, which Node ships; with
 * `NODE_EXTRA_CA_CERTS` added) plus the certificates of `--ca-file`. Node's `ca` option
 * replaces its default store instead of adding to it, and then ignores NODE_EXTRA_CA_CERTS
 * too; so with extra CAs the list given is the default list, the environment's file and the
 * extra ones together. Without extra CAs no `ca` is given at all, and Node's default applies
 * exactly as it would anywhere else (also `--use-openssl-ca` in NODE_OPTIONS).
 *
 * Verification is always on, except for hosts the user names (`--insecure-host PATTERN`):
 * their connections are made without it, and each exchange says so (`HttpProtocol.unverified`).
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { createSecureContext, rootCertificates, type SecureContext, type TLSSocket } from 'node:tls';
import type { HttpProtocol } from '../../../ports/http.js';
import { certificateFailure } from '../../../ports/tls-failures.js';

export interface TlsTrust {
  /** PEM text of the certificates trusted besides the default store (one entry per `--ca-file`) */
  caPems: readonly string[];
  /** host patterns (`h.example`, `*.example`, `*`) whose certificates are not verified */
  insecureHosts: readonly string[];
}

/** What the connector passes to tls.connect for one host, and a key to share connectors by. */
export interface ConnectTls {
  key: 'verified' | 'unverified';
  /** secureContext: the trusted CAs, made once (absent: Node's default store) */
  options: { secureContext?: SecureContext; rejectUnauthorized: boolean };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of NODE_EXTRA_CA_CERTS, as Node reads them at start (an unreadable file adds none; Node warns about it). */
function environmentCas(): string[] {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file) return [];
  try {
    return readFileSync(file, 'utf8').match(PEM_CERTIFICATE) ?? [];
  } catch {
    return [];
  }
}

/** Per host: the TLS options of its connections. */
export function connectTls(trust: TlsTrust | undefined): (hostname: string) => ConnectTls {
  const extra = trust?.caPems ?? [];
  // One context for every connection: given `ca`, tls.connect would build a context per
  // connection and parse the ~150 certificates each time (docs/performance.md#https-and-http2).
  const secureContext = extra.length > 0 ? createSecureContext({ ca: [...rootCertificates, ...environmentCas(), ...extra] }) : undefined;
  const trusted = secureContext ? { secureContext } : {};
  const verified: ConnectTls = { key: 'verified', options: { ...trusted, rejectUnauthorized: true } };
  const unverified: ConnectTls = { key: 'unverified', options: { ...trusted, rejectUnauthorized: false } };
  const insecure = (trust?.insecureHosts ?? []).map((p) => p.toLowerCase().replace(/\.$/, ''));
  if (insecure.length === 0) return () => verified;
  return (hostname) => (insecure.some((p) => hostMatches(p, hostname)) ? unverified : verified);
}

/** A host name against `name`, `*.domain` (one or more labels under it) or `*` (every host, IP literals too), as `--resolve` matches. */
function hostMatches(pattern: string, hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return host.length > pattern.length - 1 && host.endsWith(pattern.slice(1));
  return host === pattern;
}

/** Whether a `--insecure-host` value is a host name, `*.domain` or `*`; the reason when not. */
export function insecureHostProblem(pattern: string): string | null {
  const p = pattern.trim().toLowerCase().replace(/\.$/, '');
  if (p === '*') return null;
  const rest = p.startsWith('*.') ? p.slice(2) : p;
  const label = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
  if (rest.length === 0 || rest.length > 253 || !rest.split('.').every((l) => label.test(l))) {
    return `invalid --insecure-host ${JSON.stringify(pattern)}: expected a host name, '*.domain' or '*'`;
  }
  return null;
}

/**
 * The certificates of a `--ca-file`, as PEM text: every certificate in it must parse, and there
 * must be at least one. Throws an Error that names the file and what is wrong with it.
 */
export function readCaFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read --ca-file ${file}: ${(err as Error).message}`);
  }
  const pems = text.match(PEM_CERTIFICATE) ?? [];
  if (pems.length === 0) throw new Error(`--ca-file ${file}: no PEM certificate in it (expected -----BEGIN CERTIFICATE----- blocks)`);
  pems.forEach((pem, i) => {
    try {
      new X509Certificate(pem);
    } catch (err) {
      throw new Error(`--ca-file ${file}: certificate ${i + 1} of ${pems.length} does not parse: ${(err as Error).message}`);
    }
  });
  return pems.join('\n') + '\n';
}

/** Node's TLS version names as WARC-Protocol writes them: TLSv1.3 -> tls/1.3. */
const tlsId = (version: string | null): string | null => (version ? version.replace(/^TLSv/, 'tls/').replace(/^SSLv/, 'ssl/') : null);

/**
 * How an exchange travelled, from the socket that carried it: the HTTP version ALPN chose
 * (`h2`, or `http/1.1` when the server offers no HTTP/2 or the connection is plain TCP), the
 * TLS version and cipher suite, and for a host exempted from verification what verifying
 * would have found.
 */
export function protocolOf(socket: unknown, unverifiedHost: boolean): HttpProtocol {
  const s = socket as Partial<TLSSocket> | null | undefined;
  const encrypted = s?.encrypted === true;
  const http = s?.alpnProtocol === 'h2' ? 'h2' : 'http/1.1';
  if (!encrypted) return { http, tls: null, cipher: null };
  const out: HttpProtocol = { http, tls: tlsId(s.getProtocol?.() ?? null), cipher: s.getCipher?.()?.standardName ?? null };
  if (unverifiedHost) {
    // Node keeps the verification error's code here (CERT_HAS_EXPIRED, ...)
    const why = String(s.authorizationError ?? 'unknown');
    out.unverified = s.authorized ? 'certificate not verified (--insecure-host); it would have passed' : `certificate not verified (--insecure-host): ${certificateFailure(why) ?? why}`;
  }
  return out;
}
