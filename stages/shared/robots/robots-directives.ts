/**
 * Page-level robots directives: `<meta name="robots">` (or named for the crawler) and the
 * `X-Robots-Tag` response header, read as Google Search Central's "Robots meta tag,
 * data-nosnippet, and X-Robots-Tag specifications" describes them:
 *
 *  - rules are a comma-separated list, names and values case-insensitive;
 *  - `noindex`, `nofollow`, and `none` (= both) restrict; `all`, `index` and `follow` are the
 *    default and change nothing; when rules conflict the more restrictive one applies, so the
 *    verdicts of every source are OR-ed;
 *  - an `X-Robots-Tag` rule may be preceded by a user agent (`googlebot: noindex`), which
 *    applies to the rules after it until the next user agent; rules before any user agent
 *    are for every crawler. Each header line is read on its own (a user agent's rules end
 *    with its line), when the lines are known: the HTTP client joins several lines by ", "
 *    (RFC 9110 section 5.3) and keeps them apart too; joined, a user agent can appear mid-list;
 *  - `unavailable_after: <date>`: the page is not to be shown after that date. Here a date
 *    before the page's fetch time makes the page noindex; a date that does not parse is ignored,
 *    as Google ignores it. RFC 822/850/1123 and ISO 8601 dates are read; one without a zone is
 *    taken as UTC, so the verdict does not depend on the machine's time zone;
 *  - the other rules (`noarchive`, `nosnippet`, `max-snippet: 20`, `notranslate` ...) are
 *    recorded with the page but change nothing the crawler does.
 *
 * A name (meta `name`, header user agent) addresses this crawler when its product token (the
 * leading `[A-Za-z_-]` run, lower-cased, as robots.txt's `User-agent:` lines are read) is the
 * crawler's token.
 */

/**
 * The rules one source gave the crawler, in order, names lower-cased (a valued rule's value as
 * written): `{ source: 'x-robots-tag', rules: ['noindex', 'unavailable_after: 25 Jun 2010 15:00:00 PST'] }`.
 */
export interface DirectiveGroup {
  /** `x-robots-tag`, or `meta <name>` (`meta robots`, `meta examplebot`) */
  source: string;
  rules: string[];
}

/** What the directives mean for the crawler: keep no text (`noindex`), follow no links (`nofollow`). */
export interface IndexingVerdict {
  noindex: boolean;
  nofollow: boolean;
}

/** Rules with a value after a colon: a `name:` before anything else is a user agent. */
const VALUED_RULES: ReadonlySet<string> = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview']);
/** Rules kept per source (a header or meta tag is not a place to store a novel). */
const MAX_RULES = 32;
const MAX_RULE_CHARS = 200;
/** Comma-separated items read of one value: a bound on the work, far above any real header's. */
const MAX_ITEMS = 512;

/** The product token a name is matched by: its leading `[A-Za-z_-]` run, lower-cased ('' when none). */
export function nameToken(name: string): string {
  return (/^[A-Za-z_-]*/.exec(name.trim())?.[0] ?? '').toLowerCase();
}

/** True when a meta tag of this name carries robots rules for the crawler: `robots`, or the crawler's token. */
export function addressesCrawler(name: string, token: string): boolean {
  const n = name.trim().toLowerCase();
  return n === 'robots' || (token !== '' && nameToken(n) === token);
}

/** The rules of a meta robots `content` (whatever its name: the caller checked it addresses the crawler). */
export function metaRobotsRules(content: string): string[] {
  return readRules(content, null)
    .slice(0, MAX_RULES)
    .map((r) => r.rule);
}

/**
 * The rules of an `X-Robots-Tag` value (several headers joined by ", ") that apply to the
 * crawler `token`: those before any user agent, and those after a user agent naming it.
 */
export function xRobotsTagRules(value: string, token: string): string[] {
  return readRules(value, token)
    .filter((r) => r.agent === null || nameToken(r.agent) === token)
    .slice(0, MAX_RULES)
    .map((r) => r.rule);
}

/**
 * The header's group for the crawler, or null when the response has none (or none for it).
 * `lines`: the fields sent more than once, each line apart (HttpResponse.headerLines), so that
 * `otherbot: nofollow` on one line does not take in the `noindex` of the next.
 */
export function xRobotsTagGroup(headers: Readonly<Record<string, string>>, token: string, lines?: Readonly<Record<string, readonly string[]>>): DirectiveGroup | null {
  const values = lines?.['x-robots-tag'] ?? (headers['x-robots-tag'] === undefined ? [] : [headers['x-robots-tag']]);
  const rules = values.flatMap((v) => xRobotsTagRules(v, token)).slice(0, MAX_RULES);
  return rules.length > 0 ? { source: 'x-robots-tag', rules } : null;
}

/**
 * The verdict of all the groups together, the most restrictive rule winning. `at` is when the
 * page was fetched: an `unavailable_after` date before it means noindex. Without `at`, dates
 * are not judged.
 */
export function indexingVerdict(groups: readonly DirectiveGroup[], at?: number): IndexingVerdict {
  const verdict = { noindex: false, nofollow: false };
  for (const { rules } of groups) {
    for (const rule of rules) {
      if (rule === 'noindex' || rule === 'none') verdict.noindex = true;
      if (rule === 'nofollow' || rule === 'none') verdict.nofollow = true;
      if (at !== undefined && rule.startsWith('unavailable_after:')) {
        const until = parseDirectiveDate(rule.slice('unavailable_after:'.length));
        if (until !== null && until < at) verdict.noindex = true;
      }
    }
  }
  return verdict;
}

/** The groups as one line for the output: `x-robots-tag: noindex, noarchive; meta robots: nofollow`; null when there are none. */
export function describeDirectives(groups: readonly DirectiveGroup[]): string | null {
  const parts = groups.filter((g) => g.rules.length > 0).map((g) => `${g.source}: ${g.rules.join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : null;
}

/**
 * An `unavailable_after` date as epoch ms, or null when it does not parse. A date without a
 * zone is UTC (Date.parse would take the machine's zone for most forms).
 */
export function parseDirectiveDate(raw: string): number | null {
  const s = raw.trim();
  if (s === '') return null;
  const zoned = HAS_ZONE.test(s) ? s : /^\d{4}-\d{2}-\d{2}T/.test(s) ? `${s}Z` : `${s} GMT`;
  const t = Date.parse(zoned);
  return Number.isFinite(t) ? t : null;
}

/** A date string ending in a zone: a name Date.parse knows (UT, UTC, GMT, EST ... PDT), `Z`, or an offset. */
const HAS_ZONE = /(?:\b(?:UTC?|GMT|[ECMP][SD]T)|\dZ|[+-]\d{2}:?\d{2})$/i;

interface ReadRule {
  /** the user agent the rule is addressed to (a header's `name:` prefix), or null for every crawler */
  agent: string | null;
  rule: string;
}

/**
 * Splits a rule list. With `token` (a header), a `name:` before a rule that is not one of the
 * valued rules is a user agent for the rules after it. A comma inside an `unavailable_after`
 * date (`Wednesday, 03-Nov-2027 ...`) does not end the rule: when the date does not parse
 * alone and does with the next piece, the two are one. Words separated only by spaces are
 * read as separate rules too (`noindex nofollow`), as lenient parsers do.
 */
function readRules(value: string, token: string | null): ReadRule[] {
  const pieces = value.split(',', MAX_ITEMS);
  const out: ReadRule[] = [];
  let agent: string | null = null;
  for (let i = 0; i < pieces.length; i++) {
    let piece = pieces[i]!.trim();
    if (piece === '') continue;
    const colon = /^([^:\s]+)\s*:\s*(.*)$/s.exec(piece);
    if (token !== null && colon && !VALUED_RULES.has(colon[1]!.toLowerCase())) {
      agent = colon[1]!;
      piece = colon[2]!.trim();
      if (piece === '') continue;
    }
    const valued = /^([^:\s]+)\s*:\s*(.*)$/s.exec(piece);
    if (valued) {
      const name = valued[1]!.toLowerCase();
      let arg = valued[2]!.trim();
      if (name === 'unavailable_after' && parseDirectiveDate(arg) === null && i + 1 < pieces.length) {
        const joined = `${arg}, ${pieces[i + 1]!.trim()}`;
        if (parseDirectiveDate(joined) !== null) {
          arg = joined;
          i++;
        }
      }
      out.push({ agent, rule: `${name}: ${arg}`.slice(0, MAX_RULE_CHARS) });
      continue;
    }
    // a colon that is neither a user agent nor a valued rule (`other bot: noindex`): unreadable
    if (piece.includes(':')) continue;
    for (const word of piece.split(/\s+/, MAX_ITEMS)) {
      if (word !== '') out.push({ agent, rule: word.toLowerCase().slice(0, MAX_RULE_CHARS) });
    }
  }
  return out;
}
