/**
 * The crawler's HTTP client (the HTTP port, ports/http.ts, over undici): one pooled
 * keep-alive Agent, no redirect following, streaming decompression with a hard cap on
 * decoded bytes (body-decoding.ts), three timeouts (connect, first response headers, whole
 * request including body) and a slow-transfer cut-off, connections placed by `--resolve`
 * and checked by the SSRF guard, several addresses raced, proxies tunnelled through
 * (ssrf-connector.ts), errors mapped to the port's codes (error-mapping.ts). A caller's
 * `wantBody` may decline a body from its status and headers: it is then never read.
 *
 * HTTPS offers HTTP/2 by ALPN and speaks it where the server picks it, HTTP/1.1 otherwise;
 * TLS trust and the hosts exempted from verification are in tls-options.ts. HTTP/2's
 * multiplexing is not used (one request at a time per connection, as over HTTP/1.1): the
 * crawler has one request in flight per host, so a host's requests follow one another on
 * one kept-alive connection whichever version it speaks.
 */
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { Agent } from 'undici';
import { HttpFetchError, requestHeadersSent, type HttpClient, type HttpRequest, type HttpResponse } from '../../../ports/http.js';
import { allowList, refusal } from '../address-policy.js';
import { AddressHealth } from '../address-health.js';
import { ConnectTargets } from '../connect-targets.js';
import type { DnsCache } from '../dns-cache.js';
import type { ResolveRule } from '../resolve-map.js';
import { parseContentEncoding, readCappedBody, type ByteSource } from './body-decoding.js';
import { fetchError } from './error-mapping.js';
import { ensureSendHeadersSubscription, ExchangeTap, forgetPending, type ExchangeState } from './exchange-tap.js';
import { proxyRouter, type ProxyCredentials, type ProxySettings } from './proxy-config.js';
import { defaultDnsCache, guardedConnector, type Guard } from './ssrf-connector.js';
import { connectTls, type TlsTrust } from './tls-options.js';

/** Response headers: at most this many bytes (undici's parser) and this many fields. */
export const MAX_HEADER_BYTES = 32 * 1024;
export const MAX_HEADER_FIELDS = 256;

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
  /** the forward proxies and the hosts that bypass them (no proxy by default) */
  proxy?: ProxySettings;
  /** Proxy-Authorization credentials by proxy origin (`http://host:port`); kept out of settings and logs */
  proxyCredentials?: ReadonlyMap<string, ProxyCredentials>;
  /** addresses that failed to connect lately, shared with the gate's per-IP accounting (hostAddressResolver) */
  addressHealth?: AddressHealth;
  /** CAs trusted besides Node's default store, and hosts whose certificates are not verified. Default: none, none. */
  tls?: TlsTrust;
  /** false: HTTP/1.1 only, HTTP/2 is not offered. Default true. */
  http2?: boolean;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export function createHttpClient(opts: HttpClientOptions): HttpClient {
  ensureSendHeadersSubscription();
  const rules = [...opts.resolve];
  const guard: Guard | null = opts.guard === false ? null : { allowed: allowList(opts.allowNetworks ?? []) };
  const health = opts.addressHealth ?? new AddressHealth();
  const targets = new ConnectTargets(rules, opts.dns ?? defaultDnsCache(), guard, health);
  const keepAliveMs = opts.keepAliveMs ?? 4000;
  // the connect timeout and charged address of the latest request in flight per origin (see guardedConnector)
  const connectTimeouts = new Map<string, { ms: number; refs: number; address: string | null }>();
  const tlsFor = connectTls(opts.tls);
  const agent = new Agent({
    connections: opts.maxConnectionsPerOrigin ?? 2,
    // over HTTP/2 too: one stream at a time per connection (see above)
    pipelining: 1,
    allowH2: opts.http2 ?? true,
    keepAliveTimeout: keepAliveMs,
    keepAliveMaxTimeout: keepAliveMs,
    maxHeaderSize: MAX_HEADER_BYTES,
    connect: guardedConnector({
      targets,
      health,
      recheck: (address) => (guard ? refusal(address, guard.allowed, false) : null),
      proxyFor: opts.proxy ? proxyRouter(opts.proxy, opts.proxyCredentials) : null,
      timeoutFor: (origin) => connectTimeouts.get(origin)?.ms ?? DEFAULT_CONNECT_TIMEOUT_MS,
      preferFor: (origin) => connectTimeouts.get(origin)?.address ?? null,
      tlsFor,
    }),
  });
  let closed: Promise<void> | null = null;

  async function request(req: HttpRequest): Promise<HttpResponse> {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const url = checkedUrl(req.url);
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
      protocol: null,
      unverifiedHost: url.protocol === 'https:' && tlsFor(url.hostname).key === 'unverified',
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
      ct.address = req.address ?? null;
      ct.refs++;
    } else {
      connectTimeouts.set(timeoutKey, { ms: req.connectTimeoutMs, refs: 1, address: req.address ?? null });
    }

    const live = new Set<{ destroy(): unknown }>();
    const decodeErrors = new WeakSet<Error>();
    let rawBody: (Readable & { destroy(err?: Error): unknown }) | null = null;

    try {
      const dispatcher = agent.compose((dispatch) => (dopts, handler) => dispatch(dopts, new ExchangeTap(handler, state)));
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
      const { headers: outHeaders, lines: headerLines } = responseHeaders(res.headers, req.url);
      if (method !== 'HEAD' && req.wantBody && !req.wantBody(res.statusCode, outHeaders)) {
        // not one byte of it is wanted: the stream is destroyed below (on HTTP/1.1 that
        // closes the connection, the only way to stop a body that is on its way)
        return { status: res.statusCode, headers: outHeaders, ...(headerLines ? { headerLines } : {}), body: new Uint8Array(0), truncated: false, bodyNotRead: true, durationMs: performance.now() - started, remoteAddress: state.remoteAddress, url: req.url };
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
      const { body, truncated } = await readCappedBody(counted, codings, {
        url: req.url,
        maxBytes: req.maxBodyBytes,
        maxRatio: req.maxDecompressionRatio ?? 200,
        rawBytes: () => rawBytes,
        live,
        decodeErrors,
      });

      if (!truncated) {
        // undici hands a kept-alive socket back to its pool one event-loop turn after the
        // response completes (setImmediate). Waiting that turn lets an immediately following
        // request to the same origin reuse the socket instead of opening a second connection.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }

      return {
        status: res.statusCode,
        headers: outHeaders,
        ...(headerLines ? { headerLines } : {}),
        body,
        truncated,
        durationMs: performance.now() - started,
        remoteAddress: state.remoteAddress,
        url: req.url,
        ...(state.protocol ? { protocol: state.protocol } : {}),
      };
    } catch (err) {
      throw fetchError(err, { ...req, url: req.url, phase: state.phase, timedOut, rawBytes, decodeErrors });
    } finally {
      clearTimeout(totalTimer);
      clearTimeout(headersTimer);
      clearInterval(rateTimer);
      forgetPending(state);
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

function checkedUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new HttpFetchError('other', `fetching ${raw}: invalid URL`, { cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpFetchError('other', `fetching ${raw}: unsupported protocol ${url.protocol}`);
  return url;
}

/**
 * Lowercased names; repeated headers joined with ', ' (and their lines kept apart in `lines`);
 * set-cookie dropped; at most MAX_HEADER_FIELDS.
 */
function responseHeaders(raw: Record<string, string | string[] | undefined>, url: string): { headers: Record<string, string>; lines?: Record<string, string[]> } {
  const fieldCount = Object.keys(raw).length;
  if (fieldCount > MAX_HEADER_FIELDS) {
    throw new HttpFetchError('protocol', `fetching ${url}: ${fieldCount} response header fields (at most ${MAX_HEADER_FIELDS})`);
  }
  const headers: Record<string, string> = {};
  let lines: Record<string, string[]> | undefined;
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || name === 'set-cookie') continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
    if (Array.isArray(value) && value.length > 1) (lines ??= {})[name] = value;
  }
  return lines ? { headers, lines } : { headers };
}
