import { z } from 'zod';
import { parseProxyUrl } from './adapters/http/proxy-config.js';
import { SCOPE_MODES } from '../schemas/scope-mode.js';

export { SCOPE_MODES, type ScopeMode } from '../schemas/scope-mode.js';

/** A proxy URL as settings keep it: http(s)://host:port, never with credentials (settings are shown and stored). */
const proxyUrl = z
  .string()
  .nullable()
  .default(null)
  .superRefine((v, ctx) => {
    if (v === null) return;
    try {
      if (parseProxyUrl(v, 'proxy').credentials) ctx.addIssue({ code: 'custom', message: 'a stored proxy URL carries no credentials (they come from a file or the environment)' });
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

/**
 * Settings of one crawl, shared by every stage process. `crawl run` writes them to the
 * `crawl-config` KV bucket so that `crawl worker` processes started later use the same ones.
 * Parsed once, strictly: an unknown or invalid option stops start-up with a message naming it.
 */
export const CrawlSettingsSchema = z
  .object({
    crawlId: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - only'),
    partitions: z.number().int().min(1).max(1024).default(16),
    maxDepth: z.number().int().min(0).max(1000).default(5),
    /** 0 = no limit: stop admitting new URLs once this many have been admitted */
    maxPages: z.number().int().min(0).default(0),
    /** 0 = no limit: requests granted per registrable domain, past which its URLs end as filtered (docs/breadth-and-importance.md) */
    maxPagesPerDomain: z.number().int().min(0).default(0),
    /**
     * 0 = off: until this many registrable domains have a stored page, links to domains that
     * already have a URL admitted are held back (served once it is reached; seed 003's first pass)
     */
    targetUniqueDomains: z.number().int().min(0).default(0),
    /**
     * the gate ranks due hosts by breadth weighed by how linked their registrable domain is
     * (in-links from other domains); false: by breadth alone (docs/breadth-and-importance.md)
     */
    importance: z.boolean().default(true),
    minDelayMs: z.number().int().min(0).max(3_600_000).default(1000),
    /** a robots.txt Crawl-delay above this is clamped to it (and logged) */
    maxCrawlDelayMs: z.number().int().min(0).default(60_000),
    robotsTtlMs: z.number().int().min(1000).max(86_400_000).default(86_400_000),
    /** a robots.txt that fails (5xx, 429, network) is fetched again after this, doubling per failure */
    robotsRetryMs: z.number().int().min(100).default(60_000),
    /**
     * URLs of a host whose robots.txt has been unavailable this long end as robots_disallowed.
     * 20 min: about what a host whose pages fail costs (two pauses, failingHostBoundMs), so a
     * bounded crawl waits minutes on a failing host whichever of its requests fail
     */
    robotsGiveUpMs: z.number().int().min(0).default(1_200_000),
    /** hosts on one IP address share this many requests in flight; 0 = no cap */
    maxPerIp: z.number().int().min(0).default(4),
    /** the gap after a request is at least this many times its response time; 0 = off */
    adaptiveDelayFactor: z.number().min(0).max(100).default(2),
    /** first step of the backoff after a 5xx, 429 or network error; doubles per failure in a row */
    backoffBaseMs: z.number().int().min(0).default(2_000),
    /** the longest backoff, and the longest Retry-After honoured (a longer one is clamped and logged) */
    maxBackoffMs: z.number().int().min(0).default(3_600_000),
    /** this many failures in a row pause the host for pauseMs, then one probe request */
    pauseAfterFailures: z.number().int().min(1).default(5),
    pauseMs: z.number().int().min(0).default(600_000),
    /** a URL that got a retryable failure (5xx, 429, timeout, network) is tried this many more times */
    maxRetries: z.number().int().min(0).max(20).default(3),
    userAgent: z.string().min(1).default('jetstream-crawler/0.1 (+https://example.invalid/crawler-contact)'),
    /**
     * the name robots.txt groups, meta robots and X-Robots-Tag are obeyed as; absent: the
     * user agent's product token (its `compatible;` product, else its first)
     */
    robotsToken: z.string().regex(/^[A-Za-z_-]+$/, 'a product token: letters, _ and - only (RFC 9309)').optional(),
    scope: z.enum(SCOPE_MODES).default('domain'),
    include: z.array(z.string()).default([]),
    exclude: z.array(z.string()).default([]),
    /** curl-like host overrides, PATTERN=ADDRESS[:PORT] */
    resolve: z.array(z.string()).default([]),
    /** CIDRs the SSRF guard lets through (it refuses loopback, private, link-local, ... otherwise) */
    allowNetworks: z.array(z.string()).default([]),
    /** the forward proxy of http:// and of https:// URLs (`--proxy`, HTTP_PROXY, HTTPS_PROXY); null: direct */
    httpProxy: proxyUrl,
    httpsProxy: proxyUrl,
    /** hosts reached directly although a proxy is set (NO_PROXY's syntax, one entry each) */
    noProxy: z.array(z.string()).default([]),
    /** DNS servers (ADDRESS[:PORT]) to ask instead of the system's */
    dnsServers: z.array(z.string()).default([]),
    /**
     * CA certificates trusted besides Node's default store (`--ca-file`): the PEM text travels
     * in the settings, not the path, so a worker on another machine trusts the same CAs
     * (certificates are public; no key is ever here)
     */
    caCerts: z.array(z.object({ file: z.string(), pem: z.string().min(1) }).strict()).default([]),
    /** hosts (name, *.domain or *) whose TLS certificates are not verified; every such exchange says so */
    insecureHosts: z.array(z.string()).default([]),
    /** offer HTTP/2 over TLS (ALPN); false: HTTP/1.1 only */
    http2: z.boolean().default(true),
    /** DNS answers are kept for their TTL, clamped to [min, max] */
    dnsMinTtlMs: z.number().int().min(0).default(60_000),
    dnsMaxTtlMs: z.number().int().min(0).default(3_600_000),
    /** NXDOMAIN / NODATA: the zone's SOA minimum (RFC 2308), else the negative TTL; at most the negative max */
    dnsNegativeTtlMs: z.number().int().min(0).default(30_000),
    dnsNegativeMaxTtlMs: z.number().int().min(0).default(3_600_000),
    /** SERVFAIL, timeouts, refusals: kept briefly, the server may recover (RFC 2308 §7: at most 5 minutes) */
    dnsFailureTtlMs: z.number().int().min(0).max(300_000).default(5000),
    /** DNS lookups out at once per process (a crawl finding 20,000 hosts must not send 40,000 queries at once) */
    dnsMaxInFlight: z.number().int().min(1).max(10_000).default(64),
    /** host names the DNS cache keeps per process (LRU) */
    dnsCacheEntries: z.number().int().min(100).default(100_000),
    connectTimeoutMs: z.number().int().min(100).default(10_000),
    headersTimeoutMs: z.number().int().min(100).default(20_000),
    totalTimeoutMs: z.number().int().min(100).default(30_000),
    /**
     * bytes of a response kept (decoded); a longer one is stored cut and marked truncated. Any
     * size travels: a body larger than a message can carry is stored beside it (CRAWL_BODIES)
     */
    maxPageBytes: z.number().int().min(1024).default(5 * 1024 * 1024),
    /** content types extracted and stored as pages; others are recorded in fetch_log and skipped (PDFs: links harvested) */
    pageTypes: z.array(z.string().regex(/^[a-z0-9.+-]+\/[a-z0-9.+-]+$/, 'a MIME type such as text/plain')).default(['text/html', 'application/xhtml+xml']),
    /** a compressed body inflating more than this many times its size is refused as a bomb */
    maxDecompressionRatio: z.number().int().min(2).default(200),
    /** after 5 s of body, a transfer slower than this (bytes/s) is cut off; 0 = off */
    minTransferRate: z.number().int().min(0).default(1024),
    nearDuplicateDistance: z.number().int().min(0).max(16).default(3),
    /** at each seed host's first grant, read the sitemaps its robots.txt names (else /sitemap.xml); a job's own `sitemaps` decides for its seeds */
    sitemaps: z.boolean().default(true),
    /**
     * extract sends the links it finds on to normalize (the links table records them either
     * way); false leaves following to stage modules that queue URLs of their choosing (a focused crawl)
     */
    followLinks: z.boolean().default(true),
    /** crawl traps: new URLs queued per host, past which the host's further URLs are dropped; 0 = no limit */
    maxPagesPerHost: z.number().int().min(0).default(10_000),
    /**
     * crawl traps: new URLs per URL pattern (numbers, dates, ids collapsed), past which the pattern's own pages lead to
     * no more of it (URLs found on other pages still do while its pages are new: stages/shared/traps); 0 = no limit
     */
    maxUrlsPerPattern: z.number().int().min(0).default(1_000),
    /** crawl traps: a pattern with this many pages fetched, mostly near-duplicates, is cut off; 0 = off */
    noveltyMinPages: z.number().int().min(0).default(10),
    /** crawl traps: the share of near-duplicate pages that cuts a pattern off */
    noveltyDuplicateShare: z.number().min(0).max(1).default(0.8),
    persistBatchRows: z.number().int().min(1).default(1000),
    persistFlushMs: z.number().int().min(50).default(1000),
    /** URLs the seen set is planned for (2 bytes each); a larger crawl grows it, at a slightly higher cost per URL */
    seenExpectedUrls: z.number().int().min(1024).default(1_000_000),
    /** pages whose URL matches one of these (glob or /regex/) are rendered in headless Chromium (the render stage) */
    render: z.array(z.string()).default([]),
    /** also render pages whose fetched HTML looks like an application shell (stages/extract/app-shell.ts) */
    renderAuto: z.boolean().default(false),
    /** a render ends this long after it started, settled or not: the DOM as it is then is stored */
    renderTimeoutMs: z.number().int().min(1000).max(600_000).default(15_000),
    /** crawl jobs' revisit schedule is taken one time slot of this length at a time (its granularity) */
    revisitSlotMs: z.number().int().min(100).max(3_600_000).default(60_000),
    /** a WARC file is closed and a new one started before it would pass this many bytes */
    warcMaxBytes: z.number().int().min(64 * 1024).default(1024 ** 3),
    /** zlib level of the WARC records' gzip members (stages/archive/gzip-member.ts says why 3) */
    warcGzipLevel: z.number().int().min(1).max(9).default(3),
  })
  .strict();

export type CrawlSettings = z.infer<typeof CrawlSettingsSchema>;
export type CrawlSettingsInput = z.input<typeof CrawlSettingsSchema>;

export class SettingsError extends Error {
  override name = 'SettingsError';
}

/** Settings stored by an older version under a name since changed: read under the new one. */
const RENAMED = { maxBodyBytes: 'maxPageBytes' } as const;

function withCurrentNames(input: unknown): unknown {
  if (typeof input !== 'object' || input === null) return input;
  const out: Record<string, unknown> = { ...input };
  for (const [old, now] of Object.entries(RENAMED)) {
    if (!(old in out)) continue;
    if (!(now in out)) out[now] = out[old];
    delete out[old];
  }
  return out;
}

export function parseSettings(input: unknown): CrawlSettings {
  const parsed = CrawlSettingsSchema.safeParse(withCurrentNames(input));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join('.') || (issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : '(settings)');
    throw new SettingsError(`invalid setting ${key}: ${issue.message}`);
  }
  return parsed.data;
}

export function defaultCrawlId(now = new Date()): string {
  return `crawl-${now.toISOString().slice(0, 10).replaceAll('-', '')}`;
}
