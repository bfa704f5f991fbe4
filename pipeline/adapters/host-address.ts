import { isIP } from 'node:net';
import { matchResolve, type ResolveRule } from './resolve-map.js';
import type { DnsCache } from './dns-cache.js';

/**
 * The address a host's requests go to, for the per-IP cap: a `--resolve` rule first, else
 * the process's DNS cache (the one the HTTP client connects through, so both agree).
 * Null when the host does not resolve: its fetch will fail on its own and record why.
 */
export function hostAddressResolver(rules: readonly ResolveRule[], dns: DnsCache): (host: string) => Promise<string | null> {
  return async (host: string) => {
    const rule = matchResolve(rules, host);
    if (rule) return rule.address;
    const literal = host.replace(/^\[|\]$/g, '');
    if (isIP(literal)) return literal;
    try {
      return (await dns.lookup(host))[0] ?? null;
    } catch {
      return null;
    }
  };
}
