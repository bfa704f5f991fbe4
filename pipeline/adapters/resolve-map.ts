/**
 * curl-like host overrides for `--resolve PATTERN=ADDRESS[:PORT][,ADDRESS[:PORT]...]`.
 *
 * - `h01.site.test=127.0.0.1`        exact host → address (port from the URL)
 * - `*.site.test=127.0.0.1:8080`     one or more labels under site.test → address; URLs on the
 *                                    default ports (80/443) connect to port 8080 instead
 * - `*=::1`, `*=[::1]:8080`          every host name
 * - `h.test=127.0.0.3:8080,[::1]:8080` several addresses, tried in this order as a host's DNS
 *                                    addresses are (the next when one does not connect)
 *
 * The Host header, TLS SNI and the URL itself are never changed by a rule; only the
 * address (and optionally the port) the socket connects to.
 */
import { isIP } from 'node:net';

export interface ResolveTarget {
  /** IPv4 or IPv6 literal (IPv6 without brackets). */
  address: string;
  /** If given, connections for port-80/443 URLs of matching hosts go to this port instead. */
  port?: number;
}

export interface ResolveRule extends ResolveTarget {
  /** 'h01.site.test' or '*.site.test' (wildcard matches one or more labels); '*' alone matches every host. Lowercase. */
  pattern: string;
  /** the rule's further addresses, after `address` (absent when it names one) */
  alternates?: ResolveTarget[];
}

/** Every address of a rule, in the order they are tried. */
export function ruleTargets(rule: ResolveRule): ResolveTarget[] {
  const first: ResolveTarget = rule.port === undefined ? { address: rule.address } : { address: rule.address, port: rule.port };
  return [first, ...(rule.alternates ?? [])];
}

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

function fail(input: string, why: string): never {
  throw new Error(`invalid --resolve ${JSON.stringify(input)}: ${why}`);
}

function validHostPattern(p: string): boolean {
  if (p === '*') return true;
  const rest = p.startsWith('*.') ? p.slice(2) : p;
  if (rest.length === 0 || rest.length > 253) return false;
  return rest.split('.').every((l) => LABEL.test(l));
}

function parsePort(input: string, s: string): number {
  if (!/^\d{1,5}$/.test(s)) fail(input, `port ${JSON.stringify(s)} is not a number between 1 and 65535`);
  const n = Number(s);
  if (n < 1 || n > 65535) fail(input, `port ${JSON.stringify(s)} is not a number between 1 and 65535`);
  return n;
}

/** Parse `PATTERN=ADDRESS[:PORT][,ADDRESS[:PORT]...]`; throws an Error naming the bad value. */
export function parseResolveRule(s: string): ResolveRule {
  const eq = s.indexOf('=');
  if (eq <= 0 || eq === s.length - 1) fail(s, 'expected PATTERN=ADDRESS[:PORT]');
  let pattern = s.slice(0, eq).trim().toLowerCase();
  if (pattern.endsWith('.') && pattern !== '.') pattern = pattern.slice(0, -1);
  if (!validHostPattern(pattern)) {
    fail(s, `pattern ${JSON.stringify(pattern)} is not a host name, '*.domain' or '*' (expected PATTERN=ADDRESS[:PORT])`);
  }
  const [first, ...alternates] = s
    .slice(eq + 1)
    .split(',')
    .map((t) => parseTarget(s, t.trim()));
  const rule: ResolveRule = { pattern, ...first! };
  if (alternates.length > 0) rule.alternates = alternates;
  return rule;
}

/** One `ADDRESS[:PORT]` of a rule: `127.0.0.1`, `127.0.0.1:8080`, `::1`, `[::1]`, `[::1]:8080`. */
function parseTarget(input: string, target: string): ResolveTarget {
  if (target === '') fail(input, 'an empty address (expected PATTERN=ADDRESS[:PORT][,ADDRESS[:PORT]...])');
  let address: string;
  let portStr: string | undefined;
  if (target.startsWith('[')) {
    // [IPv6] or [IPv6]:PORT
    const close = target.indexOf(']');
    if (close < 0) fail(input, `unterminated '[' in address ${JSON.stringify(target)}`);
    address = target.slice(1, close);
    const after = target.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) fail(input, `unexpected ${JSON.stringify(after)} after IPv6 address (expected [ADDRESS]:PORT)`);
      portStr = after.slice(1);
    }
    if (isIP(address) !== 6) fail(input, `${JSON.stringify(address)} is not an IPv6 address`);
  } else {
    const colons = target.split(':').length - 1;
    if (colons === 1) {
      // IPv4:PORT
      const c = target.indexOf(':');
      address = target.slice(0, c);
      portStr = target.slice(c + 1);
    } else {
      // IPv4, or bare IPv6 (no port possible without brackets)
      address = target;
    }
    if (isIP(address) === 0) fail(input, `${JSON.stringify(address)} is not an IPv4 or IPv6 address (expected PATTERN=ADDRESS[:PORT])`);
  }
  return portStr === undefined ? { address } : { address, port: parsePort(input, portStr) };
}

/**
 * First rule whose pattern matches `host` (case-insensitive, trailing dot ignored).
 * IP-literal hosts never match: rules override name resolution only.
 */
export function matchResolve(rules: readonly ResolveRule[], host: string): ResolveRule | undefined {
  if (rules.length === 0) return undefined;
  let h = host.toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h.startsWith('[') || isIP(h) !== 0) return undefined;
  for (const r of rules) {
    const p = r.pattern.toLowerCase();
    if (p === '*') return r;
    if (p.startsWith('*.')) {
      const suffix = p.slice(1); // '.site.test'
      if (h.length > suffix.length && h.endsWith(suffix)) return r;
    } else if (h === p) {
      return r;
    }
  }
  return undefined;
}
