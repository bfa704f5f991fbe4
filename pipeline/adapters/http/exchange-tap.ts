/**
 * What undici does not tell a request's caller: which phase a failed exchange was in
 * (for the error message), the address of the socket that carried it (for the per-IP
 * cap and the archive) and the protocols it spoke (HTTP/2 or HTTP/1.1, TLS version: for the
 * archive).
 *
 * remoteAddress: undici does not expose the socket to request handlers. The documented
 * `undici:client:sendHeaders` diagnostics channel carries it, and undici's HTTP/1 writer calls
 * the handler's onRequestStart and publishes sendHeaders synchronously one after the other
 * for the same request, so a handler marks itself "pending" in onRequestStart and the
 * subscriber hands it the socket's address (checked against origin + path for safety).
 * The address is the one the connector chose (markConnectedAddress): through a proxy the
 * socket's own peer is the proxy, and the server's address is the one it was asked to reach.
 * Over HTTP/2 undici's stream writer does the same (onRequestStart, then sendHeaders with the
 * session's socket), so the socket's ALPN protocol says which version the request went out in.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import type { HttpProtocol } from '../../../ports/http.js';
import { protocolOf } from './tls-options.js';

export interface ExchangeState {
  origin: string;
  path: string;
  phase: 'connecting' | 'waiting for response headers' | 'reading body';
  remoteAddress: string | null;
  /** the protocols of the connection that carried the request, once it went out */
  protocol: HttpProtocol | null;
  /** the host is exempted from certificate checks (`--insecure-host`): the exchange says so */
  unverifiedHost: boolean;
  /** Called when the request is handed to a connected socket (may repeat on undici retries). */
  onRequestStart(): void;
  /** Called when final (non-1xx) response headers arrive. */
  onResponseStart(): void;
}

let pendingRemote: ExchangeState | null = null;

const CONNECTED_ADDRESS = Symbol('crawler.connectedAddress');

/** The server address a socket leads to (a tunnel's target, not the proxy), set by the connector. */
export function markConnectedAddress(socket: Socket, address: string): void {
  (socket as Socket & { [CONNECTED_ADDRESS]?: string })[CONNECTED_ADDRESS] = address;
}

function connectedAddress(socket: Socket | undefined): string | null {
  if (!socket) return null;
  return (socket as Socket & { [CONNECTED_ADDRESS]?: string })[CONNECTED_ADDRESS] ?? socket.remoteAddress ?? null;
}
let sendHeadersSubscribed = false;

function onSendHeaders(message: unknown): void {
  const p = pendingRemote;
  if (p === null) return;
  pendingRemote = null;
  const m = message as { request?: { origin?: unknown; path?: unknown }; socket?: Socket };
  if (m.request && String(m.request.origin) === p.origin && m.request.path === p.path) {
    p.remoteAddress = connectedAddress(m.socket);
    p.protocol = protocolOf(m.socket, p.unverifiedHost);
  }
}

export function ensureSendHeadersSubscription(): void {
  if (sendHeadersSubscribed) return;
  sendHeadersSubscribed = true;
  diagnosticsChannel.subscribe('undici:client:sendHeaders', onSendHeaders);
}

/** Forwards every handler callback; records the phase and arms remote-address capture. */
export class ExchangeTap implements Dispatcher.DispatchHandler {
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

/** The exchange ended: a sendHeaders event that never came must not be matched to a later request. */
export function forgetPending(state: ExchangeState): void {
  if (pendingRemote === state) pendingRemote = null;
}
