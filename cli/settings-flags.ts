import { Option, type Command } from 'commander';
import { collect, parseIntOption, parseNumberOption, UsageError } from './usage-error.js';
import { parseResolveRule } from '../pipeline/adapters/resolve-map.js';
import { insecureHostProblem, readCaFile } from '../pipeline/adapters/http/tls-options.js';
import { allowList } from '../pipeline/adapters/address-policy.js';
import { parseNamedPattern } from '../stages/shared/url-matchers.js';
import { isValidProductToken, robotsTokenOf } from '../stages/shared/robots/robots-rules.js';
import { defaultCrawlId, parseSettings, SCOPE_MODES, SettingsError, type CrawlSettings, type CrawlSettingsInput } from '../pipeline/settings.js';
import { proxySettingsFrom, type ProxyFlags } from './proxy-options.js';

/** The crawl settings flags, shared by `crawl run` and `crawl topology apply`. */
export function addSettingsOptions(cmd: Command): Command {
  return cmd
    .option('--resolve <pattern=address>', 'map hosts matching PATTERN (e.g. *.site.test) to ADDRESS[:PORT], like curl (repeatable)', collect, [])
    .option('--max-depth <n>', 'link hops from a seed to follow (default 5)', parseIntOption('--max-depth', 0, 1000))
    .option('--max-pages <n>', 'stop admitting URLs after this many (0 = no limit)', parseIntOption('--max-pages', 0))
    .option('--max-pages-per-domain <n>', 'requests granted per registrable domain; its later URLs end as filtered max_pages_per_domain (0 = no limit)', parseIntOption('--max-pages-per-domain', 0))
    .option('--target-unique-domains <n>', 'first pass: until N registrable domains have a stored page, links to domains already reached wait and only new domains (and seeds) are served (0 = off)', parseIntOption('--target-unique-domains', 0))
    .option('--importance', 'rank due hosts by breadth weighed by how linked their registrable domain is (the default)')
    .option('--no-importance', 'rank due hosts by breadth alone (fewest pages granted to their registrable domain, then depth)')
    .option('--partitions <p>', 'partitions per edge (default 16)', parseIntOption('--partitions', 1, 1024))
    .option('--seen-expected-urls <n>', 'URLs the seen set is planned for, at 2 bytes each; a larger crawl grows it (default 1000000)', parseIntOption('--seen-expected-urls', 1024))
    .option('--min-delay-ms <n>', 'minimum gap between requests to one host (default 1000)', parseIntOption('--min-delay-ms', 0, 3_600_000))
    .option('--user-agent <s>', 'User-Agent header, with a contact URL; its product token (the product after "compatible;", else the first) is matched in robots.txt, meta robots and X-Robots-Tag')
    .option('--robots-token <name>', 'obey robots.txt groups, meta robots and X-Robots-Tag addressed to NAME instead of the user agent\'s product token', parseRobotsTokenOption)
    .addOption(new Option('--scope <mode>', "what the seeds reach: domain (their registrable domains, the default), host (their exact hosts), prefix (their origin and directory) or open (any host)").choices([...SCOPE_MODES]))
    .option('--include <pattern>', 'crawl exactly the URLs matching this glob or /regex/, on any host, besides the seeds (repeatable; replaces --scope\'s choice)', collect, [])
    .option('--exclude <pattern>', 'never crawl URLs matching this glob or /regex/ (repeatable; wins over everything)', collect, [])
    .option('--crawl-id <id>', 'name of this crawl in the output (default crawl-YYYYMMDD of its first run)')
    .option('--max-crawl-delay-ms <n>', 'a robots.txt Crawl-delay above this is clamped to it (default 60000)', parseIntOption('--max-crawl-delay-ms', 0))
    .option('--robots-ttl-ms <n>', 'longest a robots.txt is used before it is fetched again (default and maximum 86400000 = 24 h)', parseIntOption('--robots-ttl-ms', 1000, 86_400_000))
    .option('--robots-retry-ms <n>', 'a robots.txt that fails (5xx, 429, network) is fetched again after this, doubling per failure (default 60000)', parseIntOption('--robots-retry-ms', 100))
    .option('--robots-give-up-ms <n>', "URLs of a host whose robots.txt has been unavailable this long end as robots_disallowed (default 1200000)", parseIntOption('--robots-give-up-ms', 0))
    .option('--max-per-ip <n>', 'requests in flight at once to one IP address, across all its hosts (default 4; 0 = no cap)', parseIntOption('--max-per-ip', 0))
    .option('--adaptive-delay-factor <x>', 'the gap after a request is at least x times its response time (default 2; 0 = off)', parseNumberOption('--adaptive-delay-factor', 0, 100))
    .option('--backoff-base-ms <n>', 'first backoff after a 5xx, 429 or network error; doubles per failure in a row (default 2000)', parseIntOption('--backoff-base-ms', 0))
    .option('--max-backoff-ms <n>', 'longest backoff, and longest Retry-After honoured (default 3600000)', parseIntOption('--max-backoff-ms', 0))
    .option('--pause-after-failures <n>', 'failures in a row that pause a host (default 5); its URLs waiting for a retry end, and a third pause in one failing spell gives the host up', parseIntOption('--pause-after-failures', 1))
    .option('--pause-ms <n>', 'how long a failing host is paused before one probe request (default 600000)', parseIntOption('--pause-ms', 0))
    .option('--timeout-ms <n>', 'longest a request may take, start to last byte (default 30000)', parseIntOption('--timeout-ms', 100))
    .option('--allow-network <cidr>', 'let the SSRF guard connect to this network although it is private, loopback, link-local... (repeatable)', collect, [])
    .option('--proxy <url>', 'send every request through this forward proxy, http://HOST:PORT (default: HTTPS_PROXY / HTTP_PROXY); credentials from --proxy-credentials-file or the environment')
    .option('--noproxy <list>', 'hosts reached directly although a proxy is set: example.org (and its subdomains), HOST:PORT, an IP or CIDR, * for all; comma-separated, repeatable (default: NO_PROXY)', collect, [])
    .option('--dns-server <address[:port]>', 'ask this DNS server instead of the system resolver (repeatable)', collect, [])
    .option('--ca-file <pem>', "also trust the CA certificates in this PEM file, besides Node's default store (repeatable)", collect, [])
    .option('--insecure-host <pattern>', 'do not verify the TLS certificates of hosts matching PATTERN (a name, *.domain or *); logged as a warning, noted on each exchange (repeatable)', collect, [])
    .option('--no-http2', 'speak HTTP/1.1 only, never offering HTTP/2 (ALPN)')
    .option('--dns-min-ttl-ms <n>', 'keep DNS answers at least this long (default 60000)', parseIntOption('--dns-min-ttl-ms', 0))
    .option('--dns-max-ttl-ms <n>', 'keep DNS answers at most this long (default 3600000)', parseIntOption('--dns-max-ttl-ms', 0))
    .option('--dns-negative-ttl-ms <n>', "keep 'no such host' (NXDOMAIN, NODATA) this long when the zone's SOA gives no minimum (default 30000)", parseIntOption('--dns-negative-ttl-ms', 0))
    .option('--dns-negative-max-ttl-ms <n>', "keep 'no such host' at most this long, whatever the SOA minimum (default 3600000)", parseIntOption('--dns-negative-max-ttl-ms', 0))
    .option('--dns-failure-ttl-ms <n>', 'keep a DNS failure (SERVFAIL, timeout, refused) this long (default 5000)', parseIntOption('--dns-failure-ttl-ms', 0, 300_000))
    .option('--dns-max-in-flight <n>', 'DNS lookups out at once per process; the others wait their turn (default 64)', parseIntOption('--dns-max-in-flight', 1, 10_000))
    .option('--dns-cache-entries <n>', 'host names the DNS cache keeps per process, the least recently used leaving first (default 100000)', parseIntOption('--dns-cache-entries', 100))
    .option('--max-page-bytes <n>', 'bytes of a page (any response) kept, on any NATS server; a longer one is stored cut and marked truncated (default 5242880 = 5 MiB)', parseIntOption('--max-page-bytes', 1024))
    // the option's name before --max-page-bytes: scripts that use it keep working, told the new name
    .addOption(new Option('--max-body-bytes <n>').hideHelp().argParser(oldName('--max-body-bytes', '--max-page-bytes', parseIntOption('--max-body-bytes', 1024))))
    .option('--min-transfer-rate <n>', 'after 5 s of body, a transfer slower than this many bytes/s is cut off (default 1024; 0 = off)', parseIntOption('--min-transfer-rate', 0))
    .option('--page-type <mime>', 'also extract and store responses of this content type as pages, e.g. text/plain (repeatable; text/html and application/xhtml+xml always)', collect, [])
    .option('--max-retries <n>', 'retries of a URL after a retryable failure: 5xx, 429, timeout, network (default 3)', parseIntOption('--max-retries', 0, 20))
    .option('--max-pages-per-host <n>', 'crawl traps: new URLs queued per host; later ones are dropped as trap_host_budget (default 10000; 0 = no limit)', parseIntOption('--max-pages-per-host', 0))
    .option('--max-urls-per-pattern <n>', 'crawl traps: new URLs per URL pattern (numbers, dates, ids collapsed); past it, those found on the pattern\'s own pages are dropped as trap_pattern_budget, those found elsewhere (listings, sitemaps) queued while its pages are new (default 1000; 0 = no limit)', parseIntOption('--max-urls-per-pattern', 0))
    .option('--novelty-min-pages <n>', 'crawl traps: a pattern with this many pages, mostly near-duplicates, is cut off as trap_low_novelty (default 10; 0 = off, and the pattern budget holds for every URL)', parseIntOption('--novelty-min-pages', 0))
    .option('--novelty-duplicate-share <x>', 'crawl traps: the share of near-duplicate pages that cuts a pattern off (default 0.8)', parseNumberOption('--novelty-duplicate-share', 0, 1))
    .option('--render <pattern>', 'render pages whose URL matches this glob or /regex/ in headless Chromium before extracting them (repeatable)', collect, [])
    .option('--render-auto', 'also render pages whose HTML looks like an application shell: little text, an empty mount element, scripts')
    .option('--render-timeout-ms <n>', 'a render ends this long after it started, settled or not (default 15000)', parseIntOption('--render-timeout-ms', 1000, 600_000))
    .option('--warc-max-bytes <n>', 'start a new WARC file before one would pass this size (default 1073741824 = 1 GiB)', parseIntOption('--warc-max-bytes', 65_536))
    .option('--warc-gzip-level <n>', 'zlib level of the WARC records, 1 (fastest) to 9 (smallest) (default 3)', parseIntOption('--warc-gzip-level', 1, 9))
    .option('--sitemaps', "read the sitemaps each seed host's robots.txt names, else /sitemap.xml (the default)")
    .option('--no-sitemaps', "do not read seed hosts' sitemaps: crawl only what links reach")
    // both forms, so that neither given leaves a resumed crawl's stored choice alone
    .option('--follow-links', 'extract queues the links it finds (the default)')
    .option('--no-follow-links', 'extract records the links it finds but queues none: only seeds, sitemaps, redirects and stage modules (--stage-module) add URLs, e.g. a focused crawl')
    .option('--revisit-slot-ms <n>', "crawl jobs' revisits are handed out one time slot of this length at a time: their granularity (default 60000)", parseIntOption('--revisit-slot-ms', 100, 3_600_000));
}

/** An option's former name: parsed as the option, with a line on stderr giving its new name. */
function oldName<T>(old: string, now: string, parse: (value: string) => T): (value: string) => T {
  return (value) => {
    process.stderr.write(`crawl: ${old} is now called ${now}; the old name still works\n`);
    return parse(value);
  };
}

/** Flags that map one-to-one onto a crawl setting of the same name. */
const DIRECT_SETTINGS = [
  'maxDepth',
  'maxPages',
  'maxPagesPerDomain',
  'targetUniqueDomains',
  'importance',
  'partitions',
  'minDelayMs',
  'userAgent',
  'robotsToken',
  'crawlId',
  'maxCrawlDelayMs',
  'robotsTtlMs',
  'robotsRetryMs',
  'robotsGiveUpMs',
  'maxPerIp',
  'adaptiveDelayFactor',
  'backoffBaseMs',
  'maxBackoffMs',
  'pauseAfterFailures',
  'pauseMs',
  'maxRetries',
  'seenExpectedUrls',
  'dnsMinTtlMs',
  'dnsMaxTtlMs',
  'dnsNegativeTtlMs',
  'dnsNegativeMaxTtlMs',
  'dnsFailureTtlMs',
  'dnsMaxInFlight',
  'dnsCacheEntries',
  'maxPageBytes',
  'minTransferRate',
  'maxPagesPerHost',
  'maxUrlsPerPattern',
  'noveltyMinPages',
  'noveltyDuplicateShare',
  'warcMaxBytes',
  'warcGzipLevel',
  'renderAuto',
  'renderTimeoutMs',
  'revisitSlotMs',
  'sitemaps',
  'followLinks',
  'scope',
] as const;

/** Flags whose setting has another name. */
const RENAMED_SETTINGS = { timeoutMs: 'totalTimeoutMs', maxBodyBytes: 'maxPageBytes' } as const;

export type SettingsFlags = {
  resolve: string[];
  allowNetwork?: string[];
  pageType?: string[];
  dnsServer?: string[];
  caFile?: string[];
  insecureHost?: string[];
  /** commander's --no-http2: false when given */
  http2?: boolean;
  include: string[];
  exclude: string[];
  render?: string[];
} & ProxyFlags &
  Partial<Pick<CrawlSettingsInput, (typeof DIRECT_SETTINGS)[number]>> & { timeoutMs?: number; maxBodyBytes?: number };

/**
 * The crawl's settings: what it was started with (if anything), overridden by the flags
 * given now (and the proxy variables of `env`, as flags). Invalid values are usage errors
 * that name the option.
 */
export function mergeSettings(stored: CrawlSettings | null, o: SettingsFlags, env: NodeJS.ProcessEnv = process.env): CrawlSettings {
  for (const r of o.resolve) {
    try {
      parseResolveRule(r);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  if (o.maxBodyBytes !== undefined && o.maxPageBytes !== undefined) throw new UsageError('--max-body-bytes is the old name of --max-page-bytes: give one of them');
  const s: Record<string, unknown> = {};
  for (const key of DIRECT_SETTINGS) if (o[key] !== undefined) s[key] = o[key];
  for (const [flag, key] of Object.entries(RENAMED_SETTINGS)) if (o[flag as keyof typeof RENAMED_SETTINGS] !== undefined) s[key] = o[flag as keyof typeof RENAMED_SETTINGS];
  if (o.resolve.length > 0) s.resolve = o.resolve;
  for (const cidr of o.allowNetwork ?? []) {
    try {
      allowList([cidr]);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  if (o.allowNetwork && o.allowNetwork.length > 0) s.allowNetworks = o.allowNetwork;
  if (o.dnsServer && o.dnsServer.length > 0) s.dnsServers = o.dnsServer;
  if (o.caFile && o.caFile.length > 0) s.caCerts = caCerts(o.caFile);
  for (const h of o.insecureHost ?? []) {
    const problem = insecureHostProblem(h);
    if (problem) throw new UsageError(problem);
  }
  if (o.insecureHost && o.insecureHost.length > 0) s.insecureHosts = o.insecureHost.map((h) => h.trim().toLowerCase());
  // only --no-http2 says anything; without it a resumed crawl keeps what it was started with
  if (o.http2 === false) s.http2 = false;
  if (o.pageType && o.pageType.length > 0) s.pageTypes = ['text/html', 'application/xhtml+xml', ...o.pageType.map((t) => t.toLowerCase())];
  for (const p of o.render ?? []) {
    try {
      parseNamedPattern(p, '--render pattern');
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  if (o.render && o.render.length > 0) s.render = o.render;
  if (o.include.length > 0) s.include = o.include;
  if (o.exclude.length > 0) s.exclude = o.exclude;
  Object.assign(s, proxySettingsFrom(o, env));
  let settings: CrawlSettings;
  try {
    settings = parseSettings({ ...(stored ?? { crawlId: defaultCrawlId() }), ...s });
  } catch (err) {
    if (err instanceof SettingsError) throw new UsageError(err.message);
    throw err;
  }
  try {
    robotsTokenOf(settings);
  } catch {
    throw new UsageError(`--user-agent ${JSON.stringify(settings.userAgent)} names no product token to obey in robots.txt ([A-Za-z_-]+ at its start or after "compatible;"): give --robots-token NAME`);
  }
  return settings;
}

/** `--robots-token`: a product token as RFC 9309 defines it, `[a-zA-Z_-]+`. */
export function parseRobotsTokenOption(value: string): string {
  if (!isValidProductToken(value)) throw new UsageError(`--robots-token must be a product token of letters, _ and - (RFC 9309), got ${JSON.stringify(value)}`);
  return value;
}

/**
 * The settings travel in one KV entry, whose value must fit a NATS message: CA files beyond this
 * (a whole system bundle is about 220 KB) are refused at start rather than failing the store.
 */
const MAX_CA_BYTES = 512 * 1024;

/** `--ca-file` paths read and checked now: their certificates travel in the settings (see CrawlSettings.caCerts). */
function caCerts(files: readonly string[]): Array<{ file: string; pem: string }> {
  const certs = files.map((file) => {
    try {
      return { file, pem: readCaFile(file) };
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  });
  const bytes = certs.reduce((n, c) => n + c.pem.length, 0);
  if (bytes > MAX_CA_BYTES) throw new UsageError(`--ca-file: ${bytes} bytes of certificates, more than the ${MAX_CA_BYTES} the crawl's settings can carry; give only the CAs the crawl needs`);
  return certs;
}
