/**
 * URL canonicalisation for the normalize stage (pure, no I/O, never throws).
 *
 * Follows the crawler-commons BasicURLNormalizer profile (see
 * test/unit/url-conformance.test.ts for the conformance suite and the listed departures),
 * on top of WHATWG URL parsing:
 *
 * - only `http:` and `https:` are accepted
 * - scheme and host lower case; IDN → punycode; a trailing dot on the host removed
 * - default port, userinfo and fragment dropped
 * - dot segments resolved; runs of `/` in the path collapsed to one; empty path → `/`
 * - percent-encoding normalised in path and query: escapes of unreserved characters
 *   (`A-Z a-z 0-9 - . _ ~`) decoded, other escapes upper-cased, a `%` that does not start
 *   a valid escape encoded as `%25`, and characters that are not allowed raw in an
 *   RFC 3986 URI (`[ ] ^ | { } \` `` ` `` etc.) percent-encoded
 * - query: split on `&`, parameters with an empty name dropped, tracking parameters
 *   dropped, `name=` written as `name`, stable sort by name, empty query removed
 * - session ids dropped, as query parameters and as `;jsessionid=` path parameters
 *   (see session-ids.ts: a page must have one URL, whatever session linked to it)
 * - result longer than {@link MAX_URL_LENGTH} rejected
 */
import { registrableDomainOf } from './scope.js';
import { isSessionParam, stripSessionPathParams } from './session-ids.js';

/** Longest canonical URL the crawler accepts (a common de-facto limit for browsers, sitemaps and search engines). */
export const MAX_URL_LENGTH = 2048;

/** Inputs longer than this are rejected before parsing (no canonical URL could shrink that much in practice). */
const MAX_INPUT_LENGTH = 32 * MAX_URL_LENGTH;

/** Longest DNS label and name (RFC 1035 §2.3.4; name without the trailing dot). */
const MAX_LABEL_LENGTH = 63;
const MAX_HOST_LENGTH = 253;

/**
 * Query parameters removed by canonicalisation because they only track the click or
 * campaign and never change the page: Google Analytics campaign tags (`utm_*`, any
 * case), click IDs from Facebook (`fbclid`), Google Ads (`gclid`), DoubleClick (`dclid`),
 * Microsoft Ads (`msclkid`), Yandex (`yclid`), Instagram share IDs (`igshid`), the
 * Mailchimp subscriber ID (`mc_eid`) and the Google Analytics cross-domain linker (`_ga`).
 * A trailing `*` marks a prefix. Names are compared case-insensitively after
 * percent-decoding.
 */
export const TRACKING_PARAMS: readonly string[] = Object.freeze([
  'utm_*',
  'fbclid',
  'gclid',
  'dclid',
  'msclkid',
  'mc_eid',
  '_ga',
  'yclid',
  'igshid',
]);

export type RejectReason = 'invalid_url' | 'unsupported_scheme' | 'too_long' | 'invalid_host';

export type CanonicalResult =
  | { ok: true; url: string; host: string; registrableDomain: string }
  | { ok: false; reason: RejectReason; detail: string };

export interface CanonicalizeOptions {
  /**
   * Extra query parameter names to remove (e.g. session IDs such as `phpsessid`), in
   * addition to {@link TRACKING_PARAMS}. Same matching rules (case-insensitive, `*` suffix = prefix).
   */
  stripParams?: readonly string[];
}

function matchesParamList(lowerName: string, list: readonly string[]): boolean {
  for (const entry of list) {
    const e = entry.toLowerCase();
    if (e.endsWith('*') ? lowerName.startsWith(e.slice(0, -1)) : lowerName === e) return true;
  }
  return false;
}

/** True when `name` (raw or percent-encoded) is one of {@link TRACKING_PARAMS}. */
export function isTrackingParam(name: string): boolean {
  return matchesParamList(safeDecode(name).toLowerCase(), TRACKING_PARAMS);
}

function safeDecode(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const HEX = '0123456789ABCDEF';

function isHexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function hexValue(c: number): number {
  if (c <= 0x39) return c - 0x30;
  if (c <= 0x46) return c - 0x41 + 10;
  return c - 0x61 + 10;
}

/** RFC 3986 §2.3 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~" */
function isUnreserved(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2d ||
    c === 0x2e ||
    c === 0x5f ||
    c === 0x7e
  );
}

/**
 * ASCII characters that must be percent-encoded in a canonical path or query: controls,
 * space, DEL and the characters RFC 3986 never allows raw (`" # < > [ ] \ ^ ` { | }`).
 * WHATWG URL already encodes most of them; it leaves `[ ] ^ |` (path) and
 * `[ ] ^ ` { | } \` (query) raw, which crawler-commons encodes.
 */
function mustEscape(c: number): boolean {
  return (
    c <= 0x20 ||
    c === 0x7f ||
    c === 0x22 ||
    c === 0x23 ||
    c === 0x3c ||
    c === 0x3e ||
    c === 0x5b ||
    c === 0x5c ||
    c === 0x5d ||
    c === 0x5e ||
    c === 0x60 ||
    c === 0x7b ||
    c === 0x7c ||
    c === 0x7d
  );
}

function escapeByte(b: number): string {
  return '%' + HEX[b >> 4]! + HEX[b & 15]!;
}

/** Normalises percent-encoding in one path or query string (see module comment). */
function normalizePercent(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25 /* % */) {
      if (i + 2 < s.length && isHexDigit(s.charCodeAt(i + 1)) && isHexDigit(s.charCodeAt(i + 2))) {
        const b = (hexValue(s.charCodeAt(i + 1)) << 4) | hexValue(s.charCodeAt(i + 2));
        out += isUnreserved(b) ? String.fromCharCode(b) : escapeByte(b);
        i += 2;
      } else {
        out += '%25';
      }
    } else if (c < 0x80) {
      out += mustEscape(c) ? escapeByte(c) : s[i];
    } else {
      // WHATWG URL has already UTF-8-encoded non-ASCII; kept as a safety net.
      const cp = s.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      let enc: string;
      try {
        enc = encodeURIComponent(ch);
      } catch {
        enc = '%EF%BF%BD'; // lone surrogate → U+FFFD
      }
      out += enc;
      if (cp > 0xffff) i++;
    }
  }
  return out;
}

/** Canonical query string (without `?`; `''` when no parameters remain). */
function normalizeQuery(search: string, extraStrip: readonly string[]): string {
  if (search === '' || search === '?') return '';
  const raw = search.startsWith('?') ? search.slice(1) : search;
  const params: { name: string; value: string }[] = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = normalizePercent(eq === -1 ? part : part.slice(0, eq));
    if (name === '') continue;
    const value = eq === -1 ? '' : normalizePercent(part.slice(eq + 1));
    const lower = safeDecode(name).toLowerCase();
    if (matchesParamList(lower, TRACKING_PARAMS)) continue;
    if (extraStrip.length > 0 && matchesParamList(lower, extraStrip)) continue;
    if (isSessionParam(lower, safeDecode(value))) continue;
    params.push({ name, value });
  }
  // Array.prototype.sort is stable (ES2019): equal names keep their original order.
  params.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return params.map((p) => (p.value === '' ? p.name : `${p.name}=${p.value}`)).join('&');
}

/** Validates a WHATWG-parsed hostname; returns the canonical host or an error detail. */
function canonicalHost(hostname: string): { host: string } | { error: string } {
  let host = hostname.toLowerCase();
  if (host.startsWith('[')) {
    return host.endsWith(']') && host.length > 2 ? { host } : { error: `invalid IPv6 host ${JSON.stringify(hostname)}` };
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') return { error: 'empty host' };
  if (host.length > MAX_HOST_LENGTH) {
    return { error: `host is ${host.length} characters long (max ${MAX_HOST_LENGTH})` };
  }
  for (const label of host.split('.')) {
    if (label === '') return { error: `empty label in host ${JSON.stringify(hostname)}` };
    if (label.length > MAX_LABEL_LENGTH) {
      return { error: `host label is ${label.length} characters long (max ${MAX_LABEL_LENGTH})` };
    }
    // Letters, digits, hyphen (RFC 1123) plus underscore, which real hosts use and browsers accept.
    if (!/^[a-z0-9_-]+$/.test(label)) {
      return { error: `invalid character in host ${JSON.stringify(hostname)}` };
    }
  }
  return { host };
}

/**
 * Without a base, input that starts like a host name (`example.com/x`, `localhost:8080`)
 * is taken as `http://…`, as crawler-commons does; `//host/x` becomes `http://host/x`.
 */
const SCHEMELESS_HOST_RE = /^(?:localhost|[^/?#:@\\\s.]*\.[^/?#:@\\\s]*)(?::\d*)?(?:[/?#\\]|$)/i;

function parse(input: string, base: string | undefined): URL | string {
  if (base !== undefined) {
    let baseUrl: URL;
    try {
      baseUrl = new URL(base);
    } catch {
      return `invalid base URL ${JSON.stringify(base.slice(0, 200))}`;
    }
    try {
      return new URL(input, baseUrl);
    } catch {
      return `cannot parse URL ${JSON.stringify(input.slice(0, 200))} against base`;
    }
  }
  // Same pre-processing as the WHATWG parser (strip leading/trailing C0 controls and
  // spaces, remove tabs and newlines), so the host-first heuristic sees what URL sees.
  const s = input.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '').replace(/[\t\n\r]/g, '');
  let candidate = s;
  if (s.startsWith('//')) candidate = 'http:' + s;
  else if (SCHEMELESS_HOST_RE.test(s)) candidate = 'http://' + s;
  try {
    return new URL(candidate);
  } catch {
    return `cannot parse URL ${JSON.stringify(input.slice(0, 200))}`;
  }
}

/**
 * Runs of `/` collapsed to one, and dot segments resolved again where that uncovered some: the
 * parser leaves `.` in a path that starts with `//` (Node's URL keeps `//.a/.` as it is), and
 * canonicalizing a canonical URL must give it back unchanged.
 */
function collapseSlashes(p: string): string {
  const path = p.replace(/\/{2,}/g, '/');
  if (path === p || !/\/\.\.?(?:\/|$)/.test(path)) return path;
  return new URL(path, 'http://h').pathname.replace(/\/{2,}/g, '/');
}

function canonicalizeUnsafe(input: string, base: string | undefined, options: CanonicalizeOptions | undefined): CanonicalResult {
  if (input.length > MAX_INPUT_LENGTH) {
    return { ok: false, reason: 'too_long', detail: `input is ${input.length} characters long` };
  }
  const parsed = parse(input, base);
  if (typeof parsed === 'string') return { ok: false, reason: 'invalid_url', detail: parsed };

  const scheme = parsed.protocol;
  if (scheme !== 'http:' && scheme !== 'https:') {
    return { ok: false, reason: 'unsupported_scheme', detail: `scheme ${JSON.stringify(scheme.slice(0, -1))} is not http or https` };
  }

  const h = canonicalHost(parsed.hostname);
  if ('error' in h) return { ok: false, reason: 'invalid_host', detail: h.error };
  const host = h.host;

  // WHATWG URL has already dropped the default port and resolved dot segments.
  const port = parsed.port === '' ? '' : `:${parsed.port}`;
  let path = normalizePercent(collapseSlashes(stripSessionPathParams(parsed.pathname)));
  if (path === '' || path[0] !== '/') path = '/' + path;
  const query = normalizeQuery(parsed.search, options?.stripParams ?? []);

  const url = `${scheme}//${host}${port}${path}${query === '' ? '' : '?' + query}`;
  if (url.length > MAX_URL_LENGTH) {
    return { ok: false, reason: 'too_long', detail: `canonical URL is ${url.length} characters long (max ${MAX_URL_LENGTH})` };
  }
  return { ok: true, url, host, registrableDomain: registrableDomainOf(host) };
}

/**
 * Canonicalises `input` (resolved against `base` when given). Never throws: any failure
 * is reported as `{ ok: false, reason, detail }`.
 */
export function canonicalize(input: string, base?: string, options?: CanonicalizeOptions): CanonicalResult {
  try {
    if (typeof input !== 'string') return { ok: false, reason: 'invalid_url', detail: 'input is not a string' };
    if (base !== undefined && typeof base !== 'string') {
      return { ok: false, reason: 'invalid_url', detail: 'base is not a string' };
    }
    return canonicalizeUnsafe(input, base, options);
  } catch (err) {
    return { ok: false, reason: 'invalid_url', detail: `unexpected error: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * Host of a URL (lower case, IPv6 in brackets, trailing dot removed), or `''` when the
 * string is not a parseable absolute URL. Never throws.
 */
export function hostOf(url: string): string {
  try {
    const h = new URL(url).hostname.toLowerCase();
    return h.endsWith('.') ? h.slice(0, -1) : h;
  } catch {
    return '';
  }
}
