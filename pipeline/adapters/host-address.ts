import { lookup } from 'node:dns/promises';
import { matchResolve, type ResolveRule } from './resolve-map.js';

/** How long an address found in DNS is reused for per-IP accounting. */
const ADDRESS_TTL_MS = 60_000;
const MAX_CACHED = 10_000;

/**
 * The address a host's requests go to, for the per-IP cap: a `--resolve` rule first, else
 * DNS (cached a minute per process). Null when the host does not resolve: its fetch will
 * fail on its own and record why.
 */
export function hostAddressResolver(rules: readonly ResolveRule[], now: () => number = Date.now): (host: string) => Promise<string | null> {
  const cache = new Map<string, { address: string | null; until: number }>();
  return async (host: string) => {
    const rule = matchResolve(rules, host);
    if (rule) return rule.address;
    const hit = cache.get(host);
    if (hit && hit.until > now()) return hit.address;
    let address: string | null = null;
    try {
      address = (await lookup(host.replace(/^\[|\]$/g, ''))).address;
    } catch {
      address = null;
    }
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(host, { address, until: now() + ADDRESS_TTL_MS });
    return address;
  };
}
