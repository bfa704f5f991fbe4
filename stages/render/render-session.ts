/**
 * The requests of one render: each one the page makes is judged (request-policy.ts), taken
 * from the process's cache of scripts and stylesheets, or made by the crawler's own HTTP
 * client (its `--resolve` rules, SSRF guard, timeouts and size caps, its User-Agent) after
 * robots.txt and the host's turn (turn-wait.ts), and released with what the answer says
 * about the host's pacing, like a fetch. Every exchange made is kept for the archive.
 */
import { HttpFetchError, type HttpResponse } from '../../ports/http.js';
import type { BrowserAnswer, BrowserRequest } from '../../ports/browser.js';
import type { Emit, StageContext } from '../../pipeline/stage.js';
import type { RenderRequest } from '../../schemas/index.js';
import { HELD_LEASE_MS, judgeFetch, keepTurn, pacedFrom, releaseTurn, type HostLease, type KeptTurn } from '../shared/politeness/index.js';
import { exchangeEmit } from '../shared/messages/exchange-emit.js';
import { placeBody, type PlacedBody } from '../shared/messages/page-body.js';
import { hostDelayMs } from '../shared/robots/robots-refresh.js';
import { robotsVerdict, waitForTurn, type RenderWait, type Sleep } from './turn-wait.js';
import { blockCategory, blockedByPolicy } from './request-policy.js';
import { SubresourceCache } from './subresource-cache.js';
import { MAX_BYTES_PER_RENDER, MAX_RENDER_LOG_LINES, MAX_REQUESTS_PER_RENDER } from './spec.js';

/** A turn's lease is renewed (keepTurn) up to the request's timeout and this much more; a render process that dies holds its host HELD_LEASE_MS at most. */
const LEASE_SLACK_MS = 10_000;
/** A request started near the deadline still gets this long: the page may be waiting for it to settle. */
const MIN_REQUEST_MS = 1_000;
/** Request headers of the page passed on (the client sets its own User-Agent, Accept-Encoding and Host). */
const PASSED_HEADERS = ['accept', 'accept-language', 'referer', 'content-type', 'origin'];

const hostnameOf = (url: string) => {
  const h = new URL(url).hostname.toLowerCase();
  return h.endsWith('.') ? h.slice(0, -1) : h;
};

export class RenderSession {
  private readonly wait: RenderWait;
  /** robots.txt and subresource exchanges, for the archive */
  readonly exchanges: Emit[];
  readonly counts = { fetched: 0, cached: 0, failed: 0, blocked: 0 };
  readonly blockedBy = new Map<string, number>();
  readonly log: string[] = [];
  private requests = 0;
  private bytes = 0;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** the last request of each host in this render: the next waits for it (one in flight per host anyway) */
  private readonly hostTail = new Map<string, Promise<unknown>>();
  private closed = false;
  /** storing a large response body beside its exchange failed: the render is tried again (see close) */
  private storeFailure: Error | null = null;

  constructor(
    private readonly ctx: StageContext,
    private readonly page: RenderRequest,
    private readonly cache: SubresourceCache,
    deadline: number,
    sleep: Sleep,
  ) {
    this.exchanges = [];
    this.wait = { ctx, deadline, sleep, archive: this.exchanges };
  }

  /** When the page's requests stop being made: what is not due by then is blocked. */
  get deadline(): number {
    return this.wait.deadline;
  }

  /**
   * The browser starts the render's clock now (it may first have started, or waited for a
   * free page): the requests' deadline is the browser's. Left at the time the render was
   * asked for, it could pass seconds before the browser's, and the page's requests, blocked
   * at once, would leave its network quiet: "settled" where the render was in fact cut.
   */
  restartClock(timeoutMs: number): void {
    this.wait.deadline = this.ctx.clock.now() + timeoutMs;
  }

  /** The browser's `onRequest`: every request of the page comes here. */
  answer(req: BrowserRequest): Promise<BrowserAnswer> {
    const p = this.decide(req);
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
    return p;
  }

  /**
   * No more requests are made (late ones are blocked); resolves once those under way are done
   * and their hosts released. Throws when a body could not be stored for the archive: the
   * render fails as an unavailable stream would fail its publish, and is tried again.
   */
  async close(): Promise<void> {
    this.closed = true;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    if (this.storeFailure) throw this.storeFailure;
  }

  private note(line: string): void {
    if (this.log.length < MAX_RENDER_LOG_LINES) this.log.push(line);
  }

  private block(req: BrowserRequest, reason: string, outcome: 'blocked' | 'failed' = 'blocked'): BrowserAnswer {
    this.counts[outcome]++;
    const category = blockCategory(reason);
    this.blockedBy.set(category, (this.blockedBy.get(category) ?? 0) + 1);
    this.note(`${outcome} ${req.resourceType} ${req.url}: ${reason}`);
    return { kind: 'blocked', reason };
  }

  private fromCache(req: BrowserRequest): BrowserAnswer | null {
    const cached = this.cache.get(req.url, this.ctx.clock.now());
    if (!cached) return null;
    this.counts.cached++;
    this.note(`cached ${req.resourceType} ${req.url}`);
    return respond(cached);
  }

  private async decide(req: BrowserRequest): Promise<BrowserAnswer> {
    if (this.closed) return this.block(req, 'late: the render had ended');
    const policy = blockedByPolicy(req);
    if (policy) return this.block(req, policy);
    const cached = this.fromCache(req);
    if (cached) return cached;
    if (this.requests >= MAX_REQUESTS_PER_RENDER) return this.block(req, `budget: ${MAX_REQUESTS_PER_RENDER} requests made`);
    if (this.bytes >= MAX_BYTES_PER_RENDER) return this.block(req, `budget: ${MAX_BYTES_PER_RENDER} bytes received`);
    // the request's number in this render names its capture
    const n = ++this.requests;
    const host = hostnameOf(req.url);
    // the page's requests to one host queue here, in the order it made them, rather than all
    // polling the host's slot in the bucket at once
    const before = this.hostTail.get(host) ?? Promise.resolve();
    const turn = before.then(() => this.inTurn(req, n, host));
    const tail = turn.catch(() => undefined);
    this.hostTail.set(host, tail);
    void tail.then(() => {
      if (this.hostTail.get(host) === tail) this.hostTail.delete(host);
    });
    return turn;
  }

  private async inTurn(req: BrowserRequest, n: number, host: string): Promise<BrowserAnswer> {
    // an earlier request of the page for the same script may have filled the cache meanwhile
    const cached = this.fromCache(req);
    if (cached) return cached;
    const robots = await robotsVerdict(this.wait, req.url, host);
    if ('blocked' in robots) return this.block(req, robots.blocked);
    return this.fetch(req, n, host, hostDelayMs(robots.crawlDelayMs, this.ctx, host));
  }

  /** Makes the request in the host's turn; releases the turn with what the answer said. */
  private async fetch(req: BrowserRequest, n: number, host: string, delayMs: number): Promise<BrowserAnswer> {
    const s = this.ctx.settings;
    const timeoutMs = Math.min(s.totalTimeoutMs, Math.max(MIN_REQUEST_MS, this.deadline - this.ctx.clock.now()));
    const turn = await waitForTurn(this.wait, host, HELD_LEASE_MS);
    if ('blocked' in turn) return this.block(req, turn.blocked);
    const kept = keepTurn(this.ctx, turn.lease, HELD_LEASE_MS, this.ctx.clock.now() + timeoutMs + LEASE_SLACK_MS);
    const headers: Record<string, string> = {};
    for (const name of PASSED_HEADERS) if (req.headers[name] !== undefined) headers[name] = req.headers[name]!;
    const start = this.ctx.clock.now();
    let res: HttpResponse | null = null;
    let failure: HttpFetchError | null = null;
    try {
      res = await this.ctx.http.request({
        url: req.url,
        method: req.method === 'HEAD' ? 'HEAD' : 'GET',
        headers,
        connectTimeoutMs: Math.min(s.connectTimeoutMs, timeoutMs),
        headersTimeoutMs: Math.min(s.headersTimeoutMs, timeoutMs),
        totalTimeoutMs: timeoutMs,
        maxBodyBytes: Math.max(1024, Math.min(s.maxPageBytes, MAX_BYTES_PER_RENDER - this.bytes)),
        maxDecompressionRatio: s.maxDecompressionRatio,
        minBytesPerSecond: s.minTransferRate,
      });
    } catch (err) {
      if (!(err instanceof HttpFetchError)) {
        await this.release(turn.lease, kept, delayMs, null, null, start);
        throw err;
      }
      failure = err;
    }
    await this.release(turn.lease, kept, delayMs, res, failure, start);
    const p = this.page;
    let placed: PlacedBody | undefined;
    try {
      placed = res ? await placeBody(this.ctx, 'render', host, res.body) : undefined;
    } catch (err) {
      this.storeFailure ??= err as Error;
      return this.block(req, `storing its ${res!.body.length}-byte body failed: ${(err as Error).message}`, 'failed');
    }
    const captureId = `${p.fetch_id}:render:${n}`;
    this.exchanges.push(
      exchangeEmit(
        {
          kind: res ? 'response' : 'failure',
          captureId,
          fetchId: p.fetch_id,
          url: req.url,
          host,
          domain: '',
          depth: p.depth,
          fetchTime: start,
          durationMs: this.ctx.clock.now() - start,
          requestHeaders: headers,
          userAgent: s.userAgent,
          res,
          ...(placed ? { placed } : {}),
          failure: failure ? `${failure.code}: ${failure.message}` : null,
          robots: `allowed (a ${req.resourceType} of ${p.url}, rendered)`,
          // a job's page: its requests are archived under the job's crawl id, like the page
          job: p.job,
        },
        s.partitions,
      ),
    );
    if (!res) return this.block(req, `${failure!.code === 'refused' ? 'ssrf' : failure!.code}: ${failure!.message}`, 'failed');
    this.bytes += res.body.length;
    this.counts.fetched++;
    this.note(`${res.status} ${req.resourceType} ${req.url}`);
    if (SubresourceCache.cacheable(req.resourceType, res)) this.cache.put(req.url, res, this.ctx.clock.now());
    return respond(res);
  }

  /** Frees the host, its next request due after its delay (and backoff, Retry-After: the answer's feedback, as for a fetch). */
  private async release(lease: HostLease, kept: KeptTurn, delayMs: number, res: HttpResponse | null, err: HttpFetchError | null, start: number): Promise<void> {
    kept.stop();
    const end = this.ctx.clock.now();
    const { feedback } = judgeFetch(res, err, delayMs, Math.round(end - start), end);
    await releaseTurn(this.ctx, lease, { from: pacedFrom(end), feedback });
  }
}

const respond = (res: HttpResponse): BrowserAnswer => ({ kind: 'response', status: res.status, headers: res.headers, body: res.body });
