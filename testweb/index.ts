// Public surface of the local test web (see DESIGN.md, "The local test web").

export { startTestWeb } from './server.js';
export type { StartTestWebOptions, TestWeb, RequestRecord } from './server.js';
export { buildSiteModel, siteHostName, benchHostName, languageForHost, DEFAULT_PAGES_PER_HOST, DEFAULT_BENCH_PAGES_PER_HOST } from './site-model.js';
export { expectedPages, expectedCrawl } from './expected-pages.js';
export type { ExpectedPagesOptions, ExpectedCrawl, ExpectedPage } from './expected-pages.js';
export { renderPage, SCRIPT_MARKER, STYLE_MARKER, COMMENT_MARKER } from './render-page.js';
export { robotsAllows, robotsCrawlDelay, robotsKindForHost, ROBOTS_CYCLE, SPECIAL_AGENT_TOKEN } from './robots-rules.js';
export type { RobotsKind, RobotsSpec, RobotsGroup, RobotsRule } from './robots-rules.js';
export { canonicalUrl, isTrackingParam, resolveLink } from './url-forms.js';
export {
  PolitenessHosts,
  POLITENESS_DEFAULTS,
  POLITE_DOMAIN,
  POLITE_HOSTS,
  SHARED_IP_DOMAIN,
  SHARED_IP_ADDRESS,
  ROBOTS_503_HOST,
  ROBOTS_FLAKY_HOST,
  ROBOTS_CHANGE_HOST,
  RETRY_AFTER_HOST,
  SLOW_HOST,
  ALLOW_ALL_ROBOTS,
  FLAKY_ROBOTS,
  CHANGE_ROBOTS_BEFORE,
  CHANGE_ROBOTS_AFTER,
  resolvePolitenessOptions,
  sharedIpHostName,
  sharedIpHostNames,
  politenessHostNames,
  politenessHostPaths,
  politenessSeedUrls,
  politenessExpectedPages,
} from './politeness-hosts.js';
export type { PolitenessHostsOptions, ResolvedPolitenessOptions, PolitenessExpectation, PoliteResponse } from './politeness-hosts.js';
export {
  HostileHosts,
  HOSTILE_DEFAULTS,
  HOSTILE_DOMAIN,
  HOSTILE_HOST,
  HOSTILE_SEED_URL,
  HOSTILE_PATHS,
  LOOPBACK_HOST,
  LOOPBACK_SECRET_PATH,
  LOOPBACK_SECRET_MARKER,
  METADATA_URL,
  CL_SHORT_DECLARED,
  CL_SHORT_SENT,
  CL_LONG_DECLARED,
  CL_LONG_SENT,
  RESET_DECLARED,
  RESET_SENT,
  RESET_AFTER_MS,
  BIG_HEADERS_COUNT,
  BIG_HEADERS_MIN_BYTES,
  GARBAGE_BYTES,
  BAD_CHUNK_SIZE_LINE,
  HOSTILE_ETAG,
  HOSTILE_LAST_MODIFIED,
  BROTLI_BOMB_QUALITY,
  LATIN1_TEXT,
  SJIS_TEXT,
  UTF16_TEXT,
  CHARSET_PAGES,
  PDF_PLAIN_URLS,
  PDF_COMPRESSED_URLS,
  PDF_URLS,
  resolveHostileOptions,
  compressionBomb,
  hugeChunks,
  garbageBytes,
  buildPdf,
  encodeWindows1252,
} from './hostile-hosts.js';
export type {
  HostileHostsOptions,
  ResolvedHostileOptions,
  HostilePath,
  HostileOutcome,
  CharsetPage,
  HostileSimpleResponse,
  HostileContext,
} from './hostile-hosts.js';
export {
  TrapHosts,
  TRAP_DOMAIN,
  TRAP_HOSTS,
  CALENDAR_TRAP_HOST,
  SESSION_TRAP_HOST,
  PAGES_TRAP_HOST,
  DEEP_TRAP_HOST,
  SOFT404_TRAP_HOST,
  SESSION_TRAP_PAGES,
  TRAP_NORMAL_PAGES,
} from './trap-hosts.js';
export type { TrapResponse } from './trap-hosts.js';
export {
  BigPageHosts,
  BIG_PAGE_HOST,
  BIG_PAGE_PATH,
  BIG_PAGE_BYTES,
  BIG_PAGE_END_MARKER,
  BIG_PAGE_PATHS,
  OVER_CAP_PATH,
  OVER_CAP_BYTES,
  OVER_CAP_END_MARKER,
  bigPageBody,
} from './big-page-hosts.js';
export type { BigPageResponse } from './big-page-hosts.js';
export { ScopeHosts, SCOPE_SEED_URL } from './scope-hosts.js';
export type { ScopeResponse } from './scope-hosts.js';
export {
  FreshHosts,
  FRESH_DEFAULTS,
  FRESH_DOMAIN,
  FRESH_SITEMAP_HOST,
  SITEMAP_INDEX_PATH,
  SITEMAP_CHILD_PATHS,
  TEXT_SITEMAP_PATH,
  BAD_SITEMAP_PATH,
  BAD_SITEMAP_FUTURE_MS,
  freshHostName,
  resolveFreshOptions,
} from './fresh-hosts.js';
export type { FreshHostsOptions, ResolvedFreshOptions, FreshResponse } from './fresh-hosts.js';
export { NetworkHosts, NET_DOMAIN, NETWORK_HOSTS, NETWORK_PAGES, V6_HOST, FALLBACK_HOST, SILENT_ADDRESS, VIDEO_PATH, VIDEO_BYTES, startBlackHole } from './network-hosts.js';
export type { NetworkResponse } from './network-hosts.js';
export { startForwardProxy } from './forward-proxy.js';
export type { ForwardProxy, ForwardProxyOptions, ProxyRequestRecord } from './forward-proxy.js';
export {
  SitemapHosts,
  SITEMAP_ONLY_DOMAIN,
  SITEMAP_ONLY_HOST,
  SITEMAP_FALLBACK_HOST,
  SITEMAP_NEIGHBOUR_HOST,
  SITEMAP_FOREIGN_DOMAIN,
  SITEMAP_FOREIGN_HOST,
  SITEMAP_ONLY_PAGES,
  SITEMAP_FALLBACK_PAGES,
  SITEMAP_INDEX,
  SITEMAP_GZIP,
  SITEMAP_PLAIN,
} from './sitemap-hosts.js';
export type { SitemapHostResponse, RefusedListing } from './sitemap-hosts.js';
export {
  IdRoutedHosts,
  ID_ROUTED_DEFAULTS,
  ID_ROUTED_DOMAIN,
  ID_ROUTED_HOSTS,
  SHOP_HOST,
  FORUM_HOST,
  productId,
  topicId,
} from './id-routed-hosts.js';
export type { IdRoutedHostsOptions, IdRoutedResponse } from './id-routed-hosts.js';
export {
  FailingHosts,
  FAILING_DEFAULTS,
  FAILING_DOMAIN,
  FAILING_HOST,
  FAILING_PATHS,
  FAILING_RESET_AFTER_MS,
  FAILING_RESET_DECLARED,
  FAILING_RESET_SENT,
  FAILING_SEED_URL,
  DEAD_HOST,
  DEAD_SEED_URL,
  failingPagePaths,
  resolveFailingOptions,
} from './failing-hosts.js';
export type { FailingHostsOptions, ResolvedFailingOptions, FailingSimpleResponse } from './failing-hosts.js';
export { startTestDns, dnsResponse, dnsTypeName, ipv6Bytes, DNS_TYPE_A, DNS_TYPE_AAAA, DNS_TYPE_SOA } from './dns-server.js';
export type { TestDns, TestDnsOptions, DnsAnswers, DnsEntry, DnsQueryRecord, DnsZone } from './dns-server.js';
export { numberedNames, numberedAddress } from './dns-numbered-names.js';
export type { NumberedNames, NumberedNamesOptions } from './dns-numbered-names.js';
export { getFromTestWeb } from './http-get.js';
export type { TestWebResponse } from './http-get.js';
export { runTestWebCli } from './main.js';
export type { TestWebCliArgs } from './main.js';
export type {
  SiteModel,
  HostModel,
  Resource,
  HtmlResource,
  RedirectResource,
  PageLink,
  PageRole,
  LinkArea,
  BuildSiteModelOptions,
} from './model-types.js';
export {
  RenderHosts,
  RENDER_DOMAIN,
  RENDER_HOSTS,
  APP_HOST,
  ESCAPE_HOST,
  ENDLESS_HOST,
  APP_PAGES,
  APP_BLOCKED_PATHS,
  ESCAPE_TEXT_MARKER,
  ENDLESS_TEXT_MARKER,
  appTextMarker,
} from './render-hosts.js';
export type { RenderHostsOptions } from './render-hosts.js';
export { DirectiveHosts, DIRECTIVES_DOMAIN, DIRECTIVES_HOST, DIRECTIVES_SEED_URL, DIRECTIVE_PAGES, leafOf, textMarkerOf } from './directive-hosts.js';
export type { DirectivePage, DirectiveResponse } from './directive-hosts.js';
export { ExampleHosts, EXAMPLE_PRODUCTS, EXAMPLE_SHOP_HOST, SHOP_OTHER_PAGES, EXAMPLE_TOPICS_HOST, TOPIC_PAGES } from './example-hosts.js';
export type { ExampleProduct, TopicPage } from './example-hosts.js';
export {
  TlsHosts,
  BADTLS_DOMAIN,
  BAD_CERT_HOSTS,
  BADTLS_HOSTS,
  EXPIRED_CERT_HOST,
  UNKNOWN_CA_HOST,
  WRONG_NAME_HOST,
  INCOMPLETE_CHAIN_HOST,
  SELF_SIGNED_HOST,
  HANDSHAKE_RESET_HOST,
  DEFAULT_HTTP1_ONLY_HOSTS,
  httpsLinks,
} from './tls-hosts.js';
export type { TlsHostsOptions } from './tls-hosts.js';
export { makeTestPki } from './test-ca.js';
export type { TestPki, TlsIdentity } from './test-ca.js';
export { BroadHosts, BROAD_ROBOTS, BROAD_TREE_FANOUT, BROAD_DEAD_ADDRESS, broadAddress, broadPagePaths, resolveBroadOptions } from './broad-hosts.js';
export type { BroadHostsOptions, ResolvedBroadOptions, BroadResponse } from './broad-hosts.js';
