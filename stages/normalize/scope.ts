/**
 * Crawl-scope rules for the normalize stage (pure, no I/O).
 *
 * The scope mode says which URLs a crawl's seeds reach (`domain`: their registrable domains,
 * `host`: their exact hosts, `prefix`: their origin and directory, `open`: any host); include
 * and exclude patterns then widen or narrow it. One precedence, checked in this order, the
 * first failure reported:
 *   1. a URL matching an `exclude` pattern is out                  (`excluded_pattern`)
 *   2. with `include` patterns given, a URL is in scope iff it matches one of them, wherever
 *      its host: they widen beyond the mode and narrow within it   (else `not_included`)
 *   3. with no `include` patterns, the scope mode decides          (else `out_of_scope`)
 *   4. its link depth is at most `maxDepth`, always                (else `max_depth`)
 */
import { getDomain } from 'tldts';
import type { ScopeMode } from '../../schemas/index.js';
import { matchesPattern as matches } from '../shared/url-matchers.js';

export { parsePattern } from '../shared/url-matchers.js';
export type { ScopeMode } from '../../schemas/index.js';

export interface ScopeRules {
  mode: ScopeMode;
  /** If non-empty, a URL is in scope iff it matches at least one of these (whatever the mode). */
  include: RegExp[];
  /** A URL matching any of these is rejected, whatever else says. */
  exclude: RegExp[];
  /** Largest allowed link depth (seeds are depth 0). `Infinity` = unlimited. */
  maxDepth: number;
}

/** A canonical URL and the parts of it scope is judged by (what canonicalize returns). */
export interface ScopedUrl {
  url: string;
  host: string;
  registrableDomain: string;
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

/** Whether the include/exclude patterns leave the verdict to the scope mode (no include patterns, not excluded). */
export function modeDecides(url: string, rules: Pick<ScopeRules, 'include' | 'exclude'>): boolean {
  return rules.include.length === 0 && !rules.exclude.some((re) => matches(re, url));
}

function outOfScope(mode: ScopeMode, u: ScopedUrl): string {
  switch (mode) {
    case 'host':
      return `host ${JSON.stringify(u.host)} is not a seed's host (--scope host)`;
    case 'prefix':
      return "URL is under no seed's prefix (--scope prefix)";
    default:
      return `registrable domain ${JSON.stringify(u.registrableDomain.toLowerCase())} is not a seed's (--scope domain)`;
  }
}

/**
 * Decides whether a canonical URL at link depth `depth` is in scope. `inMode` says whether the
 * scope mode takes the URL in (its seeds' domain, host or prefix holds it; always true when open);
 * it is consulted only when no include pattern is given. Never throws.
 */
export function checkScope(u: ScopedUrl, depth: number, rules: ScopeRules, inMode: boolean): ScopeResult {
  for (const re of rules.exclude) {
    if (matches(re, u.url)) {
      return { ok: false, reason: 'excluded_pattern', detail: `matches exclude pattern ${String(re)}` };
    }
  }
  if (rules.include.length > 0) {
    if (!rules.include.some((re) => matches(re, u.url))) {
      return { ok: false, reason: 'not_included', detail: `matches none of the ${rules.include.length} include pattern(s)` };
    }
  } else if (!inMode && rules.mode !== 'open') {
    return { ok: false, reason: 'out_of_scope', detail: outOfScope(rules.mode, u) };
  }
  if (depth > rules.maxDepth) {
    return { ok: false, reason: 'max_depth', detail: `depth ${depth} exceeds maxDepth ${rules.maxDepth}` };
  }
  return { ok: true };
}
