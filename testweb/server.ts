// One HTTP server on 127.0.0.1 that serves every host of the test web, chosen by the Host
// header. It records every request (robots.txt and 404s included) with arrival and finish
// times, so tests can audit politeness: the gap between requests to a host, and whether two
// requests to one host were ever in flight at once.
// With `politeness` it also serves the hosts of politeness-hosts.ts, and listens on a second
// address (127.0.0.2, same port) for the sharedip hosts, so per-IP limits can be observed.
// With `hostile` it also serves hostile.test (hostile-hosts.ts): endless and dripping bodies,
// compression bombs, lying framing, redirect loops, SSRF redirects, odd charsets, and so on.
// With `traps` it also serves the crawl-trap hosts *.trap.test (trap-hosts.ts).
// With `render` it also serves the hosts whose pages need a browser, *.render.test
// (render-hosts.ts).
// With `fresh` it also serves *.fresh.test (fresh-hosts.ts): pages that change on a known
// schedule, with validators, 304s and sitemaps.
// With `examples` it also serves shop.examples.test and topics.examples.test (example-hosts.ts):
// product pages in JSON-LD and microdata, and pages on topics for a focused crawl.
// With `directives` it also serves www.directives.test (directive-hosts.ts): pages that say
// noindex and nofollow by X-Robots-Tag and by meta tags named for a crawler.
// With `network` it also serves *.net.test (network-hosts.ts): a host on [::1] only (it
// listens there too) and one whose first address (127.0.0.3) never answers a connection.
// With `sitemapHosts` it also serves *.sitemaponly.test (sitemap-hosts.ts): a site whose pages
// are linked only from its sitemaps, which also list URLs a crawler must not take from them.
// With `idRouted` it also serves *.ids.test (id-routed-hosts.ts): a shop and a forum with
// thousands of distinct pages under one URL pattern each.
// With `failing` it also serves failing.test and dead.failing.test (failing-hosts.ts): endpoints
// that hang, drip, reset and time out beside working pages, and a host dead after its robots.txt.
// With `bigPages` it also serves big.test (big-page-hosts.ts): HTML pages of 5 and 6 MiB.
// With `scopeHosts` it also serves a few small sites on different registrable domains that link to each other (scope-hosts.ts).
// With `broad` it also serves the broad web (broad-hosts.ts): thousands of registrable domains
// d00000.test ... with a few pages each on many loopback addresses 127.77.x.y (it listens on
// each, same port), named by a DNS server of its own (dns-server.ts) that it starts too.
// With `tls` the same port also answers HTTPS, HTTP/2 offered first (tls-hosts.ts): every host
// above, over TLS signed by a CA the web makes, plus the bad-certificate hosts *.badtls.test.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest } from 'node:http2';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { createHash } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { buildSiteModel } from './site-model.js';
import { renderPage } from './render-page.js';
import { resourceKey } from './url-forms.js';
import type { HostModel, HtmlResource, SiteModel } from './model-types.js';
import { PolitenessHosts, SHARED_IP_ADDRESS, type PolitenessHostsOptions } from './politeness-hosts.js';
import { HostileHosts, type HostileHostsOptions } from './hostile-hosts.js';
import { TrapHosts } from './trap-hosts.js';
import { RenderHosts, type RenderHostsOptions } from './render-hosts.js';
import { FreshHosts, type FreshHostsOptions } from './fresh-hosts.js';
import { DirectiveHosts } from './directive-hosts.js';
import { ExampleHosts } from './example-hosts.js';
import { NetworkHosts, SILENT_ADDRESS, startBlackHole } from './network-hosts.js';
import { SitemapHosts } from './sitemap-hosts.js';
import { IdRoutedHosts, type IdRoutedHostsOptions } from './id-routed-hosts.js';
import { FailingHosts, type FailingHostsOptions } from './failing-hosts.js';
import { BigPageHosts } from './big-page-hosts.js';
import { ScopeHosts } from './scope-hosts.js';
import { httpsLinks, TlsHosts, type TlsHostsOptions } from './tls-hosts.js';
import { BroadHosts, type BroadHostsOptions } from './broad-hosts.js';
import { startTestDns } from './dns-server.js';

export interface StartTestWebOptions {
  /** Site hosts h00.site.test ... (default 20). */
  hosts?: number;
  seed?: number;
  /** 0 (default) picks a free port. */
  port?: number;
  benchHosts?: number;
  benchPagesPerHost?: number;
  pagesPerHost?: number;
  /** Delay before every response (ms), to make in-flight overlap observable. Default 0. */
  responseDelayMs?: number;
  /**
   * Also serve the politeness hosts (*.polite.test, *.sharedip.test; see politeness-hosts.ts),
   * and listen on 127.0.0.2 as well. true: default options. Default off.
   */
  politeness?: PolitenessHostsOptions | boolean;
  /**
   * Also serve the hostile host hostile.test (see hostile-hosts.ts) on 127.0.0.1, plus /secret
   * on the IP-literal host 127.0.0.1. true: default options. Default off.
   */
  hostile?: HostileHostsOptions | boolean;
  /** Also serve the crawl-trap hosts *.trap.test (see trap-hosts.ts). Default off. */
  traps?: boolean;
  /** Also serve the hosts whose pages need a browser, *.render.test (see render-hosts.ts). Default off. */
  render?: RenderHostsOptions | boolean;
  /**
   * Also serve the hosts whose pages change on a schedule, *.fresh.test (see fresh-hosts.ts);
   * the schedule starts now unless `startAt` says otherwise. true: default options. Default off.
   */
  fresh?: FreshHostsOptions | boolean;
  /** Also serve www.directives.test, the host of robots directives (see directive-hosts.ts). Default off. */
  directives?: boolean;
  /** Also serve the worked examples' hosts, shop.examples.test and topics.examples.test (see example-hosts.ts). Default off. */
  examples?: boolean;
  /**
   * Also serve *.net.test (see network-hosts.ts): listen on [::1] as well, and keep 127.0.0.3
   * (same port) silent. Default off.
   */
  network?: boolean;
  /** Also serve the sitemap-only site *.sitemaponly.test (see sitemap-hosts.ts). Default off. */
  sitemapHosts?: boolean;
  /** Also serve the ID-routed shop and forum, *.ids.test (see id-routed-hosts.ts). true: default sizes. Default off. */
  idRouted?: IdRoutedHostsOptions | boolean;
  /** Also serve failing.test and dead.failing.test (see failing-hosts.ts). true: default options. Default off. */
  failing?: FailingHostsOptions | boolean;
  /** Also serve big.test, pages of 5 and 6 MiB of text (see big-page-hosts.ts). Default off. */
  bigPages?: boolean;
  /** Also serve the scope hosts, small sites on different registrable domains linking to each other (see scope-hosts.ts). Default off. */
  scopeHosts?: boolean;
  /**
   * Also answer HTTPS on the same port, HTTP/2 offered first (see tls-hosts.ts), with a CA made
   * at start (`tls.caFile`), and serve the bad-certificate hosts *.badtls.test. true: default
   * options. Default off.
   */
  tls?: TlsHostsOptions | boolean;
  /**
   * Also serve the broad web (see broad-hosts.ts): `domains` registrable domains with a few pages
   * each, on many loopback addresses 127.77.x.y (same port), named by a DNS server the web starts
   * (`web.broad.crawlArgs()`). true: default options (20,000 domains). Default off.
   */
  broad?: BroadHostsOptions | boolean;
  /**
   * Render every page of the site and bench hosts at start and keep them all, instead of
   * rendering on request into a cache of PAGE_CACHE_LIMIT pages. For throughput benches: the
   * web shares the machine's cores with the crawl, and rendering a page costs it more than
   * serving one. Costs ~32 KB of memory a page (353 MB for the bench's 11,000) and the rendering
   * time up front (6.8 s for them). Default off.
   */
  prerender?: boolean;
}

export interface RequestRecord {
  /** Host header without port, lower-case. */
  host: string;
  /** Request target as received: path including query. */
  path: string;
  method: string;
  userAgent: string;
  /** Epoch milliseconds (sub-ms precision) when the request arrived. */
  start: number;
  /**
   * Epoch milliseconds when the server handed the response's last byte to the connection
   * (`res.end()` returned), or the connection closed first. Not the 'finish' event: over TLS
   * that comes event-loop turns after the bytes went out, and a loaded server then stamped
   * two responses' ends after the start of a request the client sent once it had them both.
   */
  end: number;
  status: number;
  /** Server address the request arrived on (req.socket.localAddress): '127.0.0.1', '127.0.0.2' or '::1'. */
  localAddress: string;
  /** The client's port (req.socket.remotePort): says which connection, e.g. a proxy's, it came on. */
  remotePort?: number;
  /** Retry-After of the response, in ms from its end, when it carried one. */
  retryAfterMs?: number;
  /** Body of a 2xx GET /robots.txt response (the log has no other bodies; robots files are small). */
  robotsBody?: string;
  /** The HTTP version the request came in, as ALPN names it: 'h2' or 'http/1.1'. */
  protocol: 'h2' | 'http/1.1';
  /** Whether it came over TLS (https). */
  tls: boolean;
}

export interface TestWeb {
  port: number;
  /**
   * The page's URL as the web itself writes it: http://host/path, no port (links in pages
   * are port-80 URLs). A crawler reaches it through resolveRules; a direct client connects
   * to 127.0.0.1:port and sends Host: host.
   */
  url(host: string, path?: string): string;
  /** `--resolve` values that map the web's domains to this server: "*.site.test=127.0.0.1:<port>", ... */
  resolveRules: string[];
  model: SiteModel;
  /** The politeness hosts, when enabled (their options and host names); null otherwise. */
  politeness: PolitenessHosts | null;
  /** The hostile host, when enabled (its options and per-server state); null otherwise. */
  hostile: HostileHosts | null;
  /** The crawl-trap hosts, when enabled; null otherwise. */
  traps: TrapHosts | null;
  /** The hosts whose pages need a browser, when enabled; null otherwise. */
  render: RenderHosts | null;
  /** The fresh hosts, when enabled: their change schedule (versions, change times) and sitemaps; null otherwise. */
  fresh: FreshHosts | null;
  /** The host of robots directives, when enabled; null otherwise. */
  directives: DirectiveHosts | null;
  /** The worked examples' hosts, when enabled; null otherwise. */
  examples: ExampleHosts | null;
  /** The network hosts (*.net.test), when enabled; null otherwise. */
  network: NetworkHosts | null;
  /** The sitemap-only site, when enabled (its pages, sitemaps and the listings a crawler must refuse); null otherwise. */
  sitemapHosts: SitemapHosts | null;
  /** The ID-routed shop and forum, when enabled (their sizes and page URLs); null otherwise. */
  idRouted: IdRoutedHosts | null;
  /** The failing hosts, when enabled; null otherwise. */
  failing: FailingHosts | null;
  /** The large-page host, when enabled; null otherwise. */
  bigPages: BigPageHosts | null;
  /** The scope hosts, when enabled; null otherwise. */
  scopeHosts: ScopeHosts | null;
  /** TLS, when enabled: the CA file to trust, the HTTP/1.1-only hosts, the bad-certificate hosts; null otherwise. */
  tls: TlsHosts | null;
  /** The broad web, when enabled (its domains, link graph, DNS server and seed); null otherwise. */
  broad: BroadHosts | null;
  /** Completed requests, in order of arrival. */
  requestLog(): RequestRecord[];
  /**
   * The client port of every TCP connection the web accepted, plain or TLS, in order: who
   * connected, from the server's side (a request over TLS arrives on a stream whose own port
   * is not the connection's, so the request log cannot say it).
   */
  connectionPorts(): number[];
  /** Requests that have arrived and are not finished yet (host, path, start). */
  inFlight(): Array<Pick<RequestRecord, 'host' | 'path' | 'start'>>;
  /** Changes these pages (`http://host/path` URLs): new content, ETag and Last-Modified. */
  touch(urls: readonly string[]): void;
  clearLog(): void;
  close(): Promise<void>;
}

/** Control endpoints on every host; not recorded in the request log. */
const CONTROL_PREFIX = '/__testweb/';
/** Fixed Last-Modified for every page: the test web's content never changes. */
const LAST_MODIFIED = 'Mon, 01 Jan 2024 00:00:00 GMT';
const PAGE_CACHE_LIMIT = 2000;

const now = () => performance.timeOrigin + performance.now();

function hostOf(req: IncomingMessage): string {
  // HTTP/2 names the host in :authority (a Host field is allowed too)
  const raw = String(req.headers[':authority'] ?? req.headers.host ?? '').trim().toLowerCase();
  if (raw.startsWith('[')) return raw.slice(0, raw.indexOf(']') + 1);
  const colon = raw.indexOf(':');
  return colon < 0 ? raw : raw.slice(0, colon);
}

/** Retry-After as ms: delay-seconds, or an HTTP date (relative to `at`). undefined when unparsable. */
function retryAfterMs(value: string, at: number): number | undefined {
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - at);
}

function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`;
}

export async function startTestWeb(opts: StartTestWebOptions = {}): Promise<TestWeb> {
  const modelOpts = {
    hosts: opts.hosts ?? 20,
    seed: opts.seed ?? 1,
    ...(opts.benchHosts !== undefined ? { benchHosts: opts.benchHosts } : {}),
    ...(opts.benchPagesPerHost !== undefined ? { benchPagesPerHost: opts.benchPagesPerHost } : {}),
    ...(opts.pagesPerHost !== undefined ? { pagesPerHost: opts.pagesPerHost } : {}),
  };
  const model = buildSiteModel(modelOpts);
  const delayMs = opts.responseDelayMs ?? 0;
  let log: RequestRecord[] = [];
  const politeness = opts.politeness ? new PolitenessHosts(opts.politeness, now()) : null;
  const hostile = opts.hostile ? new HostileHosts(opts.hostile) : null;
  const traps = opts.traps ? new TrapHosts() : null;
  const renderHosts = opts.render ? new RenderHosts(opts.render) : null;
  const fresh = opts.fresh ? new FreshHosts(opts.fresh, { seed: modelOpts.seed, serverClock: now }) : null;
  const directives = opts.directives ? new DirectiveHosts() : null;
  const examples = opts.examples ? new ExampleHosts() : null;
  const network = opts.network ? new NetworkHosts() : null;
  const sitemapHosts = opts.sitemapHosts ? new SitemapHosts(modelOpts.seed) : null;
  const idRouted = opts.idRouted ? new IdRoutedHosts(opts.idRouted) : null;
  const failing = opts.failing ? new FailingHosts(opts.failing) : null;
  const bigPages = opts.bigPages ? new BigPageHosts() : null;
  const scopeHosts = opts.scopeHosts ? new ScopeHosts() : null;
  const broad = opts.broad ? new BroadHosts(opts.broad) : null;
  // set once the servers exist (TLS connections are handed to them)
  let tlsHosts: TlsHosts | null = null;
  /** Status to log for a response written as raw bytes on the socket (res never sent headers). */
  const rawStatusOf = new WeakMap<ServerResponse, number>();
  /** The log record of each response in progress, so send() can note Retry-After and robots bodies. */
  const recordOf = new WeakMap<ServerResponse, RequestRecord>();

  // Rendering is deterministic, so a bounded cache (insertion-order eviction) is only speed.
  // It keeps the UTF-8 bytes: half the memory of a string with one character outside Latin-1.
  const cache = new Map<string, { body: Buffer; etag: string; https?: { body: Buffer; etag: string } }>();
  const cacheLimit = opts.prerender ? Infinity : PAGE_CACHE_LIMIT;
  /** pages changed since the start (`touch`): host+path -> revision */
  const revisions = new Map<string, number>();
  const rendered = (host: HostModel, page: HtmlResource) => {
    const revision = revisions.get(`${host.name}${page.path}`) ?? 0;
    const id = `${host.name}${page.path}#${revision}`;
    let hit = cache.get(id);
    if (!hit) {
      let body = renderPage(host.name, page);
      if (revision > 0) body = body.replace('</body>', `<p>This page was updated (revision ${revision}).</p></body>`);
      hit = { body: Buffer.from(body), etag: etagOf(body) };
      if (cache.size >= cacheLimit) cache.delete(cache.keys().next().value as string);
      cache.set(id, hit);
    }
    return hit;
  };
  /** the page as served over TLS: its links to the web written https:// */
  const renderedFor = (host: HostModel, page: HtmlResource, secure: boolean) => {
    const hit = rendered(host, page);
    if (!secure) return hit;
    if (!hit.https) {
      const body = httpsLinks(hit.body.toString());
      hit.https = { body: Buffer.from(body), etag: etagOf(body) };
    }
    return hit.https;
  };

  function send(req: IncomingMessage, res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
    const record = recordOf.get(res);
    if (record?.tls) {
      // over TLS the web links to itself by https:// (a Buffer body is a page renderedFor chose)
      if (typeof body === 'string' && /^(text\/|application\/(xml|xhtml))/.test(type)) body = httpsLinks(body);
      if (extra.location !== undefined) extra = { ...extra, location: httpsLinks(extra.location) };
    }
    if (record) {
      const retryAfter = extra['retry-after'];
      if (retryAfter !== undefined) {
        const ms = retryAfterMs(retryAfter, now());
        if (ms !== undefined) record.retryAfterMs = ms;
      }
      if (status >= 200 && status < 300 && req.method === 'GET' && (req.url ?? '').split('?')[0] === '/robots.txt') record.robotsBody = String(body);
    }
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...extra });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  function control(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (path === `${CONTROL_PREFIX}log`) return send(req, res, 200, 'application/json', JSON.stringify(log));
    if (path === `${CONTROL_PREFIX}clear`) {
      log = [];
      return send(req, res, 200, 'application/json', '{"cleared":true}');
    }
    if (path === `${CONTROL_PREFIX}info`) {
      const info = { seed: model.seed, siteHosts: model.siteHostNames, benchHosts: model.benchHostNames, options: modelOpts };
      return send(req, res, 200, 'application/json', JSON.stringify(info));
    }
    send(req, res, 404, 'text/plain; charset=utf-8', 'unknown control endpoint\n');
  }

  function serve(req: IncomingMessage, res: ServerResponse, hostName: string, target: string): void {
    if (tlsHosts?.has(hostName)) {
      const r = tlsHosts.respond(hostName, req.method ?? '', target);
      return send(req, res, r.status, r.type, r.body);
    }
    if (politeness?.has(hostName)) {
      const r = politeness.respond(hostName, req.method ?? '', target, now());
      return send(req, res, r.status, r.type, r.body, r.headers);
    }
    if (hostile?.has(hostName)) {
      const ctx = { port: req.socket.localPort ?? 0, rawStatus: (status: number) => rawStatusOf.set(res, status) };
      const r = hostile.respond(req, res, hostName, target, ctx);
      if (r) send(req, res, r.status, r.type, r.body, r.headers);
      return;
    }
    if (failing?.has(hostName)) {
      const r = failing.respond(req, res, hostName, target);
      if (r) send(req, res, r.status, r.type, r.body);
      return;
    }
    if (traps?.has(hostName)) {
      const r = traps.respond(hostName, req.method ?? '', target);
      return send(req, res, r.status, r.type, r.body);
    }
    if (renderHosts?.has(hostName)) {
      const r = renderHosts.respond(hostName, req.method ?? '', target);
      return send(req, res, r.status, r.type, r.body, r.headers);
    }
    if (network?.has(hostName)) {
      const r = network.respond(req, res, hostName, target);
      if (r) send(req, res, r.status, r.type, r.body);
      return;
    }
    if (bigPages?.has(hostName)) {
      const r = bigPages.respond(req.method ?? '', target);
      return send(req, res, r.status, r.type, r.body);
    }
    if (scopeHosts?.has(hostName)) {
      const r = scopeHosts.respond(hostName, req.method ?? '', target);
      return send(req, res, r.status, r.type, r.body, r.headers);
    }
    if (fresh?.has(hostName)) {
      const validators = { ifNoneMatch: req.headers['if-none-match'], ifModifiedSince: req.headers['if-modified-since'] };
      const r = fresh.respond(hostName, req.method ?? '', target, validators);
      if (r.status !== 304) return send(req, res, r.status, r.type, r.body, r.headers);
      res.writeHead(304, r.headers);
      res.end();
      return;
    }
    if (directives?.has(hostName)) {
      const r = directives.respond(req.method ?? '', target);
      // set here: an array value is sent as one header line each (X-Robots-Tag twice)
      for (const [name, value] of Object.entries(r.headers)) res.setHeader(name, value);
      return send(req, res, r.status, r.type, r.body);
    }
    if (examples?.has(hostName)) {
      const r = examples.respond(hostName, req.method ?? '', target);
      return send(req, res, r.status, r.type, r.body);
    }
    if (sitemapHosts?.has(hostName)) {
      const r = sitemapHosts.respond(hostName, req.method ?? '', target);
      return send(req, res, r.status, r.type, r.body);
    }
    if (idRouted?.has(hostName)) {
      const r = idRouted.respond(hostName, req.method ?? '', target);
      return send(req, res, r.status, r.type, r.body);
    }
    if (broad?.has(hostName)) {
      const r = broad.respond(hostName, req.method ?? '', target);
      return send(req, res, r.status, r.type, r.body);
    }
    const notFound = () => send(req, res, 404, 'text/html; charset=utf-8', '<!DOCTYPE html><html lang="en"><head><title>Not found</title></head><body><h1>Not found</h1></body></html>\n');
    const host = model.byName.get(hostName);
    if (!host) return send(req, res, 421, 'text/plain; charset=utf-8', `unknown host ${hostName}\n`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(req, res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { allow: 'GET, HEAD' });
    let key: string;
    try {
      key = resourceKey(target);
    } catch {
      return notFound();
    }
    if (key === '/robots.txt') {
      if (host.robots.status !== 200 || host.robots.text === null) return notFound();
      return send(req, res, 200, 'text/plain; charset=utf-8', host.robots.text);
    }
    const resource = host.resources.get(key);
    if (!resource) return notFound();
    if (resource.kind === 'redirect') {
      return send(req, res, 301, 'text/html; charset=utf-8', `<!DOCTYPE html><html><head><title>Moved</title></head><body><a href="${resource.location}">Moved here</a></body></html>\n`, { location: resource.location });
    }
    const page = renderedFor(host, resource, recordOf.get(res)?.tls === true);
    const revision = revisions.get(`${host.name}${resource.path}`) ?? 0;
    const lastModified = revision > 0 ? new Date(Date.parse(LAST_MODIFIED) + revision * 86_400_000).toUTCString() : LAST_MODIFIED;
    const headers = { etag: page.etag, 'last-modified': lastModified, 'cache-control': 'max-age=0' };
    // Conditional GET (RFC 9110 §13.1): If-None-Match decides when present, else If-Modified-Since.
    const inm = req.headers['if-none-match'];
    const ims = req.headers['if-modified-since'];
    if (inm !== undefined ? inm === page.etag : ims !== undefined && Date.parse(ims) >= Date.parse(lastModified)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    send(req, res, 200, 'text/html; charset=utf-8', page.body, headers);
  }

  /** requests that arrived and are not finished yet */
  const inFlight = new Set<RequestRecord>();
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const start = now();
    const target = req.url ?? '/';
    const hostName = hostOf(req);
    if (target.startsWith(CONTROL_PREFIX)) return control(req, res, target.split('?')[0] as string);
    const record: RequestRecord = {
      host: hostName,
      path: target,
      method: req.method ?? '',
      userAgent: String(req.headers['user-agent'] ?? ''),
      start,
      end: start,
      status: 0,
      localAddress: localAddressOf(req),
      remotePort: req.socket.remotePort ?? 0,
      protocol: req.httpVersion === '2.0' ? 'h2' : 'http/1.1',
      tls: tlsSocketOf(req) !== null,
    };
    recordOf.set(res, record);
    inFlight.add(record);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      inFlight.delete(record);
      record.end = handedOver ?? now();
      // A connection closed before the response was sent is logged with status 0.
      record.status = res.headersSent ? res.statusCode : (rawStatusOf.get(res) ?? 0);
      log.push(record);
    };
    // the moment the last byte is handed over (see RequestRecord.end)
    let handedOver: number | null = null;
    const endResponse = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      const out = endResponse(...args);
      handedOver ??= now();
      return out;
    }) as ServerResponse['end'];
    res.once('finish', finish);
    res.once('close', finish);
    const respond = () => {
      try {
        serve(req, res, hostName, target);
      } catch (err) {
        if (!res.headersSent) send(req, res, 500, 'text/plain; charset=utf-8', `testweb error: ${String(err)}\n`);
        else res.destroy();
      }
    };
    const wait = delayMs + (politeness?.delayMs(hostName) ?? 0);
    if (wait > 0) setTimeout(respond, wait);
    else respond();
  };
  if (opts.prerender) {
    // and as served over TLS when the web speaks it (the bench crawls both)
    for (const host of model.hosts) for (const resource of host.resources.values()) if (resource.kind === 'html') renderedFor(host, resource, !!opts.tls);
  }

  /** the TLS socket a request came over, null for plain HTTP (over HTTP/2, its session's) */
  const tlsSocketOf = (req: IncomingMessage): TLSSocket | null => {
    const socket = (req as unknown as Http2ServerRequest).stream?.session?.socket ?? req.socket;
    return (socket as TLSSocket | undefined)?.encrypted === true ? (socket as TLSSocket) : null;
  };
  /** the server address a request arrived on (a TLS socket here runs over a stream: its TCP socket's) */
  const localAddressOf = (req: IncomingMessage): string => {
    const secure = tlsSocketOf(req);
    return (secure ? tlsHosts?.localAddress(secure) : req.socket.localAddress) ?? '';
  };

  const sockets = new Set<Socket>();
  const connectionPorts: number[] = [];
  const track = (s: Socket) => {
    // a TLS socket handed on to the HTTP servers has no port of its own: its TCP socket was tracked
    if (!sockets.has(s) && s.remotePort !== undefined) connectionPorts.push(s.remotePort);
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  const newServer = (): Server => {
    const server = createServer({ keepAlive: true }, handler);
    server.keepAliveTimeout = 10_000;
    server.on('connection', track);
    return server;
  };
  // With TLS, one listener per address takes every connection and hands it to plain HTTP, or
  // through TLS to HTTP/1.1 or HTTP/2 by what ALPN chose; these servers listen on nothing.
  let http1: Server | null = null;
  if (opts.tls) {
    http1 = newServer();
    const h1 = http1;
    const h2 = createHttp2Server({}, handler as unknown as Parameters<typeof createHttp2Server>[1]);
    const names = ['*.site.test', '*.bench.test', ...(politeness ? ['*.polite.test', '*.sharedip.test'] : []), 'hostile.test', '*.trap.test', '*.render.test', '*.fresh.test', 'www.directives.test', '*.examples.test', '*.net.test', '*.sitemaponly.test', 'www.sitemap-elsewhere.test', '*.ids.test', 'failing.test', '*.failing.test', 'big.test', '127.0.0.1'];
    tlsHosts = await TlsHosts.create(names, opts.tls === true ? {} : opts.tls, (socket) => (socket.alpnProtocol === 'h2' ? h2 : h1).emit('connection', socket));
  }
  const newListener = (): Server | NetServer => {
    if (!tlsHosts || !http1) return newServer();
    const hosts = tlsHosts;
    const h1 = http1;
    // as node:http's servers do: without it a response's last frame waits for the client's delayed ACK (40 ms)
    return createNetServer({ noDelay: true }, (socket) => {
      track(socket);
      hosts.accept(socket, (plain) => h1.emit('connection', plain));
    });
  };

  // 127.0.0.1 always; with politeness also 127.0.0.2 on the same port (the sharedip hosts'
  // address), with network also ::1 (and the silent 127.0.0.3), trying other free ports while
  // that one is taken on another address.
  const addresses = ['127.0.0.1', ...(politeness ? [SHARED_IP_ADDRESS] : []), ...(network ? ['::1'] : []), ...(broad?.addresses() ?? [])];
  let servers: Array<Server | NetServer> = [];
  let blackHole: { close(): Promise<void> } | null = null;
  for (let attempt = 0; ; attempt++) {
    servers = [];
    try {
      let port = opts.port ?? 0;
      for (const address of addresses) {
        const server = newListener();
        servers.push(server);
        await listen(server, port, address);
        port = (server.address() as AddressInfo).port;
      }
      if (network) blackHole = await startBlackHole(SILENT_ADDRESS, port);
      break;
    } catch (err) {
      await Promise.all(servers.map(closeServer));
      const inUse = (err as NodeJS.ErrnoException).code === 'EADDRINUSE' || /EADDRINUSE/.test(String(err));
      const retry = inUse && !opts.port && (servers.length > 1 || network !== null) && attempt < 20;
      if (!retry) throw err;
    }
  }
  const port = (servers[0]!.address() as AddressInfo).port;
  if (broad) {
    broad.port = port;
    broad.dns = await startTestDns(broad.dnsRecords());
  }

  return {
    port,
    url: (host, path = '/') => `http://${host}${path}`,
    resolveRules: [`*.site.test=127.0.0.1:${port}`, `*.bench.test=127.0.0.1:${port}`, ...(politeness?.resolveRules(port) ?? []), ...(hostile?.resolveRules(port) ?? []), ...(traps?.resolveRules(port) ?? []), ...(renderHosts?.resolveRules(port) ?? []), ...(fresh?.resolveRules(port) ?? []), ...(directives?.resolveRules(port) ?? []), ...(examples?.resolveRules(port) ?? []), ...(network?.resolveRules(port) ?? []), ...(sitemapHosts?.resolveRules(port) ?? []), ...(idRouted?.resolveRules(port) ?? []), ...(failing?.resolveRules(port) ?? []), ...(bigPages?.resolveRules(port) ?? []), ...(scopeHosts?.resolveRules(port) ?? []), ...(tlsHosts?.resolveRules(port) ?? [])],
    model,
    politeness,
    hostile,
    traps,
    render: renderHosts,
    fresh,
    directives,
    examples,
    network,
    sitemapHosts,
    idRouted,
    failing,
    bigPages,
    scopeHosts,
    tls: tlsHosts,
    broad,
    requestLog: () => log.slice().sort((a, b) => a.start - b.start),
    connectionPorts: () => connectionPorts.slice(),
    inFlight: () => [...inFlight].map((r) => ({ host: r.host, path: r.path, start: r.start })),
    touch: (urls) => {
      for (const u of urls) {
        const { hostname, pathname, search } = new URL(u);
        const key = `${hostname}${pathname}${search}`;
        revisions.set(key, (revisions.get(key) ?? 0) + 1);
      }
    },
    clearLog: () => {
      log = [];
      connectionPorts.length = 0;
    },
    close: async () => {
      const closed = Promise.all(servers.map(closeServer));
      for (const s of sockets) s.destroy();
      await closed;
      await blackHole?.close();
      await broad?.dns?.close();
      tlsHosts?.close();
    },
  };
}

function listen(server: Server | NetServer, port: number, address: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server | NetServer): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });
}
