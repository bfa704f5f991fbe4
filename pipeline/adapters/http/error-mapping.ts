/**
 * The one mapping from what undici, Node's sockets, DNS and zlib throw to the port's
 * HttpFetchError codes, with a message that says what was being fetched and in which phase.
 */
import { HttpFetchError, type HttpFetchErrorCode } from '../../../ports/http.js';
import { certificateFailure } from '../../../ports/tls-failures.js';
import { AllAttemptsFailedError } from './connect-race.js';
import { ProxyUnreachableError } from './proxy-tunnel.js';

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA', 'EAI_ADDRFAMILY', 'ENODATA', 'ESERVFAIL', 'EREFUSED', 'ECONNREFUSED_DNS', 'ETIMEOUT', 'ENOTIMP', 'EBADRESP']);
// a proxy's 502/503 to CONNECT: it could not connect to the address; its 504: it timed out doing so
const CONNECT_CODES = new Set(['ERR_CRAWL_PROXY_BAD_GATEWAY', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL', 'EACCES', 'EPERM']);
// an HTTP/2 stream or session the server reset or went away from is HTTP/1's dropped connection
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_HTTP2_STREAM_ERROR', 'ERR_HTTP2_SESSION_ERROR', 'ERR_HTTP2_GOAWAY_SESSION', 'ERR_HTTP2_INVALID_SESSION', 'ERR_HTTP2_STREAM_CANCEL']);
const TIMEOUT_CODES = new Set(['ERR_CRAWL_PROXY_GATEWAY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const PROTOCOL_CODES = new Set(['UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'UND_ERR_HEADERS_OVERFLOW', 'UND_ERR_INFO', 'UND_ERR_RES_EXCEEDED_MAX_SIZE', 'UND_ERR_NOT_SUPPORTED']);

function errorCodes(err: unknown): string[] {
  const out: string[] = [];
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e != null && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') out.push(code);
    const inner = (e as { errors?: unknown }).errors; // AggregateError from happy-eyeballs
    if (Array.isArray(inner)) for (const x of inner) {
      const c = (x as { code?: unknown } | null)?.code;
      if (typeof c === 'string') out.push(c);
    }
    e = (e as { cause?: unknown }).cause;
  }
  return out;
}

function classify(codes: string[]): HttpFetchErrorCode {
  for (const c of codes) {
    if (c === 'ERR_CRAWL_REFUSED_ADDRESS') return 'refused';
    if (c === 'ERR_CRAWL_PROXY') return 'proxy';
    if (TIMEOUT_CODES.has(c)) return 'timeout';
    if (DNS_CODES.has(c)) return 'dns';
    if (CONNECT_CODES.has(c)) return 'connect';
    // a certificate the server sent that cannot be trusted (ports/tls-failures.ts), or a
    // handshake the two sides could not complete (EPROTO, ERR_SSL_*: no common protocol or cipher)
    if (certificateFailure(c) !== null || c.startsWith('ERR_TLS_') || c.startsWith('ERR_SSL_') || c.includes('CERT') || c === 'EPROTO') return 'tls';
    if (RESET_CODES.has(c)) return 'reset';
    if (c.startsWith('HPE_') || c === 'UND_ERR_HTTP_PARSER' || PROTOCOL_CODES.has(c) || c.startsWith('Z_') || c.startsWith('ERR__ERROR_')) return 'protocol';
  }
  return 'other';
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const msg = err.message || err.name;
    return typeof code === 'string' && !msg.includes(code) ? `${code}: ${msg}` : msg;
  }
  return String(err);
}

// ---------------------------------------------------------------------------------------------

/** What the request knew when it failed: which of its own timers fired, and the phase it was in. */
export interface FailureContext {
  url: string;
  phase: string;
  timedOut: 'total' | 'headers' | 'slow' | null;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  totalTimeoutMs: number;
  minBytesPerSecond?: number;
  rawBytes: number;
  /** errors raised by a body decoder (gzip, deflate, br) */
  decodeErrors: WeakSet<Error>;
}

export function fetchError(err: unknown, f: FailureContext): HttpFetchError {
  if (err instanceof HttpFetchError) return err;
  const where = `fetching ${f.url}`;
  if (f.timedOut === 'headers') return new HttpFetchError('timeout', `${where}: headers timeout after ${f.headersTimeoutMs} ms`, { cause: err });
  if (f.timedOut === 'total') return new HttpFetchError('timeout', `${where}: total timeout after ${f.totalTimeoutMs} ms (${f.phase})`, { cause: err });
  if (f.timedOut === 'slow') {
    return new HttpFetchError('timeout', `${where}: transfer too slow (${f.rawBytes} bytes in the body, under ${f.minBytesPerSecond} bytes/s)`, { cause: err });
  }
  const codes = errorCodes(err);
  if (codes.includes('UND_ERR_CONNECT_TIMEOUT')) return new HttpFetchError('timeout', `${where}: connect timeout after ${f.connectTimeoutMs} ms`, { cause: err });
  if (codes.includes('UND_ERR_HEADERS_TIMEOUT')) return new HttpFetchError('timeout', `${where}: headers timeout after ${f.headersTimeoutMs} ms`, { cause: err });
  if (err instanceof Error && f.decodeErrors.has(err)) return new HttpFetchError('protocol', `${where}: decoding body: ${describe(err)}`, { cause: err });
  // undici's own HTTP/2 notices (a GOAWAY, a stream closed before its response ended) are the
  // server dropping the exchange, as a reset connection is in HTTP/1.1
  if (codes[0] === 'UND_ERR_INFO' && err instanceof Error && err.message.startsWith('HTTP/2: ')) return new HttpFetchError('reset', `${where}: ${f.phase}: ${describe(err)}`, { cause: err });
  return new HttpFetchError(classify(codes), `${where}: ${f.phase}: ${describe(err)}`, { cause: err, everyAddressRefused: everyAddressRefused(err) });
}

/** A socket's own ECONNREFUSED from connect(): the address answered, nothing listens on the port. */
const isSocketRefusal = (e: unknown): boolean =>
  e instanceof Error && !(e instanceof ProxyUnreachableError) && (e as NodeJS.ErrnoException).code === 'ECONNREFUSED' && (e as NodeJS.ErrnoException).syscall === 'connect';

/**
 * Whether the connection failed because every address of the host refused it: one socket's
 * refusal, or happy eyeballs' every attempt refused. A proxy that is down (its own refusal) and
 * an address that timed out or was unreachable beside refusing ones are not.
 */
function everyAddressRefused(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e != null && typeof e === 'object'; depth++) {
    if (e instanceof AllAttemptsFailedError) return e.errors.length > 0 && e.errors.every(isSocketRefusal);
    if (e instanceof ProxyUnreachableError) return false;
    if (isSocketRefusal(e)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
