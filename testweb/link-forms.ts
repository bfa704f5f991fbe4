// The many ways pages write the same link. Real pages mix relative, absolute-path and
// absolute-URL hrefs, reorder query strings, tack on tracking parameters and fragments, and
// spell hosts oddly; a crawler must reduce them all to one canonical URL. Every form made
// here is checked by the model builder to resolve to its intended target.

import { chance, randInt, type Rng } from './prng.js';
import { dirOf, relativePath } from './url-forms.js';

/** Path + query (+ fragment) of a key, with the query reordered or tracked now and then. */
function decoratedPath(rng: Rng, key: string): string {
  // The key's query is sorted; links often write it in another order, or add tracking.
  const q = key.indexOf('?');
  let path = q < 0 ? key : key.slice(0, q);
  let params = q < 0 ? [] : key.slice(q + 1).split('&');
  if (params.length > 1 && chance(rng, 0.5)) params = params.reverse();
  if (chance(rng, 0.15)) {
    const tracking = chance(rng, 0.3) ? ['utm_source=x', 'utm_medium=email'] : ['utm_source=x'];
    params = chance(rng, 0.5) ? [...tracking, ...params] : [...params, ...tracking];
  }
  if (params.length > 0) path += `?${params.join('&')}`;
  if (chance(rng, 0.15)) path += `#section-${randInt(rng, 1, 9)}`;
  return path;
}

/**
 * An href to `key` on the page's own host: absolute path (sometimes with dot segments),
 * relative to the page (or to its <base href>), or an absolute URL (sometimes with an
 * upper-case host or an explicit :80).
 */
export function sameHostHref(rng: Rng, host: string, pageKey: string, baseHref: string | undefined, key: string): string {
  const decorated = decoratedPath(rng, key);
  const r = rng();
  if (r < 0.35) {
    return chance(rng, 0.1) && decorated !== '/' ? `/articles/..${decorated}` : decorated;
  }
  if (r < 0.7) {
    const pageUrl = `http://${host}${pageKey}`;
    const baseDir = dirOf(new URL(baseHref ?? pageUrl, pageUrl).pathname);
    const q = decorated.search(/[?#]/);
    const pathPart = q < 0 ? decorated : decorated.slice(0, q);
    const rest = q < 0 ? '' : decorated.slice(q);
    return relativePath(baseDir, pathPart) + rest;
  }
  const hostForm = chance(rng, 0.1) ? host.toUpperCase() : chance(rng, 0.1) ? `${host}:80` : host;
  return `http://${hostForm}${decorated}`;
}

/** An href to `key` on another host: absolute URL, sometimes protocol-relative or upper-case. */
export function crossHostHref(rng: Rng, host: string, key: string): string {
  const decorated = decoratedPath(rng, key);
  if (chance(rng, 0.1)) return `//${host}${decorated}`;
  return `http://${chance(rng, 0.1) ? host.toUpperCase() : host}${decorated}`;
}
