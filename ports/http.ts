/**
 * The HTTP port: what a stage may ask of an HTTP client and what it gets back. The crawler's
 * client (pipeline/adapters/http/) implements it over undici; unit tests use a fake. Errors
 * come back as one class with a small set of codes, so the fetch policy can reason about them
 * without knowing the library underneath.
 */

export interface HttpRequest {
  url: string;
  method?: 'GET' | 'HEAD';
  headers?: Record<string, string>;
  connectTimeoutMs: number;
  /** Time allowed from sending the request until the response headers arrive. */
  headersTimeoutMs: number;
  /** Time allowed for the whole exchange, body included. */
  totalTimeoutMs: number;
  /** Cap on *decoded* body bytes kept; reading stops once reached. */
  maxBodyBytes: number;
  /**
   * A compressed body that inflates more than this many times its size (once past 1 MB
   * decoded) is a decompression bomb: the request fails. Default 200.
   */
  maxDecompressionRatio?: number;
  /**
   * Slow-drip servers: once the body has been read for `minRateGraceMs` (default 5000), a
   * transfer averaging fewer bytes per second than this fails. 0 = off. Default 0.
   */
  minBytesPerSecond?: number;
  minRateGraceMs?: number;
  /**
   * Asked once the response headers are in: false means the body is not downloaded at all
   * (the connection's copy of it is dropped) and the response comes back with an empty body
   * and `bodyNotRead`. For bodies nobody will store or read (a video linked from a page).
   * Default: every body is read.
   */
  wantBody?: (status: number, headers: Record<string, string>) => boolean;
  /**
   * The address to connect to first when the host has several (the one the request was
   * charged to for the per-IP cap); the others are still tried if it does not connect.
   */
  address?: string | null;
}

export interface HttpResponse {
  status: number;
  /** Lowercased names; repeated headers joined with ', '; set-cookie dropped. Content-Encoding is kept as received even though `body` is decoded. */
  headers: Record<string, string>;
  /**
   * The fields the server sent more than once (set-cookie aside), each line as sent, in order;
   * absent when none was. `headers` joins them, which keeps a list's items but not where one
   * line ended: an `X-Robots-Tag` line's `botname:` prefix covers that line only.
   */
  headerLines?: Record<string, string[]>;
  /** At most maxBodyBytes of decoded content. */
  body: Uint8Array;
  truncated: boolean;
  /** `wantBody` said no: `body` is empty and the body was not downloaded */
  bodyNotRead?: boolean;
  durationMs: number;
  /** Address of the socket that carried the request, when known. */
  remoteAddress: string | null;
  url: string;
  /** How the exchange travelled, when known (the client reports it; fakes may leave it out). */
  protocol?: HttpProtocol;
}

/** The protocols of one exchange, with the identifiers WARC-Protocol uses. */
export interface HttpProtocol {
  /** the HTTP version, as ALPN names it: 'h2', or 'http/1.1' (also over plain TCP) */
  http: 'h2' | 'http/1.1';
  /** 'tls/1.3', 'tls/1.2'; null over plain TCP */
  tls: string | null;
  /** the TLS cipher suite's IANA name (TLS_AES_128_GCM_SHA256); null over plain TCP */
  cipher: string | null;
  /** only for a host the user exempted from certificate checks (`--insecure-host`): that it was not checked, and what checking would have found */
  unverified?: string;
}

/**
 * `refused`: the SSRF guard refused the address; `proxy`: the forward proxy refused the tunnel
 * (407, 403: a setting of the crawl's, so it does not heal while it runs).
 */
export type HttpFetchErrorCode = 'timeout' | 'dns' | 'connect' | 'reset' | 'tls' | 'protocol' | 'refused' | 'proxy' | 'other';

export class HttpFetchError extends Error {
  override readonly name = 'HttpFetchError';
  readonly code: HttpFetchErrorCode;
  /**
   * `connect` only: every address of the host refused the connection itself (a TCP reset to
   * the SYN: the machine answers, nothing listens on the port). Never set for a failure of a
   * forward proxy, nor for an address that timed out or was unreachable.
   */
  readonly everyAddressRefused: boolean;
  constructor(code: HttpFetchErrorCode, message: string, options?: { cause?: unknown; everyAddressRefused?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.everyAddressRefused = code === 'connect' && options?.everyAddressRefused === true;
  }

  /**
   * The innermost error behind this one: its system code (`ENOTFOUND`, `ECONNREFUSED`, ...)
   * and its own message, without the "fetching URL: phase:" context. Whether a failure can
   * heal is judged from it (NXDOMAIN cannot; SERVFAIL can).
   */
  get rootCause(): { code: string | null; message: string } {
    let e: unknown = this;
    for (let depth = 0; depth < 8; depth++) {
      const next = (e as { cause?: unknown }).cause;
      if (next == null || typeof next !== 'object') break;
      e = next;
    }
    const code = (e as { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : null, message: e instanceof Error ? e.message : String(e) };
  }
}

export interface HttpClient {
  request(req: HttpRequest): Promise<HttpResponse>;
  close(): Promise<void>;
}

export const ACCEPT_ENCODING = 'gzip, deflate, br';
/** Caller headers that would break the client's own framing/decoding or virtual hosting. */
const RESERVED_HEADERS = new Set(['host', 'accept-encoding', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade']);

/**
 * The header fields the client sends with a request (undici adds Host and its framing fields):
 * the caller's, lowercased, minus the ones the client owns, plus User-Agent and
 * Accept-Encoding. Exported so the archive records the request as it was sent.
 */
export function requestHeadersSent(given: Record<string, string> | undefined, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(given ?? {})) {
    const name = k.toLowerCase();
    if (!RESERVED_HEADERS.has(name)) headers[name] = v;
  }
  headers['user-agent'] ??= userAgent;
  headers['accept-encoding'] = ACCEPT_ENCODING;
  return headers;
}
