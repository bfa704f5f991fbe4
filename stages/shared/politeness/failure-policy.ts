import { HttpFetchError, type HttpResponse } from '../../../ports/http.js';
import { certificateFailure } from '../../../ports/tls-failures.js';
import { parseRetryAfter, type FetchFeedback } from './host-pacing.js';

/**
 * The one place that decides what a fetch's result means: how it paces the host (see
 * host-pacing.ts) and whether the URL is worth another try.
 *
 * | result                         | host pacing              | URL retried |
 * |--------------------------------|--------------------------|-------------|
 * | 429, 503                       | Retry-After, else backoff | yes        |
 * | other 5xx                      | backoff                  | yes         |
 * | timeout, reset, connect error  | backoff                  | yes         |
 * | DNS failure                    | backoff                  | no (the name does not resolve) |
 * | malformed response, TLS error  | backoff                  | no          |
 * | refused by the SSRF guard      | none (nothing was sent)  | no          |
 * | anything else (2xx-4xx)        | healthy                  | no          |
 */
export interface FetchVerdict {
  feedback: FetchFeedback;
  retryable: boolean;
}

const RETRYABLE_ERRORS = new Set<HttpFetchError['code']>(['timeout', 'reset', 'connect']);

/** How an HTTP status paces its host (robots.txt fetches use this too). */
export function feedbackForStatus(status: number, retryAfterMs: number | null, durationMs: number, baseDelayMs: number): FetchFeedback {
  if (status === 429 || status === 503) return { kind: 'throttled', status, retryAfterMs, durationMs, baseDelayMs };
  if (status >= 500) return { kind: 'server_error', status, durationMs, baseDelayMs };
  return { kind: 'ok', durationMs, baseDelayMs };
}

export function judgeFetch(res: HttpResponse | null, err: HttpFetchError | null, baseDelayMs: number, durationMs: number, now: number): FetchVerdict {
  if (res) {
    const feedback = feedbackForStatus(res.status, parseRetryAfter(res.headers['retry-after'], now), durationMs, baseDelayMs);
    return { feedback, retryable: feedback.kind !== 'ok' };
  }
  const code = err?.code ?? 'other';
  if (code === 'refused') return { feedback: { kind: 'ok', durationMs: 0, baseDelayMs }, retryable: false };
  return { feedback: { kind: 'network_error', code, durationMs, baseDelayMs }, retryable: RETRYABLE_ERRORS.has(code) };
}

/** A failure that cannot heal within a crawl: every URL of the host ends with it at once. */
export interface HostDead {
  outcome: 'network_error' | 'refused';
  reason: string;
}

/**
 * DNS answers that say, with the name's own authority, that it has no address: NXDOMAIN
 * (`ENOTFOUND`, getaddrinfo's `EAI_NONAME`) and NODATA (`ENODATA`: the name exists with no
 * A or AAAA record). SERVFAIL, REFUSED and timeouts say nothing about the name and can heal.
 */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA']);

/**
 * Whether a failed request means the host cannot be reached for the rest of the crawl:
 *
 * | failure                                        | permanent | the host's URLs end as |
 * |------------------------------------------------|-----------|------------------------|
 * | the name does not exist, or has no address     | yes       | `network_error`, `dns_error: ENOTFOUND name` |
 * | the SSRF guard refuses the address             | yes       | `refused`, the guard's reason |
 * | the forward proxy refuses the tunnel (407, 403) | yes      | `network_error`, `proxy_error: ...` (the proxy's answer) |
 * | the certificate cannot be trusted: expired, unknown issuer, wrong name, incomplete chain, self-signed (ports/tls-failures.ts) | yes | `network_error`, `tls_error: certificate has expired` |
 * | every address refuses the connection, on two robots.txt tries in a row at least REFUSED_RECHECK_MS apart (refusedEverywhere) | yes | `network_error`, `connection_refused: connect ECONNREFUSED 192.0.2.1:80 (refused twice, 5 s apart)` |
 * | SERVFAIL, DNS timeout, DNS server refusing     | no        | (robots.txt: disallow all, retried with backoff) |
 * | a refused connection once, or beside an address that times out or is unreachable; reset (in a TLS handshake too), timeout, a TLS handshake that fails otherwise, 5xx, 429 | no | (the same) |
 *
 * A crawl's settings (`--resolve`, `--allow-network`, `--dns-server`, `--proxy`, `--ca-file`,
 * `--insecure-host`) do not change while it runs, so a refused address stays refused and an
 * untrusted certificate untrusted; a name that does not exist does not start to, nor does a
 * site renew its certificate, within the minutes a crawl waits; if either did, the cached
 * verdict expires (the robots record's retry interval) and the next URL asks again. A
 * handshake broken off (a reset, a timeout) or refused for a protocol or cipher says nothing
 * about the certificate and is tried again, as any connection failure.
 */
export function hostDead(err: HttpFetchError, host: string): HostDead | null {
  const root = err.rootCause;
  if (err.code === 'refused') return { outcome: 'refused', reason: `refused: ${root.message}` };
  if (err.code === 'proxy') return { outcome: 'network_error', reason: `proxy_error: ${root.message}` };
  if (err.code === 'dns' && root.code !== null && NO_SUCH_NAME.has(root.code)) {
    const what = root.code === 'ENODATA' || root.code === 'EAI_NODATA' ? 'the name has no address' : 'the name does not exist';
    return { outcome: 'network_error', reason: `dns_error: ${root.code} ${host} (${what})` };
  }
  const certificate = err.code === 'tls' ? certificateFailure(root.code) : null;
  if (certificate !== null) {
    // OpenSSL's words are kept where ours only explain them; Node's name check says which names the certificate has
    const detail = certificate.includes(root.message) ? '' : ` (${root.message})`;
    return { outcome: 'network_error', reason: `tls_error: ${certificate}${detail}` };
  }
  return null;
}

/**
 * How long after a robots.txt request every address of the host refused that it is asked
 * again; refused a second time, the host ends (refusedEverywhere). A refusal is the machine
 * itself answering that nothing listens on the port: a parked address, a server that serves no
 * web, a site taken down. A web server restarting (a process manager's restart, a reload)
 * refuses for a second or so, and is back by the second try; a timeout or a reset says
 * nothing so definite and keeps the RFC 9309 wait (--robots-give-up-ms). Without this rule a
 * crawl that meets such a host waits the whole give-up time (20 min) for it.
 */
export const REFUSED_RECHECK_MS = 5_000;

/**
 * The reason a host's URLs end with if this failure, every address of the host refusing the
 * connection, happens again on the next try (REFUSED_RECHECK_MS later at the earliest); null
 * for any other failure. Through a proxy a refusal is the proxy's 502, which does not say
 * what the server did, so it is never this.
 */
export function refusedEverywhere(err: HttpFetchError): string | null {
  if (err.code !== 'connect' || !err.everyAddressRefused) return null;
  return `connection_refused: ${err.rootCause.message}`;
}
