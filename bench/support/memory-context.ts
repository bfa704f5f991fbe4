/**
 * A StageContext in memory, for unit tests of a stage's `handle` and for benches that measure a
 * stage without a server: no NATS, no network. Every KV bucket is a MemoryKvStore, the clock
 * only moves when the caller moves it, and HTTP answers come from a function given by the caller
 * (every request is recorded). Tests look at outcomes with test/support/fake-context.ts.
 */
import { HttpFetchError, type HttpClient, type HttpRequest, type HttpResponse } from '../../ports/http.js';
import { MemoryKvStore } from './memory-kv-store.js';
import { silentLogger } from '../../pipeline/logger.js';
import { StageMetrics } from '../../pipeline/metrics.js';
import { parseSettings, type CrawlSettingsInput } from '../../pipeline/settings.js';
import type { BackgroundContext, Clock, Emit, StageInput } from '../../pipeline/stage.js';
import type { ConsumerPosition, Published, Publisher, StoredMessage, StreamAccess } from '../../ports/streams.js';
import type { BodyStore } from '../../ports/bodies.js';
import { chunkedBodyStore } from '../../pipeline/body-chunks.js';

/** Default start time of the fake clock: 2024-01-01T00:00:00Z (any fixed, non-zero value). */
export const T0 = Date.UTC(2024, 0, 1);

export interface FakeClock extends Clock {
  now(): number;
  /** moves the clock forward (or back, with a negative value) */
  advance(ms: number): void;
  set(ms: number): void;
}

export function fakeClock(start = T0): FakeClock {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
    set(ms: number) {
      t = ms;
    },
  };
}

/** Answers a request, or throws an HttpFetchError (a network failure). May be async. */
export type Responder = (req: HttpRequest) => HttpResponse | Promise<HttpResponse>;

export interface FakeHttp extends HttpClient {
  /** every request made, in order */
  readonly requests: HttpRequest[];
  /** the responder in use; tests may replace it at any time */
  respond: Responder;
  /** requests whose URL path is `path` (e.g. '/robots.txt') */
  requestsTo(path: string): HttpRequest[];
}

/** A response as the real client returns it. `body` may be a string (UTF-8). */
export function httpResponse(
  status: number,
  opts: { headers?: Record<string, string>; body?: string | Uint8Array; url?: string; truncated?: boolean; durationMs?: number } = {},
): HttpResponse {
  const body = typeof opts.body === 'string' ? new TextEncoder().encode(opts.body) : (opts.body ?? new Uint8Array(0));
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = v;
  return {
    status,
    headers,
    body,
    truncated: opts.truncated ?? false,
    durationMs: opts.durationMs ?? 0,
    remoteAddress: '192.0.2.1',
    url: opts.url ?? '',
  };
}

export const htmlResponse = (html: string, status = 200) =>
  httpResponse(status, { headers: { 'content-type': 'text/html; charset=utf-8' }, body: html });

/** The default responder: 404 for everything (so robots.txt means "no rules"). */
export const notFound: Responder = (req) => httpResponse(404, { url: req.url });

/** A responder that fails every request with a network error of the given code. */
export const networkError =
  (code: HttpFetchError['code'] = 'connect', message = 'connection refused', cause?: { code: string; message: string }): Responder =>
  (req) => {
    // the cause is what the real client wraps: the system error (ENOTFOUND, ...) with its own message
    const inner = cause ? Object.assign(new Error(cause.message), { code: cause.code }) : undefined;
    throw new HttpFetchError(code, `fetching ${req.url}: ${message}`, inner ? { cause: inner } : undefined);
  };

export function fakeHttp(respond: Responder = notFound): FakeHttp {
  const requests: HttpRequest[] = [];
  const http: FakeHttp = {
    requests,
    respond,
    async request(req: HttpRequest): Promise<HttpResponse> {
      requests.push(req);
      const res = await http.respond(req);
      // as the real client: a body the caller declines from the headers is not read
      if (req.wantBody && req.method !== 'HEAD' && !req.wantBody(res.status, res.headers)) {
        return { ...res, body: new Uint8Array(0), truncated: false, bodyNotRead: true, url: res.url || req.url };
      }
      return { ...res, url: res.url || req.url };
    },
    async close() {},
    requestsTo(path: string) {
      return requests.filter((r) => new URL(r.url).pathname === path);
    },
  };
  return http;
}

export interface FakeKv {
  hosts: MemoryKvStore;
  traps: MemoryKvStore;
  robots: MemoryKvStore;
  seen: MemoryKvStore;
  seenKeys: MemoryKvStore;
  fingerprints: MemoryKvStore;
  scope: MemoryKvStore;
  validators: MemoryKvStore;
  digests: MemoryKvStore;
  jobs: MemoryKvStore;
  importance: MemoryKvStore;
}

/**
 * Streams in memory, with JetStream's two properties the stages rely on: one sequence
 * across all subjects, and a repeated msgId answered with the first copy's sequence.
 */
export class MemoryStreams implements StreamAccess, Publisher {
  readonly messages: Array<StoredMessage & { subject: string; msgId?: string }> = [];
  /** set to make every publish fail (a server that is down) */
  failPublish = false;

  /** stores one message, as a publish by anyone would; its sequence (the first copy's, for a repeated msgId) */
  async append(subject: string, data: Uint8Array, msgId?: string): Promise<number> {
    return (await this.publish([{ subject, data, ...(msgId ? { msgId } : {}) }]))[0]!.seq;
  }

  /** the runner's publisher, as background work gets it */
  async publish(messages: readonly Emit[]): Promise<Published[]> {
    if (this.failPublish) throw new Error('publish failed: no responders');
    return messages.map(({ subject, data, msgId }) => {
      const dup = msgId ? this.messages.find((m) => m.msgId === msgId) : undefined;
      if (dup) return { subject, seq: dup.seq, duplicate: true };
      const seq = this.messages.length + 1;
      this.messages.push({ seq, subject, data, ...(msgId ? { msgId } : {}) });
      return { subject, seq, duplicate: false };
    });
  }

  async readNext(_stream: string, subject: string, fromSeq: number): Promise<StoredMessage | null> {
    const m = this.messages.find((x) => x.seq >= fromSeq && x.subject === subject);
    return m ? { seq: m.seq, data: m.data } : null;
  }

  /** sequences deleted through deleteMessage, in order */
  readonly deleted: number[] = [];

  async deleteMessage(_stream: string, seq: number): Promise<boolean> {
    const i = this.messages.findIndex((m) => m.seq === seq);
    if (i < 0) return false;
    this.messages.splice(i, 1);
    this.deleted.push(seq);
    return true;
  }

  async *replay(_stream: string, subject: string, fromSeq: number, toSeq: number): AsyncIterable<StoredMessage> {
    for (const m of this.messages) if (m.subject === subject && m.seq >= fromSeq && m.seq <= toSeq) yield { seq: m.seq, data: m.data };
  }

  /** consumer positions a test sets (durable name → position); unset ones are at the start */
  readonly positions = new Map<string, ConsumerPosition>();

  async consumerPosition(_stream: string, durable: string): Promise<ConsumerPosition> {
    return this.positions.get(durable) ?? { ackFloor: 0, delivered: 0, pending: 0 };
  }

  /** messages published under `prefix` (e.g. 'crawl.ready') */
  on(prefix: string): Array<StoredMessage & { subject: string }> {
    return this.messages.filter((m) => m.subject === prefix || m.subject.startsWith(`${prefix}.`));
  }

  /** removes messages (as retention would): those for which `drop` says so */
  remove(drop: (m: StoredMessage & { subject: string }) => boolean): void {
    for (let i = this.messages.length - 1; i >= 0; i--) if (drop(this.messages[i]!)) this.messages.splice(i, 1);
  }

  /** the body store over these streams, as the real one is over CRAWL_BODIES (the chunks are messages here) */
  bodyStore(maxPayloadBytes: number): BodyStore {
    return chunkedBodyStore(
      {
        name: 'CRAWL_BODIES',
        publish: async (subject, data, msgId) => (await this.publish([{ subject, data, msgId }]))[0]!,
        get: async (seq) => this.messages.find((m) => m.seq === seq) ?? null,
      },
      maxPayloadBytes,
    );
  }
}

/** A stage's context and a background task's (the publisher is the same memory streams). */
export interface FakeContext extends BackgroundContext {
  clock: FakeClock;
  bodies: BodyStore;
  http: FakeHttp;
  kv: FakeKv;
  streams: MemoryStreams;
  publisher: MemoryStreams;
}

export interface FakeContextOptions {
  /** crawl settings on top of `{ crawlId: 'test' }` (parsed like the real ones) */
  settings?: Partial<CrawlSettingsInput>;
  /** HTTP answers; default: 404 for everything */
  respond?: Responder;
  /** start of the fake clock; default T0 */
  now?: number;
  maxPayloadBytes?: number;
  /** replace single buckets (e.g. to share one between two contexts) */
  kv?: Partial<FakeKv>;
  /** share streams between contexts (two gates, a gate and a fetcher) */
  streams?: MemoryStreams;
  /** host -> address for the per-IP cap; default: every host on 192.0.2.1 */
  addresses?: Record<string, string | null>;
}

export function createFakeContext(overrides: FakeContextOptions = {}): FakeContext {
  const streams = overrides.streams ?? new MemoryStreams();
  const maxPayloadBytes = overrides.maxPayloadBytes ?? 8 * 1024 * 1024;
  return {
    settings: parseSettings({ crawlId: 'test', ...overrides.settings }),
    clock: fakeClock(overrides.now ?? T0),
    log: silentLogger(),
    metrics: new StageMetrics(),
    kv: {
      hosts: overrides.kv?.hosts ?? new MemoryKvStore(),
      traps: overrides.kv?.traps ?? new MemoryKvStore(),
      robots: overrides.kv?.robots ?? new MemoryKvStore(),
      seen: overrides.kv?.seen ?? new MemoryKvStore(),
      seenKeys: overrides.kv?.seenKeys ?? new MemoryKvStore(),
      fingerprints: overrides.kv?.fingerprints ?? new MemoryKvStore(),
      scope: overrides.kv?.scope ?? new MemoryKvStore(),
      validators: overrides.kv?.validators ?? new MemoryKvStore(),
      digests: overrides.kv?.digests ?? new MemoryKvStore(),
      jobs: overrides.kv?.jobs ?? new MemoryKvStore(),
      importance: overrides.kv?.importance ?? new MemoryKvStore(),
    },
    http: fakeHttp(overrides.respond),
    maxPayloadBytes,
    streams,
    publisher: streams,
    // bodies too large for a message are chunks in the same memory streams (`crawl.bodies.<p>`)
    bodies: streams.bodyStore(maxPayloadBytes),
    resolveHost: async (host) => (overrides.addresses && host in overrides.addresses ? overrides.addresses[host]! : '192.0.2.1'),
  };
}

/** Wraps a decoded message as a stage input (first delivery, stream sequence 1 unless told). */
export function stageInput<T>(message: T, opts: { subject?: string; deliveryCount?: number; streamSeq?: number; publishedAt?: number } = {}): StageInput<T> {
  return {
    subject: opts.subject ?? 'test.subject',
    message,
    deliveryCount: opts.deliveryCount ?? 1,
    streamSeq: opts.streamSeq ?? 1,
    ...(opts.publishedAt !== undefined ? { publishedAt: opts.publishedAt } : {}),
  };
}
