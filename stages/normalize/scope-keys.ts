/**
 * The keys a crawl's scope is kept under in the `crawl-scope` bucket (pure). A seed registers
 * all three of its keys, whatever the crawl's mode, so that a crawl resumed with another
 * `--scope` finds its earlier seeds' scope too:
 *   - its registrable domain, as is (`example.co.uk`: the key the bucket has always had)
 *   - `host=<host>`, its exact host (no port)
 *   - `prefix=<hash>`, its origin and path up to and including the last `/`
 *     (`https://example.com/docs/intro.html` → `https://example.com/docs/`), hashed because a
 *     path may hold what a KV key may not (`..`, a trailing `.`, any length)
 * `=` never occurs in a host name, so the three kinds cannot collide.
 */
import { stableId } from '../shared/messages/stage-ids.js';
import type { ScopedUrl, ScopeMode } from './scope.js';

/** A seed's prefix: its origin and the path up to and including its last `/` (no query). */
export function urlPrefixOf(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1)}`;
}

/** Every prefix a URL lies under: its origin's root, then each directory down to its own. */
export function prefixesOf(url: string): string[] {
  const u = new URL(url);
  const out: string[] = [];
  for (let at = u.pathname.indexOf('/'); at >= 0; at = u.pathname.indexOf('/', at + 1)) out.push(`${u.origin}${u.pathname.slice(0, at + 1)}`);
  return out;
}

export const hostKey = (host: string): string => `host=${host}`;
export const prefixKey = (prefix: string): string => `prefix=${stableId('scope-prefix', prefix)}`;

/** The keys a seed (or a seed's redirect target) puts in the scope: one per mode. */
export function seedScopeKeys(u: ScopedUrl): string[] {
  return [u.registrableDomain, hostKey(u.host), prefixKey(urlPrefixOf(u.url))];
}

/** The keys, any one of which takes a URL into the scope of `mode` (none for `open`: everything is in). */
export function lookupKeys(mode: ScopeMode, u: ScopedUrl): string[] {
  switch (mode) {
    case 'domain':
      return [u.registrableDomain];
    case 'host':
      return [hostKey(u.host)];
    case 'prefix':
      return prefixesOf(u.url).map(prefixKey);
    case 'open':
      return [];
  }
}
