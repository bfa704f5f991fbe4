/**
 * The SSRF guard's rule book: which addresses the crawler refuses to connect to unless the
 * user said otherwise (a `--resolve` target, or an `--allow-network CIDR`). A crawler that
 * follows links and redirects chosen by strangers must never be turned into a client of
 * the machine's own network: loopback, private ranges, link-local (cloud metadata lives at
 * 169.254.169.254), carrier-grade NAT, multicast, unspecified and IPv6 unique-local, and
 * the same inside IPv4-mapped and NAT64 IPv6 forms.
 */
import { BlockList, isIP } from 'node:net';

const V4_RANGES: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const V6_RANGES: Array<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['ff00::', 8, 'multicast'],
  ['2001:db8::', 32, 'documentation'],
];

type Family = 'ipv4' | 'ipv6';
const rangeList = (net: string, prefix: number, family: Family) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return list;
};
const ranges: Array<{ list: BlockList; family: Family; why: string }> = [
  ...V4_RANGES.map(([net, prefix, why]) => ({ list: rangeList(net, prefix, 'ipv4'), family: 'ipv4' as Family, why })),
  ...V6_RANGES.map(([net, prefix, why]) => ({ list: rangeList(net, prefix, 'ipv6'), family: 'ipv6' as Family, why })),
];

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::/96) IPv6 address. */
export function embeddedIpv4(ip: string): string | null {
  const lower = ip.toLowerCase();
  const m = /^(?:::ffff:|64:ff9b::)(?:0{1,4}:)?(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (m) return m[1]!;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return null;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Why `ip` is not a public address ('loopback', 'private', ...), or null when it is public. */
export function nonPublicReason(ip: string): string | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const family = isIP(bare);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4) {
      const inner = nonPublicReason(v4);
      return inner ? `${inner} (in IPv6 form)` : null;
    }
  }
  for (const r of ranges) {
    if ((family === 4) === (r.family === 'ipv4') && r.list.check(bare, r.family)) return r.why;
  }
  return null;
}

/** Networks the user allowed with `--allow-network CIDR` (IPv4 or IPv6). Throws on a bad CIDR. */
export function allowList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, prefixText] = cidr.split('/');
    const family = isIP(net ?? '');
    const prefix = Number(prefixText);
    if (family === 0 || !/^\d+$/.test(prefixText ?? '') || prefix > (family === 4 ? 32 : 128)) {
      throw new Error(`invalid --allow-network ${JSON.stringify(cidr)}: expected ADDRESS/PREFIX, e.g. 10.1.0.0/16`);
    }
    list.addSubnet(net!, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

export class RefusedAddressError extends Error {
  override readonly name = 'RefusedAddressError';
  readonly code = 'ERR_CRAWL_REFUSED_ADDRESS';
}

/**
 * The guard: null when connecting to `ip` is fine, else the reason it is refused. A host
 * mapped by a `--resolve` rule is the user's explicit choice and always allowed.
 */
export function refusal(ip: string, allowed: BlockList, viaResolveRule: boolean): string | null {
  if (viaResolveRule) return null;
  const why = nonPublicReason(ip);
  if (why === null) return null;
  const v4 = embeddedIpv4(ip);
  if (v4 ? allowed.check(v4, 'ipv4') : allowed.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4')) return null;
  return `refused to connect to ${ip}: ${why} address (allow it with --allow-network)`;
}
