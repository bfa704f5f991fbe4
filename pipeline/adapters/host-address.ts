import { allowList } from './address-policy.js';
import type { AddressHealth } from './address-health.js';
import { ConnectTargets } from './connect-targets.js';
import type { DnsCache } from './dns-cache.js';
import type { ResolveRule } from './resolve-map.js';

/**
 * The address a host's requests go to, for the per-IP cap: the first of the addresses the HTTP
 * client would try (connect-targets.ts, with the same rules, DNS cache, guard and memory of
 * addresses that failed lately, so both agree). Fetch asks the client to try it first.
 * Null when the host does not resolve or every address is refused: its fetch fails on its
 * own and records why.
 */
export function hostAddressResolver(rules: readonly ResolveRule[], dns: DnsCache, allowNetworks: readonly string[], health: AddressHealth): (host: string) => Promise<string | null> {
  const targets = new ConnectTargets(rules, dns, { allowed: allowList(allowNetworks) }, health);
  return async (host: string) => {
    try {
      // the port only matters to a rule's own port, not to which address is first
      return (await targets.of(host, 80))[0]?.address ?? null;
    } catch {
      return null;
    }
  };
}
