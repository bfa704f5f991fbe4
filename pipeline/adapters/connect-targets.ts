/**
 * Where a connection to a host may go, and in which order: the addresses of its `--resolve`
 * rule (the user's choice, never refused), else its IP literal or its DNS answers (A and
 * AAAA), each checked by the SSRF guard. The HTTP client connects to these (directly, or by
 * asking a proxy to CONNECT to them) and the gate charges a request to the first one, for
 * the per-IP cap: both ask this, so they agree.
 *
 * Order: DNS order with the address families interleaved (RFC 8305 §4: an IPv6 network that
 * is down costs one attempt, not all of the AAAA records'), addresses that failed to connect
 * lately last (address-health.ts).
 */
import { isIP, type BlockList } from 'node:net';
import { RefusedAddressError, refusal } from './address-policy.js';
import type { AddressHealth } from './address-health.js';
import type { DnsCache } from './dns-cache.js';
import { matchResolve, ruleTargets, type ResolveRule } from './resolve-map.js';

export interface Guard {
  allowed: BlockList;
}

export interface ConnectTarget {
  address: string;
  port: number;
  /** a `--resolve` rule's address: the user's choice, not checked by the guard */
  viaRule: boolean;
}

export class ConnectTargets {
  constructor(
    private readonly rules: readonly ResolveRule[],
    private readonly dns: DnsCache,
    /** null: the guard is off (tests of the client itself) */
    private readonly guard: Guard | null,
    private readonly health: AddressHealth,
  ) {}

  /**
   * The addresses to try for `hostname` (a name, or an IP literal with or without brackets)
   * on `port`, best first. Throws RefusedAddressError when the guard refuses every address,
   * and the DNS cache's DnsLookupError when the name does not resolve.
   */
  async of(hostname: string, port: number): Promise<ConnectTarget[]> {
    const rule = matchResolve(this.rules, hostname);
    if (rule) {
      // a rule's port replaces the URL's only when the URL is on a default port (80 or 443)
      const onDefaultPort = port === 80 || port === 443;
      const targets = ruleTargets(rule).map((t) => ({ address: t.address, port: t.port !== undefined && onDefaultPort ? t.port : port, viaRule: true }));
      return this.health.order(targets);
    }
    const literal = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    if (isIP(literal)) {
      const why = this.guard ? refusal(literal, this.guard.allowed, false) : null;
      if (why) throw new RefusedAddressError(why);
      return [{ address: literal, port, viaRule: false }];
    }
    const addresses = await this.dns.lookup(hostname);
    const allowed: string[] = [];
    const refused: Array<{ address: string; why: string }> = [];
    for (const address of addresses) {
      const why = this.guard ? refusal(address, this.guard.allowed, false) : null;
      if (why) refused.push({ address, why });
      else allowed.push(address);
    }
    if (allowed.length === 0) {
      const first = refused[0]!;
      const more = refused.length > 1 ? ` (and ${refused.length - 1} more address${refused.length > 2 ? 'es' : ''}, all refused)` : '';
      throw new RefusedAddressError(`${hostname} resolves to ${first.address}: ${first.why}${more}`);
    }
    // a refused address among public ones is left out: the others are tried, it never is
    return this.health.order(interleaveFamilies(allowed).map((address) => ({ address, port, viaRule: false })));
  }
}

/** [a4, b4, a6, b6] -> [a4, a6, b4, b6]: the first address's family first, then alternating. */
export function interleaveFamilies(addresses: readonly string[]): string[] {
  if (addresses.length < 3) return [...addresses];
  const firstFamily = isIP(addresses[0]!);
  const same = addresses.filter((a) => isIP(a) === firstFamily);
  const other = addresses.filter((a) => isIP(a) !== firstFamily);
  const out: string[] = [];
  for (let i = 0; i < Math.max(same.length, other.length); i++) {
    if (i < same.length) out.push(same[i]!);
    if (i < other.length) out.push(other[i]!);
  }
  return out;
}

/** `prefer` first when it is one of the targets (the address a request was charged to); the rest in order. */
export function preferAddress(targets: readonly ConnectTarget[], prefer: string | null | undefined): ConnectTarget[] {
  if (!prefer) return [...targets];
  const i = targets.findIndex((t) => t.address === prefer);
  if (i <= 0) return [...targets];
  return [targets[i]!, ...targets.slice(0, i), ...targets.slice(i + 1)];
}
