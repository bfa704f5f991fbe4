/**
 * The pattern of a URL: what is left when the parts a generator fills in (numbers, dates,
 * hashes, UUIDs, long ids, and every query value) are replaced by placeholders. An infinite
 * calendar, endless pagination or a soft-404 site writes URLs that all share a few
 * patterns, while the pages of a normal site spread over many; the gate counts new URLs
 * per pattern (a trap's pattern keeps producing), and simhash counts how many of a
 * pattern's pages were near-duplicates.
 *
 *   http://cal.example/cal/2026/11/22?view=day  ->  cal.example/cal/<n>/<n>/<n>?view=<w>
 *   http://shop.example/item-8812.html?sid=x9   ->  shop.example/item-<n>.html?sid=<w>
 *
 * Words in the path stay as they are: they are the site's structure (`/blog/`, `/docs/`).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** 8+ hex digits with both a digit and a letter: a hash or hex id (a plain word or number is not one) */
const HEX = /^(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}$/i;
/** 16+ letters and digits with both: a generated id or token (base64url ids, session-like keys) */
const LONG_ID = /^(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{16,}$/;
/** ISO dates (2026-11-22) and compact ones (20261122), before numbers are collapsed one by one */
const DATE = /\b\d{4}-\d{2}-\d{2}\b|\b(?:19|20)\d{6}\b/g;

/** One token (a path segment or a query value) with its generated parts replaced. */
function tokenPattern(token: string): string {
  if (token === '') return token;
  if (UUID.test(token)) return '<uuid>';
  if (HEX.test(token)) return '<hex>';
  if (LONG_ID.test(token)) return '<id>';
  return token
    .replace(DATE, '<date>')
    .split(/([-_.,~+])/)
    .map((part) => (HEX.test(part) ? '<hex>' : LONG_ID.test(part) ? '<id>' : part.replace(/\d+/g, '<n>')))
    .join('');
}

/** A query value: all of it is input to the page, so even words become `<w>`. */
function valuePattern(value: string): string {
  if (value === '') return '';
  const p = tokenPattern(value);
  if (p === value) return '<w>';
  // a value of placeholders only keeps them (`<n>`, `<date>`); mixed text is a word
  return /^(?:<[a-z]+>|[-_.,~+])+$/.test(p) ? p : '<w>';
}

/** The URL's pattern (host, port, path and query; see the module comment). Never throws. */
export function urlPattern(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const path = parsed.pathname
    .split('/')
    .map((segment) => tokenPattern(segment))
    .join('/');
  const query = parsed.search
    .slice(1)
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const eq = part.indexOf('=');
      return eq < 0 ? part : `${part.slice(0, eq)}=${valuePattern(part.slice(eq + 1))}`;
    })
    .join('&');
  return `${parsed.host}${path}${query === '' ? '' : `?${query}`}`;
}
