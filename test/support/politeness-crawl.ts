/**
 * The politeness crawl the audit tests run: the test web's politeness hosts (robots.txt 503
 * for the whole run, 503 then 200, one that turns stricter after the cache expires, 429 with
 * Retry-After, a slow host, 50 hosts on one IP) plus ordinary site hosts with Disallow rules
 * and Crawl-delays; its settings, and the pages a polite crawl of it must and must not store.
 */
import { expectedCrawl, politenessExpectedPages, type TestWeb } from '../../testweb/index.js';

export const TOKEN = 'testcrawler';
export const MIN_DELAY_MS = 300;
export const PER_IP = 2;
export const POLITENESS = { robotsChangeAfterMs: 3000, retryAfterSeconds: 2, slowMs: 700, sharedIpHosts: 50, flakyRobotsFailures: 2 };
export const SITE = { hosts: 4, pagesPerHost: 10, seed: 5 };
export const MAX_DEPTH = 3;

export function politenessSettingsArgs(web: TestWeb): string[] {
  const args = [
    '--user-agent', `${TOKEN}/1.0 (+http://127.0.0.1/contact)`,
    '--min-delay-ms', String(MIN_DELAY_MS),
    '--max-per-ip', String(PER_IP),
    '--max-depth', String(MAX_DEPTH),
    '--robots-ttl-ms', '2000', // robotschange turns stricter after 3 s: the crawl must notice
    '--robots-retry-ms', '1000',
    '--robots-give-up-ms', '8000', // the 503 host's URLs end as robots_disallowed, so the crawl ends
    '--backoff-base-ms', '500',
    '--timeout-ms', '5000',
  ];
  for (const rule of web.resolveRules) args.push('--resolve', rule);
  // a web that speaks HTTPS too: the crawl trusts its CA
  if (web.tls) args.push('--ca-file', web.tls.caFile);
  return args;
}

/** A URL of the web as a crawl seeded with `scheme` finds it (over TLS the web links by https://). */
export const withScheme = (url: string, scheme: 'http' | 'https'): string => (scheme === 'https' ? url.replace(/^http:/, 'https:') : url);

/** Pages a polite crawl must store: the site model's expectation plus the politeness hosts'. */
export function mustStore(web: TestWeb, scheme: 'http' | 'https' = 'http'): { must: Set<string>; forbidden: Set<string> } {
  const site = expectedCrawl(web.model, {
    userAgentToken: TOKEN,
    maxDepth: MAX_DEPTH,
    seeds: web.model.siteHostNames.map((h) => `http://${h}/`),
    redirectHopCost: 0,
  });
  const polite = politenessExpectedPages(POLITENESS);
  const urls = (list: Iterable<string>) => new Set([...list].map((u) => withScheme(u, scheme)));
  return { must: urls([...site.pages.keys(), ...polite.pages]), forbidden: urls(polite.forbidden) };
}
