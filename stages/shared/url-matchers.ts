/**
 * URL matchers: the patterns the crawl settings give (`--include`, `--exclude`, `--render`),
 * a glob or a /regex/, parsed once and matched against a canonical URL. Pure. (A URL's own
 * pattern, its generated parts replaced, is another thing: traps/url-pattern.ts.)
 */
const SCHEME_PREFIX_RE = /^[a-z][a-z0-9+.-]*:\/\//i;
const REGEX_FORM_RE = /^\/(.+)\/([a-z]*)$/s;

/**
 * Parses a URL pattern (`--include`, `--exclude`, `--render`). Two forms:
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
  return parseNamedPattern(s, 'scope pattern');
}

/**
 * parsePattern, with `what` naming the pattern in errors ("invalid --render pattern …"). A
 * function of its own so that parsePattern keeps one parameter and can be passed to `map`.
 */
export function parseNamedPattern(s: string, what: string): RegExp {
  const p = s.trim();
  if (p === '') throw new Error(`invalid ${what}: empty pattern`);
  const m = REGEX_FORM_RE.exec(p);
  if (m) {
    const source = m[1]!;
    const flags = m[2]!.replace(/[gy]/g, '');
    try {
      return new RegExp(source, flags);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`invalid ${what} ${JSON.stringify(s)}: not a valid regular expression (${why})`);
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

/** Whether `s` matches a parsed pattern (safe with any flags). */
export function matchesPattern(re: RegExp, s: string): boolean {
  if (re.global || re.sticky) re.lastIndex = 0;
  return re.test(s);
}

