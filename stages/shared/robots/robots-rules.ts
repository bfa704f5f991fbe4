/**
 * robots.txt rules for the politeness gate (RFC 9309).
 *
 * Matching itself (longest match, Allow wins ties, `*` and `$`, case-insensitive
 * group selection with `*` fallback, merging of groups naming the same agent) is done
 * by robots-parser. This module wraps it to fix the places where robots-parser, used
 * on its own, departs from RFC 9309 or from Google's reference parser:
 *
 *  - Origin: robots-parser answers `undefined` for a URL whose scheme/host/port differ
 *    from the robots.txt URL it was built with. A compiled record here is origin-free
 *    (the caller looks records up by origin), so every verdict asks robots-parser about
 *    a URL on one fixed synthetic origin, carrying only the path and query. It can
 *    therefore never answer `undefined`; if it does, that is a bug and we throw.
 *  - Percent-encoding: robots-parser encodes patterns with `encodeURI` but takes the
 *    URL path as WHATWG URL left it; the two disagree on characters such as `|`, `^`,
 *    `[`, `]`, `'` and `"`. Both sides are put through {@link canonicalizeForMatch}
 *    first, so they agree: non-ASCII and unsafe ASCII are percent-encoded (UTF-8), and
 *    existing `%xx` escapes get upper-case hex. Escapes are never decoded (`%62` does
 *    not match `b`), as in Google's parser and its test `ID_Encoding`.
 *  - Line parsing (done here, then handed on as canonical `key: value` lines so line
 *    numbers are preserved): a UTF-8 BOM at the start is skipped; lines are capped at
 *    {@link ROBOTS_MAX_LINE_BYTES} like Google's parser; a missing `:` is accepted when
 *    the line has exactly two words (`disallow /`); common key typos (`useragent`,
 *    `dissallow`, `site-map`, ...) are accepted as Google does; a user-agent value is
 *    reduced to its product token (leading `[A-Za-z_-]` run, so `Foo Bar` and
 *    `FooBot/1.2` name `foo` and `foobot`); `Sitemap:` and unknown lines do not end a
 *    run of `User-agent:` lines (robots-parser would otherwise split the group);
 *    a `Crawl-delay` value must be a plain non-negative decimal number.
 *  - `/robots.txt` itself is always allowed, whatever the record says (RFC 9309 section 2.2.2:
 *    "The /robots.txt URI is implicitly allowed").
 *
 * API contract: {@link CompiledRobots.verdict} receives an absolute http(s) URL, normally
 * already canonical. It is parsed with WHATWG URL, so a raw non-ASCII path (`/ツ`) is
 * matched in its percent-encoded form (`/%E3%83%84`), as RFC 9309 section 2.2.2 asks.
 * A string that is not an absolute http(s) URL is answered `allowed: false`.
 */
import robotsParserModule from 'robots-parser';

/** The part of robots-parser's API used here (its bundled typings do not type the CJS default export). */
interface RobotsParserInstance {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getMatchingLineNumber(url: string, ua?: string): number;
  getCrawlDelay(ua?: string): number | undefined;
}
const robotsParser = robotsParserModule as unknown as (url: string, contents: string) => RobotsParserInstance;

/** RFC 9309 section 2.5: parse at least the first 500 KiB; we parse exactly that much. */
export const ROBOTS_MAX_BYTES = 500 * 1024;

/** Google's parser keeps at most kMaxLineLen - 1 = 2083 * 8 - 1 bytes of a line. */
export const ROBOTS_MAX_LINE_BYTES = 2083 * 8 - 1;

export interface RobotsRecord {
  kind: 'rules' | 'allow_all' | 'disallow_all';
  /** robots.txt text (first 500 KiB only) when kind = 'rules'. */
  body?: string;
  fetchedAt: number;
  status: number | null;
  /** e.g. 'http 404: no rules', 'http 503: disallow all until a fetch succeeds', 'network error: ...' */
  reason: string;
  /** disallow_all only: fetches failed in a row, and since when (robots.txt unavailable that long) */
  failures?: number;
  failingSince?: number;
  /**
   * disallow_all only: the host cannot be reached for the rest of the crawl (its name does not
   * exist, the SSRF guard refuses its address), so its URLs end at once with this outcome
   * instead of waiting for robots.txt.
   */
  ends?: { outcome: 'network_error' | 'refused'; reason: string };
  /**
   * disallow_all only: every address of the host refused the connection on this try; the
   * reason its URLs end with when the next try is refused too (failure-policy.ts, refusedEverywhere).
   */
  connectionRefused?: string;
}

export interface RobotsVerdict {
  allowed: boolean;
  crawlDelayMs: number | null;
  /** The deciding rule, e.g. 'Disallow: /private/', when known; otherwise null. */
  matchedRule: string | null;
}

export interface CompiledRobots {
  verdict(url: string): RobotsVerdict;
  /** Crawl-delay of the group that applies to the agent, in ms; null when none. */
  crawlDelayMs: number | null;
  /** `Sitemap:` values in file order (empty unless kind = 'rules'). */
  sitemaps: string[];
}

/**
 * The product token of the crawler's user-agent string, lower-cased, as it is matched
 * against robots.txt's `User-agent:` lines, meta robots names and `X-Robots-Tag` prefixes.
 *
 * A user agent that says `compatible; Name/1.0` inside a comment is named by that product,
 * as Google's crawlers are (`Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)`
 * obeys `User-agent: Googlebot`, and so does the form with `(KHTML, like Gecko; compatible;
 * Googlebot/2.1; ...)`): the `Mozilla/5.0` in front is there for servers that sniff
 * browsers, not to name the crawler. Otherwise it is the first product. Either way the token is
 * the product name's leading run of `[A-Za-z_-]` (RFC 9309's token characters), without its
 * version. 'jetstream-crawler/0.1 (+https://example.org/crawler)' -> 'jetstream-crawler';
 * 'Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot)' -> 'examplebot'.
 * Throws when neither gives such a run.
 */
export function productToken(userAgent: string): string {
  const m = COMPATIBLE_PRODUCT.exec(userAgent) ?? FIRST_PRODUCT.exec(userAgent);
  if (!m) {
    throw new Error(`user-agent ${JSON.stringify(userAgent)} names no product token ([A-Za-z_-]+ at its start or after "compatible;")`);
  }
  return m[1]!.toLowerCase();
}

/** `compatible; Name` inside a user agent's comment (after `(` or another comment part's `;`). */
const COMPATIBLE_PRODUCT = /[(;]\s*compatible\s*;\s*([A-Za-z_-]+)/i;
const FIRST_PRODUCT = /^([A-Za-z_-]+)/;

/**
 * The token this crawl obeys robots directives as: `--robots-token` when given, else the
 * product token of `--user-agent` ({@link productToken}).
 */
export function robotsTokenOf(settings: { userAgent: string; robotsToken?: string | undefined }): string {
  return settings.robotsToken !== undefined ? settings.robotsToken.toLowerCase() : productToken(settings.userAgent);
}

/** True when `token` is a valid product token to obey (Google's IsValidUserAgentToObey). */
export function isValidProductToken(token: string | null | undefined): boolean {
  return typeof token === 'string' && /^[A-Za-z_-]+$/.test(token);
}

// ---------------------------------------------------------------------------------
// Percent-encoding

/** ASCII characters kept as they are (encodeURI's unescaped set less `#` and `'`). */
const SAFE_ASCII_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*();,/?:@&=+$";
const ALL_SAFE = /^[A-Za-z0-9\-_.!~*();,/?:@&=+$]*$/;
/** Output for each ASCII code unit: itself when safe, else its escape. */
const ASCII_OUT: readonly string[] = Array.from({ length: 128 }, (_, c) =>
  SAFE_ASCII_CHARS.includes(String.fromCharCode(c)) ? String.fromCharCode(c) : '%' + c.toString(16).toUpperCase().padStart(2, '0'),
);
const utf8 = new TextEncoder();
const isHex = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

/**
 * The form in which both a robots.txt path pattern and a URL's path+query are compared:
 * `%xx` escapes keep their octet with upper-case hex; `A-Z a-z 0-9 - _ . ! ~ * ( ) ; , / ? : @ & = + $`
 * stay as they are; every other character (non-ASCII, controls, space, `" ' # < > [ \ ] ^ \` { | }`,
 * a `%` not starting an escape) is percent-encoded as UTF-8. Idempotent; never decodes.
 */
export function canonicalizeForMatch(s: string): string {
  if (ALL_SAFE.test(s)) return s; // the common case: nothing to do
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25 /* % */ && i + 2 < s.length && isHex(s.charCodeAt(i + 1)) && isHex(s.charCodeAt(i + 2))) {
      out += '%' + s.slice(i + 1, i + 3).toUpperCase();
      i += 2;
    } else if (c < 0x80) {
      out += ASCII_OUT[c];
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      out += encodeURIComponent(s.slice(i, i + 2)); // a surrogate pair: 4 UTF-8 bytes
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out += '%EF%BF%BD'; // a lone surrogate: U+FFFD, as TextEncoder would
    } else {
      out += encodeURIComponent(s[i]!); // upper-case hex, UTF-8
    }
  }
  return out;
}

/**
 * The path and query robots rules are matched against (fragment dropped, canonical
 * encoding), or null when `url` is not an absolute http(s) URL.
 * 'http://h/a/b?c=d#f' -> '/a/b?c=d'; 'http://h' -> '/'.
 */
export function robotsMatchPath(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  return canonicalizeForMatch(u.pathname + u.search);
}

// ---------------------------------------------------------------------------------
// Line parsing

type Directive = 'user-agent' | 'allow' | 'disallow' | 'sitemap' | 'crawl-delay';

const KEYS: Record<string, Directive> = {
  'user-agent': 'user-agent',
  useragent: 'user-agent', // Google accepts these typos
  'user agent': 'user-agent',
  allow: 'allow',
  disallow: 'disallow',
  dissallow: 'disallow',
  dissalow: 'disallow',
  disalow: 'disallow',
  diasllow: 'disallow',
  disallaw: 'disallow',
  sitemap: 'sitemap',
  'site-map': 'sitemap',
  'crawl-delay': 'crawl-delay',
};

const CRAWL_DELAY = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
/** ASCII whitespace only: String.prototype.trim would also eat U+FEFF and U+00A0. */
const trimAscii = (s: string): string => s.replace(/^[ \t\v\f]+|[ \t\v\f]+$/g, '');

/** Cut `s` to at most `maxBytes` UTF-8 bytes, at a character boundary. */
function truncateUtf8(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes) return s; // at most 3 bytes per UTF-16 unit
  const bytes = utf8.encode(s);
  if (bytes.length <= maxBytes) return s;
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back off a continuation byte
  return new TextDecoder().decode(bytes.subarray(0, end));
}

interface RuleLine {
  allow: boolean;
  /** The value as written (comment and surrounding blanks removed). */
  value: string;
}

interface ParsedRobots {
  /** One canonical line per input line, so line numbers carry over to robots-parser. */
  text: string;
  ruleLines: Map<number, RuleLine>;
  sitemaps: string[];
}

function splitKeyValue(line: string): [string, string] | null {
  const colon = line.indexOf(':');
  if (colon >= 0) return [line.slice(0, colon), line.slice(colon + 1)];
  // Google: a missing ':' is accepted if the line is exactly two words.
  const m = /^([^ \t]+)[ \t]+([^ \t]+)$/.exec(line);
  return m ? [m[1]!, m[2]!] : null;
}

function parseRobotsText(body: string): ParsedRobots {
  const text = body.startsWith('\uFEFF') ? body.slice(1) : body;
  let src = truncateUtf8(text, ROBOTS_MAX_BYTES);
  if (src.length < text.length) {
    // Over the cap (recordFromResponse has normally cut already): drop the half line too.
    const lastEol = Math.max(src.lastIndexOf('\n'), src.lastIndexOf('\r'));
    if (lastEol >= 0) src = src.slice(0, lastEol + 1);
  }
  const out: string[] = [];
  const ruleLines = new Map<number, RuleLine>();
  const sitemaps: string[] = [];
  const lines = src.split(/\r\n|\r|\n/); // the same split robots-parser uses
  for (let i = 0; i < lines.length; i++) {
    let line = truncateUtf8(lines[i]!, ROBOTS_MAX_LINE_BYTES);
    const hash = line.indexOf('#');
    if (hash >= 0) line = line.slice(0, hash);
    line = trimAscii(line);
    const kv = line ? splitKeyValue(line) : null;
    const key = kv ? KEYS[trimAscii(kv[0]).toLowerCase()] : undefined;
    if (!kv || !key) {
      out.push(''); // blank: robots-parser skips it without ending a user-agent run
      continue;
    }
    const value = trimAscii(kv[1]);
    switch (key) {
      case 'user-agent': {
        // Google: '*' (alone or followed by a blank) is the global agent; otherwise the
        // product token is the leading [A-Za-z_-] run ('Foo Bar' -> 'Foo').
        const token = /^\*(?:[ \t]|$)/.test(value) ? '*' : (/^[A-Za-z_-]*/.exec(value)![0]);
        out.push(`user-agent: ${token}`);
        break;
      }
      case 'allow':
      case 'disallow':
        out.push(`${key}: ${canonicalizeForMatch(value)}`);
        ruleLines.set(i + 1, { allow: key === 'allow', value });
        break;
      case 'crawl-delay':
        // Still a group line when the value is bad; robots-parser ignores NaN.
        out.push(`crawl-delay: ${CRAWL_DELAY.test(value) ? value : 'NaN'}`);
        break;
      case 'sitemap':
        if (value) sitemaps.push(value);
        out.push('');
        break;
    }
  }
  return { text: out.join('\n'), ruleLines, sitemaps };
}

// ---------------------------------------------------------------------------------
// Compilation

/** Reserved TLD (RFC 2606): every verdict is asked on this one origin. */
const MATCH_ORIGIN = 'http://robots.invalid';
const ROBOTS_PATH = '/robots.txt';

/**
 * Compile a robots record for one agent. Parse once, then call `verdict` for any number
 * of URLs of the origin the record was fetched for; the result holds no reference to
 * the record and can be cached alongside it.
 */
export function compileRobots(record: RobotsRecord, userAgentToken: string): CompiledRobots {
  const agent = userAgentToken.trim().toLowerCase();

  if (record.kind !== 'rules') {
    const allowed = record.kind === 'allow_all';
    return {
      crawlDelayMs: null,
      sitemaps: [],
      verdict(url: string): RobotsVerdict {
        const path = robotsMatchPath(url);
        if (path === null) return { allowed: false, crawlDelayMs: null, matchedRule: null };
        return { allowed: allowed || isRobotsTxtPath(path), crawlDelayMs: null, matchedRule: null };
      },
    };
  }

  const parsed = parseRobotsText(record.body ?? '');
  const robots = robotsParser(`${MATCH_ORIGIN}${ROBOTS_PATH}`, parsed.text);
  const delaySec = robots.getCrawlDelay(agent);
  const crawlDelayMs =
    typeof delaySec === 'number' && Number.isFinite(delaySec) && delaySec >= 0 ? Math.round(delaySec * 1000) : null;

  return {
    crawlDelayMs,
    sitemaps: parsed.sitemaps.slice(),
    verdict(url: string): RobotsVerdict {
      const path = robotsMatchPath(url);
      if (path === null) return { allowed: false, crawlDelayMs, matchedRule: null };
      if (isRobotsTxtPath(path)) return { allowed: true, crawlDelayMs, matchedRule: null };
      const probe = MATCH_ORIGIN + path;
      const allowed = robots.isAllowed(probe, agent);
      if (allowed === undefined) {
        throw new Error(`robots-parser gave no answer for ${JSON.stringify(probe)} (origin mismatch): this is a bug`);
      }
      const lineNo = robots.getMatchingLineNumber(probe, agent);
      let matchedRule: string | null = null;
      if (lineNo > 0) {
        const rule = parsed.ruleLines.get(lineNo);
        if (!rule || rule.allow !== allowed) {
          throw new Error(`robots-parser matched line ${lineNo}, which is not the deciding rule line: this is a bug`);
        }
        matchedRule = `${rule.allow ? 'Allow' : 'Disallow'}: ${rule.value}`;
      } else if (!allowed) {
        throw new Error(`robots-parser disallowed ${JSON.stringify(probe)} without a matching line: this is a bug`);
      }
      return { allowed, crawlDelayMs, matchedRule };
    },
  };
}

function isRobotsTxtPath(path: string): boolean {
  return path === ROBOTS_PATH;
}
