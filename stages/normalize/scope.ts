/**
 * Crawl-scope rules for the normalize stage (pure, no I/O).
 *
 * A URL is in scope when
 *   1. its registrable domain is one of `allowedDomains`          (else `out_of_scope`)
 *   2. it matches none of the `exclude` patterns                   (else `excluded_pattern`)
 *   3. it matches at least one `include` pattern, if any are given (else `not_included`)
 *   4. its link depth is at most `maxDepth`                        (else `max_depth`)
 * The checks run in that order and the first failure is reported.
 */
import { getDomain } from 'tldts';

export interface ScopeRules {
  /** Registrable domains (lower case, e.g. `example.co.uk`, `site.test`, `127.0.0.1`). Empty set = nothing is in scope (fail closed). */
  allowedDomains: ReadonlySet<string>;
  /** If non-empty, a URL must match at least one of these. */
  include: RegExp[];
  /** A URL matching any of these is rejected. */
  exclude: RegExp[];
  /** Largest allowed link depth (seeds are depth 0). `Infinity` = unlimited. */
  maxDepth: number;
}

export type ScopeRejectReason = 'out_of_scope' | 'excluded_pattern' | 'not_included' | 'max_depth';

export type ScopeResult = { ok: true } | { ok: false; reason: ScopeRejectReason; detail: string };

const IPV4_RE = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/**
 * The registrable domain ("eTLD+1") of a host, from the Public Suffix List via tldts,
 * private suffixes included (so `alice.github.io` is its own site, not `github.io`).
 *
 * - unknown TLDs are treated as a one-label suffix: `a.b.site.test` → `site.test`
 * - IP hosts are their own registrable domain: `127.0.0.1` → `127.0.0.1`, `[::1]` → `[::1]`
 * - hosts with no registrable domain (`localhost`, a bare suffix such as `github.io`)
 *   are their own registrable domain.
 * Never throws; returns `''` for an empty host.
 */
export function registrableDomainOf(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h === '') return '';
  if (h.startsWith('[') || h.includes(':') || IPV4_RE.test(h)) return h;
  let d: string | null = null;
  try {
    d = getDomain(h, { allowPrivateDomains: true, extractHostname: false, validateHostname: false });
  } catch {
    d = null;
  }
  return d ?? h;
}

const SCHEME_PREFIX_RE = /^[a-z][a-z0-9+.-]*:\/\//i;
const REGEX_FORM_RE = /^\/(.+)\/([a-z]*)$/s;

/**
 * Parses a scope pattern. Two forms:
 *
 * - `/regex/flags` (starts and ends with `/`, optional flags): a JavaScript regular
 *   expression, *unanchored* (it may match anywhere in the canonical URL). `g` and `y`
 *   flags are dropped because they make `test()` stateful.
 * - anything else is a glob matched against the *whole* canonical URL, where `*` matches
 *   any run of characters (including `/`) and every other character is literal:
 *     - `https://example.com/docs/*`  — with a scheme: matched as written
 *     - `*.example.com/*`, `example.com/docs/*` — without a scheme: `http://` or `https://` may precede
 *     - `/docs/*` — starting with `/`: matched against the path (and query) of any host
 *   Globs are case-sensitive (canonical URLs have lower-case scheme and host).
 *
 * Throws an Error with a clear message on an empty pattern or an invalid regex.
 */
export function parsePattern(s: string): RegExp {
  const p = s.trim();
  if (p === '') throw new Error('invalid scope pattern: empty pattern');
  const m = REGEX_FORM_RE.exec(p);
  if (m) {
    const source = m[1]!;
    const flags = m[2]!.replace(/[gy]/g, '');
    try {
      return new RegExp(source, flags);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`invalid scope pattern ${JSON.stringify(s)}: not a valid regular expression (${why})`);
    }
  }
  const body = p
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
    .join('.*');
  let prefix: string;
  if (SCHEME_PREFIX_RE.test(p)) prefix = '';
  else if (p.startsWith('/')) prefix = 'https?:\\/\\/[^/?#]*';
  else prefix = '(?:https?:\\/\\/)?';
  return new RegExp(`^${prefix}${body}$`);
}

function matches(re: RegExp, s: string): boolean {
  if (re.global || re.sticky) re.lastIndex = 0;
  return re.test(s);
}

/** Decides whether a canonical URL at link depth `depth` is in scope. Never throws. */
export function checkScope(
  canonicalUrl: string,
  registrableDomain: string,
  depth: number,
  rules: ScopeRules,
): ScopeResult {
  const domain = registrableDomain.toLowerCase();
  if (!rules.allowedDomains.has(domain)) {
    return {
      ok: false,
      reason: 'out_of_scope',
      detail: `registrable domain ${JSON.stringify(domain)} is not an allowed domain`,
    };
  }
  for (const re of rules.exclude) {
    if (matches(re, canonicalUrl)) {
      return { ok: false, reason: 'excluded_pattern', detail: `matches exclude pattern ${String(re)}` };
    }
  }
  if (rules.include.length > 0 && !rules.include.some((re) => matches(re, canonicalUrl))) {
    return {
      ok: false,
      reason: 'not_included',
      detail: `matches none of the ${rules.include.length} include pattern(s)`,
    };
  }
  if (depth > rules.maxDepth) {
    return { ok: false, reason: 'max_depth', detail: `depth ${depth} exceeds maxDepth ${rules.maxDepth}` };
  }
  return { ok: true };
}
