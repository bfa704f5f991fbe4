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
import { matchesPattern as matches } from '../shared/url-patterns.js';

export { parsePattern } from '../shared/url-patterns.js';

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
