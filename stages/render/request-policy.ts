import type { BrowserRequest } from '../../ports/browser.js';

/**
 * Which of a page's requests the crawler makes for it. Scripts, stylesheets and XHR/fetch
 * build the page; images, media and fonts only dress it, so they are not worth a request
 * to a host that lets us make one every few seconds. Everything else is blocked too:
 * beacons, event streams and WebSockets never end or report on the visit, frames are
 * pages of their own (extract follows their src), and a crawler never sends a request
 * that may change state.
 */
export const LOADED_TYPES: ReadonlySet<string> = new Set(['script', 'stylesheet', 'xhr', 'fetch']);

/** Why the request is blocked (a short category first, for the render's summary), or null to make it. */
export function blockedByPolicy(req: BrowserRequest): string | null {
  if (req.navigation) return 'navigation: the page tried to leave for another URL (not followed)';
  if (req.subframe) return 'frame: a frame is a page of its own (its src is a link)';
  let protocol: string;
  try {
    protocol = new URL(req.url).protocol;
  } catch {
    return 'invalid URL';
  }
  if (protocol !== 'http:' && protocol !== 'https:') return `scheme: ${protocol.slice(0, -1)}`;
  if (req.method !== 'GET' && req.method !== 'HEAD') return `method: ${req.method} (a crawler sends no request that may change state)`;
  if (!LOADED_TYPES.has(req.resourceType)) return `type: ${req.resourceType} (only scripts, stylesheets and XHR/fetch are loaded)`;
  return null;
}

/** The category of a block reason: what comes before its first colon. */
export const blockCategory = (reason: string) => reason.split(':')[0]!;
