/**
 * The crawler's HTTP client: one pooled keep-alive undici Agent, no redirect following,
 * streaming decompression with a hard cap on decoded bytes, three timeouts (connect,
 * first response headers, whole request including body) and errors mapped to a small
 * set of codes the pipeline can reason about.
 *
 * `--resolve` rules (see resolve-map.ts) are applied at connection time only:
 *  - the address: a custom `lookup` handed to net/tls.connect through the connector options
 *    returns the rule's address for matching host names (falls back to dns.lookup);
 *  - the port: a custom connector wraps undici's `buildConnector` and swaps the port it is
 *    asked to connect to. The undici origin (and therefore the Host header, TLS servername,
 *    pool key and URL) stays `http://h01.site.test`, so virtual hosting keeps working.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { isIP, type BlockList, type LookupFunction, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Readable, pipeline } from 'node:stream';
import zlib from 'node:zlib';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { matchResolve, type ResolveRule } from './resolve-map.js';
import { allowList, RefusedAddressError, refusal } from './address-policy.js';
import { DnsCache } from './dns-cache.js';
import { ACCEPT_ENCODING, HttpFetchError, requestHeadersSent, type HttpClient, type HttpFetchErrorCode, type HttpRequest, type HttpResponse } from '../../ports/http.js';

/** Response headers: at most this many bytes (undici's parser) and this many fields. */
export const MAX_HEADER_BYTES = 32 * 1024;
export const MAX_HEADER_FIELDS = 256;
/** Decoded size from which the ratio check applies. */
const BOMB_CHECK_FROM_BYTES = 1024 * 1024;

export interface HttpClientOptions {
  userAgent: string;
  resolve: readonly ResolveRule[];
  /** the process's DNS cache (default: one shared per process with default TTL limits) */
  dns?: DnsCache;
  /**
   * SSRF guard: connections to loopback, private, link-local, CGNAT, multicast, unspecified
   * and unique-local addresses are refused unless the host has a `--resolve` rule or the
   * address is in one of these CIDRs. Default: guard on, nothing extra allowed.
   */
  allowNetworks?: readonly string[];
  /** false turns the guard off (tests of the client itself against loopback servers) */
  guard?: boolean;
  /** Default 2. */
  maxConnectionsPerOrigin?: number;
  /** Idle keep-alive time for pooled sockets; server hints may only shorten it. Default 4000. */
  keepAliveMs?: number;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
// ---------------------------------------------------------------------------------------------
// remoteAddress: undici does not expose the socket to request handlers. The documented
// `undici:client:sendHeaders` diagnostics channel carries it, and undici's HTTP/1 writer calls
// the handler's onRequestStart and publishes sendHeaders synchronously one after the other
// for the same request, so a handler marks itself "pending" in onRequestStart and the
// subscriber hands it the socket's address (checked against origin + path for safety).

interface ExchangeState {
  origin: string;
  path: string;
  phase: 'connecting' | 'waiting for response headers' | 'reading body';
  remoteAddress: string | null;
  /** Called when the request is handed to a connected socket (may repeat on undici retries). */
  onRequestStart(): void;
  /** Called when final (non-1xx) response headers arrive. */
  onResponseStart(): void;
}

let pendingRemote: ExchangeState | null = null;
let sendHeadersSubscribed = false;

function onSendHeaders(message: unknown): void {
  const p = pendingRemote;
  if (p === null) return;
  pendingRemote = null;
  const m = message as { request?: { origin?: unknown; path?: unknown }; socket?: Socket };
  if (m.request && String(m.request.origin) === p.origin && m.request.path === p.path) {
    p.remoteAddress = m.socket?.remoteAddress ?? null;
  }
}

function ensureSendHeadersSubscription(): void {
  if (sendHeadersSubscribed) return;
  sendHeadersSubscribed = true;
  diagnosticsChannel.subscribe('undici:client:sendHeaders', onSendHeaders);
}

/** Forwards every handler callback; records the phase and arms remote-address capture. */
class ExchangeTap implements Dispatcher.DispatchHandler {
  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly state: ExchangeState,
  ) {}
  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.state.phase = 'waiting for response headers';
    this.state.onRequestStart();
    pendingRemote = this.state;
    this.inner.onRequestStart?.(controller, context);
  }
  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>[2], socket: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>[3]): void {
    this.inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }
  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2], statusMessage?: string): void {
    if (statusCode >= 200) {
      this.state.phase = 'reading body';
      this.state.onResponseStart();
    }
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }
  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseEnd']>>[1]): void {
    this.inner.onResponseEnd?.(controller, trailers);
  }
  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.inner.onResponseError?.(controller, error);
  }
}

// ---------------------------------------------------------------------------------------------
// Connection set-up.

/**
 * Name → address for every connection: a `--resolve` rule (the user's choice, never
 * refused), else the DNS cache, whose first address must pass the SSRF guard.
 */
function makeLookup(rules: readonly ResolveRule[], cache: DnsCache, guard: Guard | null): LookupFunction {
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

interface Guard {
  allowed: BlockList;
}

/** One DNS cache per process unless the caller brings its own. */
let sharedDnsCache: DnsCache | null = null;
export function defaultDnsCache(): DnsCache {
  sharedDnsCache ??= new DnsCache({ minTtlMs: 60_000, maxTtlMs: 3_600_000, negativeTtlMs: 30_000 });
  return sharedDnsCache;
}

// ---------------------------------------------------------------------------------------------
// Body decoding.

type ByteSource = AsyncIterable<Buffer>;

function looksLikeZlibHeader(b: Buffer): boolean {
  if (b.length < 2) return b.length === 1 ? (b[0]! & 0x0f) === 8 : true;
  return (b[0]! & 0x0f) === 8 && ((b[0]! << 8) | b[1]!) % 31 === 0;
}

function makeDecoder(encoding: string, first: Buffer): zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress {
  // Lenient about truncated input (like browsers/curl): flush what we have instead of failing.
  const zopts = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip(zopts);
    case 'deflate':
      // RFC 9110 says zlib-wrapped; some servers send raw deflate.
      return looksLikeZlibHeader(first) ? zlib.createInflate(zopts) : zlib.createInflateRaw(zopts);
    case 'br':
      return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    default:
      throw new Error(`unsupported content-encoding ${encoding}`);
  }
}

/** Lazily (on the first input byte, so empty bodies decode to empty) pipe `src` through a decoder. */
function decodeStage(
  src: ByteSource,
  encoding: string,
  live: Set<{ destroy(): unknown }>,
  decodeErrors: WeakSet<Error>,
  onDecoder: (d: zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress) => void = () => {},
): ByteSource {
  return (async function* () {
    const it = src[Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done) return;
    const decoder = makeDecoder(encoding, first.value);
    onDecoder(decoder);
    decoder.once('error', (e) => decodeErrors.add(e));
    live.add(decoder);
    const input = Readable.from(
      (async function* () {
        yield first.value;
        for (;;) {
          const n = await it.next();
          if (n.done) return;
          yield n.value;
        }
      })(),
      { objectMode: false },
    );
    live.add(input);
    pipeline(input, decoder, () => {}); // errors surface through the decoder
    yield* decoder as AsyncIterable<Buffer>;
  })();
}

function parseContentEncoding(v: string | undefined): string[] | null {
  if (v === undefined) return [];
  const codings = v
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '' && s !== 'identity');
  const known = new Set(['gzip', 'x-gzip', 'deflate', 'br']);
  return codings.every((c) => known.has(c)) ? codings : null; // null: leave body as is
}

// ---------------------------------------------------------------------------------------------
// Error mapping.

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA', 'EAI_ADDRFAMILY', 'ENODATA', 'ESERVFAIL', 'EREFUSED', 'ECONNREFUSED_DNS', 'ETIMEOUT', 'ENOTIMP', 'EBADRESP']);
const CONNECT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL', 'EACCES', 'EPERM']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE']);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
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
    if (TIMEOUT_CODES.has(c)) return 'timeout';
    if (DNS_CODES.has(c)) return 'dns';
    if (CONNECT_CODES.has(c)) return 'connect';
    if (
      c.startsWith('ERR_TLS_') || c.startsWith('ERR_SSL_') || c.startsWith('CERT_') || c.includes('CERT') ||
      c === 'EPROTO' || c === 'DEPTH_ZERO_SELF_SIGNED_CERT' || c === 'SELF_SIGNED_CERT_IN_CHAIN' || c === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || c === 'HOSTNAME_MISMATCH'
    ) return 'tls';
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

export function createHttpClient(opts: HttpClientOptions): HttpClient {
  ensureSendHeadersSubscription();
  const rules = [...opts.resolve];
  const guard: Guard | null = opts.guard === false ? null : { allowed: allowList(opts.allowNetworks ?? []) };
  const lookup = makeLookup(rules, opts.dns ?? defaultDnsCache(), guard);
  const keepAliveMs = opts.keepAliveMs ?? 4000;

  // undici's connect timeout is a connector setting, not a request option. Requests carry their
  // own connectTimeoutMs, so connectors are built per timeout value and a new connection for an
  // origin uses the timeout of the latest request in flight for that origin (connections are
  // only opened while a request for the origin is queued).
  const connectors = new Map<number, buildConnector.connector>();
  const connectTimeouts = new Map<string, { ms: number; refs: number }>();
  const connectorFor = (ms: number): buildConnector.connector => {
    let c = connectors.get(ms);
    if (!c) {
      c = buildConnector({ timeout: ms, lookup });
      connectors.set(ms, c);
    }
    return c;
  };

  const connect: buildConnector.connector = (o, callback) => {
    const timeoutMs = connectTimeouts.get(`${o.protocol}//${o.host ?? o.hostname}`)?.ms ?? DEFAULT_CONNECT_TIMEOUT_MS;
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
    connectorFor(timeoutMs)(port === o.port ? o : { ...o, port }, (err, socket) => {
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

  const agent = new Agent({
    connections: opts.maxConnectionsPerOrigin ?? 2,
    pipelining: 1,
    keepAliveTimeout: keepAliveMs,
    keepAliveMaxTimeout: keepAliveMs,
    maxHeaderSize: MAX_HEADER_BYTES,
    connect,
  });
  let closed: Promise<void> | null = null;

  async function request(req: HttpRequest): Promise<HttpResponse> {
    const started = performance.now();
    const method = req.method ?? 'GET';
    let url: URL;
    try {
      url = new URL(req.url);
    } catch (cause) {
      throw new HttpFetchError('other', `fetching ${req.url}: invalid URL`, { cause });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new HttpFetchError('other', `fetching ${req.url}: unsupported protocol ${url.protocol}`);
    }
    if (closed) throw new HttpFetchError('other', `fetching ${req.url}: client is closed`);

    const headers = requestHeadersSent(req.headers, opts.userAgent);

    // Total timeout: aborting undici destroys the request (before headers) or the body stream.
    const ac = new AbortController();
    let timedOut: 'total' | 'headers' | 'slow' | null = null;
    let rateTimer: NodeJS.Timeout | undefined;
    let rawBytes = 0;
    const totalTimer = setTimeout(() => {
      timedOut ??= 'total';
      ac.abort(new Error(`total timeout after ${req.totalTimeoutMs} ms`));
    }, req.totalTimeoutMs);
    // Headers timeout, measured from when the request goes onto a connected socket. undici's own
    // headersTimeout (also passed, as a backstop) runs on a ~1 s resolution timer; this one is exact.
    let headersTimer: NodeJS.Timeout | undefined;

    const state: ExchangeState = {
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      phase: 'connecting',
      remoteAddress: null,
      onRequestStart() {
        clearTimeout(headersTimer);
        headersTimer = setTimeout(() => {
          timedOut ??= 'headers';
          ac.abort(new Error(`headers timeout after ${req.headersTimeoutMs} ms`));
        }, req.headersTimeoutMs);
      },
      onResponseStart() {
        clearTimeout(headersTimer);
      },
    };

    const timeoutKey = url.origin;
    const ct = connectTimeouts.get(timeoutKey);
    if (ct) {
      ct.ms = req.connectTimeoutMs;
      ct.refs++;
    } else {
      connectTimeouts.set(timeoutKey, { ms: req.connectTimeoutMs, refs: 1 });
    }

    const live = new Set<{ destroy(): unknown }>();
    const decodeErrors = new WeakSet<Error>();
    let rawBody: (Readable & { destroy(err?: Error): unknown }) | null = null;

    const fail = (err: unknown): HttpFetchError => {
      if (err instanceof HttpFetchError) return err;
      const where = `fetching ${req.url}`;
      if (timedOut === 'headers') {
        return new HttpFetchError('timeout', `${where}: headers timeout after ${req.headersTimeoutMs} ms`, { cause: err });
      }
      if (timedOut === 'total') {
        return new HttpFetchError('timeout', `${where}: total timeout after ${req.totalTimeoutMs} ms (${state.phase})`, { cause: err });
      }
      if (timedOut === 'slow') {
        return new HttpFetchError('timeout', `${where}: transfer too slow (${rawBytes} bytes in the body, under ${req.minBytesPerSecond} bytes/s)`, { cause: err });
      }
      const codes = errorCodes(err);
      if (codes.includes('UND_ERR_CONNECT_TIMEOUT')) {
        return new HttpFetchError('timeout', `${where}: connect timeout after ${req.connectTimeoutMs} ms`, { cause: err });
      }
      if (codes.includes('UND_ERR_HEADERS_TIMEOUT')) {
        return new HttpFetchError('timeout', `${where}: headers timeout after ${req.headersTimeoutMs} ms`, { cause: err });
      }
      if (err instanceof Error && decodeErrors.has(err)) {
        return new HttpFetchError('protocol', `${where}: decoding body: ${describe(err)}`, { cause: err });
      }
      const code = classify(codes);
      return new HttpFetchError(code, `${where}: ${state.phase}: ${describe(err)}`, { cause: err });
    };

    try {
      const dispatcher = agent.compose(
        (dispatch) => (dopts, handler) => dispatch(dopts, new ExchangeTap(handler, state)),
      );
      const res = await dispatcher.request({
        origin: url.origin,
        path: state.path,
        method,
        headers,
        signal: ac.signal,
        headersTimeout: req.headersTimeoutMs,
        bodyTimeout: req.totalTimeoutMs,
        // No redirect interceptor is installed on the agent: 3xx are returned as they are.
      });
      rawBody = res.body;
      live.add(res.body);

      const outHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined || name === 'set-cookie') continue;
        outHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
      }

      const fieldCount = Object.keys(res.headers).length;
      if (fieldCount > MAX_HEADER_FIELDS) {
        throw new HttpFetchError('protocol', `fetching ${req.url}: ${fieldCount} response header fields (at most ${MAX_HEADER_FIELDS})`);
      }
      const bodyStart = performance.now();
      const minRate = req.minBytesPerSecond ?? 0;
      if (minRate > 0) {
        const grace = req.minRateGraceMs ?? 5000;
        rateTimer = setInterval(() => {
          const elapsed = performance.now() - bodyStart;
          if (elapsed >= grace && (rawBytes * 1000) / elapsed < minRate) {
            timedOut ??= 'slow';
            ac.abort(new Error('transfer too slow'));
          }
        }, Math.min(1000, grace));
      }
      const counted: ByteSource = (async function* () {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          rawBytes += chunk.length;
          yield chunk;
        }
      })();
      const codings = method === 'HEAD' ? [] : parseContentEncoding(outHeaders['content-encoding']);
      let source: ByteSource = counted;
      // the decoder reading the raw body: its bytesWritten is the compressed input it has
      // actually inflated (rawBytes also counts bytes still waiting in stream buffers)
      let rawDecoder: { bytesWritten: number } | null = null;
      if (codings !== null) {
        for (const c of [...codings].reverse()) {
          const first = rawDecoder === null && source === counted;
          source = decodeStage(source, c, live, decodeErrors, first ? (d) => (rawDecoder = d) : undefined);
        }
      }

      const cap = Math.max(0, req.maxBodyBytes);
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const maxRatio = req.maxDecompressionRatio ?? 200;
      const compressed = codings !== null && codings.length > 0;
      for await (const chunk of source) {
        const consumed = (rawDecoder as { bytesWritten: number } | null)?.bytesWritten ?? rawBytes;
        if (compressed && size + chunk.length > BOMB_CHECK_FROM_BYTES && size + chunk.length > maxRatio * Math.max(1, consumed)) {
          throw new HttpFetchError(
            'protocol',
            `fetching ${req.url}: decompression bomb: ${consumed} compressed bytes inflate to more than ${size + chunk.length} (ratio over ${maxRatio})`,
          );
        }
        if (size + chunk.length > cap) {
          const room = cap - size;
          if (room > 0) chunks.push(chunk.subarray(0, room));
          size = cap;
          truncated = true;
          break; // return()s the iterator chain; everything is destroyed in finally below
        }
        chunks.push(chunk);
        size += chunk.length;
      }

      if (!truncated) {
        // undici hands a kept-alive socket back to its pool one event-loop turn after the
        // response completes (setImmediate). Waiting that turn lets an immediately following
        // request to the same origin reuse the socket instead of opening a second connection.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }

      return {
        status: res.statusCode,
        headers: outHeaders,
        body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size),
        truncated,
        durationMs: performance.now() - started,
        remoteAddress: state.remoteAddress,
        url: req.url,
      };
    } catch (err) {
      throw fail(err);
    } finally {
      clearTimeout(totalTimer);
      clearTimeout(headersTimer);
      clearInterval(rateTimer);
      if (pendingRemote === state) pendingRemote = null;
      for (const s of live) s.destroy();
      if (rawBody && !rawBody.destroyed) rawBody.destroy();
      const entry = connectTimeouts.get(timeoutKey);
      if (entry && --entry.refs <= 0) connectTimeouts.delete(timeoutKey);
    }
  }

  return {
    request,
    close() {
      closed ??= agent.close();
      return closed;
    },
  };
}
