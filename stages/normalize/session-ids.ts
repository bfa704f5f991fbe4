/**
 * Session ids in URLs. Servers that cannot use cookies (or do not trust them) put the
 * visitor's session in every link they write, and a crawler gets a new session with every
 * response: each page is then reachable under endless URLs. Canonicalisation removes them,
 * so every session's copy of a page is the same URL.
 *
 * Names always removed (compared case-insensitively after percent-decoding), each a
 * framework's default that names nothing but the session:
 * - `jsessionid`: Java servlet containers (also as the `;jsessionid=` path parameter)
 * - `phpsessid`: PHP's session.name default
 * - `aspsessionid*`: classic ASP (the name carries a random suffix)
 * - `cfid`, `cftoken`: ColdFusion client management
 * - `sessionid`, `session_id`, `sessid`: the generic spellings frameworks and hand-written
 *   code use
 * - `oscsid` (osCommerce), `zenid` (Zen Cart): shop systems that add it to every link
 *
 * Names removed only when the value looks like a session token, because the short names
 * also mean other things (`s` is often a search query, `sid` a story or site id):
 * - `sid`: 32 or more hex digits (phpBB's md5 session id)
 * - `s`: exactly 32 hex digits (vBulletin's session hash)
 */
export const SESSION_PARAMS: readonly string[] = Object.freeze([
  'jsessionid',
  'phpsessid',
  'aspsessionid*',
  'cfid',
  'cftoken',
  'sessionid',
  'session_id',
  'sessid',
  'oscsid',
  'zenid',
]);

/** Short names that are a session id only with a token-like value (see module comment). */
const TOKEN_VALUED: Readonly<Record<string, RegExp>> = Object.freeze({
  sid: /^[0-9a-f]{32,}$/i,
  s: /^[0-9a-f]{32}$/i,
});

function listed(lowerName: string): boolean {
  for (const entry of SESSION_PARAMS) {
    if (entry.endsWith('*') ? lowerName.startsWith(entry.slice(0, -1)) : lowerName === entry) return true;
  }
  return false;
}

/** True when the query parameter `name=value` (name lower-cased and decoded) carries a session id. */
export function isSessionParam(lowerName: string, value: string): boolean {
  if (listed(lowerName)) return true;
  const token = TOKEN_VALUED[lowerName];
  return token !== undefined && token.test(value);
}

/**
 * A path with its session path parameters removed: `/shop/item.jsp;jsessionid=A1B2` becomes
 * `/shop/item.jsp` (the `;name=value` form servlet containers use; other `;` parameters stay).
 */
export function stripSessionPathParams(path: string): string {
  if (!path.includes(';')) return path;
  return path.replace(/;([^;/=]*)=[^;/]*/g, (whole, name: string) => (isSessionParam(safeLower(name), '') ? '' : whole));
}

function safeLower(s: string): string {
  try {
    return decodeURIComponent(s).toLowerCase();
  } catch {
    return s.toLowerCase();
  }
}
