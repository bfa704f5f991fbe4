/**
 * Crawl traps visible in a URL alone. A path whose segments repeat (`/a/b/a/b/a/b/...`,
 * `/x/x/x/`) is what ever-deeper relative links and misconfigured rewrites produce: each
 * step is a new URL, and the crawl would follow them forever.
 */

/** A run of the same 1..MAX_CYCLE segments this many times in a row is a trap. */
const MIN_REPEATS = 3;
const MAX_CYCLE = 4;

/** The path of a canonical URL (scheme://host[:port]/path[?query]), without parsing it again. */
export function pathOf(canonicalUrl: string): string {
  const start = canonicalUrl.indexOf('/', canonicalUrl.indexOf('//') + 2);
  if (start < 0) return '/';
  const query = canonicalUrl.indexOf('?', start);
  return canonicalUrl.slice(start, query < 0 ? undefined : query);
}

/** Why the path looks like a trap, or null. */
export function repeatedSegments(pathname: string): string | null {
  const segs = pathname.split('/').filter((s) => s !== '');
  for (let cycle = 1; cycle <= MAX_CYCLE; cycle++) {
    for (let start = 0; start + cycle * MIN_REPEATS <= segs.length; start++) {
      let repeats = 1;
      while (start + (repeats + 1) * cycle <= segs.length && sameRun(segs, start, start + repeats * cycle, cycle)) repeats++;
      if (repeats >= MIN_REPEATS) return `/${segs.slice(start, start + cycle).join('/')} repeated ${repeats} times in a row`;
    }
  }
  return null;
}

function sameRun(segs: string[], a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (segs[a + i] !== segs[b + i]) return false;
  return true;
}
