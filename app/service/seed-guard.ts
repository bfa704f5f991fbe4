import { isIP } from 'node:net';
import { allowList, refusal } from '../../pipeline/adapters/address-policy.js';
import { DnsCache, dnsCacheOptions } from '../../pipeline/adapters/dns-cache.js';
import { matchResolve, parseResolveRule } from '../../pipeline/adapters/resolve-map.js';
import type { CrawlSettings } from '../../pipeline/settings.js';
import { canonicalize } from '../../stages/normalize/index.js';
import { parsePattern } from '../../stages/normalize/scope.js';

/** Why a job's seed is refused (a sentence for the 400 answer), or null when the crawl may fetch it. */
export type SeedGuard = (seed: string) => Promise<string | null>;

/**
 * The crawl's own rules, applied to a job's seeds before the job exists, so that the API cannot
 * be used to make the crawler reach what the crawl itself would refuse:
 *  - the SSRF guard: a seed whose host is, or resolves to, a loopback, private, link-local...
 *    address is refused unless the service was started with `--allow-network` for it (or a
 *    `--resolve` rule maps the host: the operator's explicit choice, as in the crawl);
 *  - the deployment's `--include` / `--exclude` patterns.
 * A host that does not resolve now is accepted: its fetch will fail and record why, and the
 * fetch stage checks every address again when it connects (so DNS rebinding gains nothing).
 */
export function seedGuard(settings: CrawlSettings, lookup?: (host: string) => Promise<string[]>): SeedGuard {
  const allowed = allowList(settings.allowNetworks);
  const rules = settings.resolve.map(parseResolveRule);
  const include = settings.include.map(parsePattern);
  const exclude = settings.exclude.map(parsePattern);
  let resolveHost = lookup;
  const resolver = () => {
    if (!resolveHost) {
      const dns = new DnsCache(dnsCacheOptions(settings));
      resolveHost = (host) => dns.lookup(host);
    }
    return resolveHost;
  };
  return async (seed) => {
    const c = canonicalize(seed);
    if (!c.ok) return `${c.reason}: ${c.detail}`;
    const excluded = exclude.find((re) => re.test(c.url));
    if (excluded) return `excluded by the service's --exclude pattern ${String(excluded)}`;
    if (include.length > 0 && !include.some((re) => re.test(c.url))) return `matches none of the service's --include patterns`;
    if (matchResolve(rules, c.host)) return null;
    const literal = c.host.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (isIP(literal)) addresses = [literal];
    // RFC 6761: localhost and its subdomains are the machine itself, whatever DNS says
    else if (literal === 'localhost' || literal.endsWith('.localhost')) addresses = ['127.0.0.1', '::1'];
    else {
      try {
        addresses = await resolver()(c.host);
      } catch {
        return null;
      }
    }
    for (const address of addresses) {
      const why = refusal(address, allowed, false);
      if (why) return literal === address ? why : `${c.host} resolves to ${address}: ${why}`;
    }
    return null;
  };
}
