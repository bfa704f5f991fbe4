/**
 * What a robots.txt fetch result means (RFC 9309 section 2.3.1) and how long it is kept
 * (section 2.4). Pure functions: the fetching itself is in fetch-robots.ts.
 *
 *  2xx              -> rules (first 500 KiB, UTF-8, BOM skipped)
 *  3xx (unresolved) -> allow_all: a redirect chain that did not end (more than 5 hops,
 *                      no usable Location) makes robots.txt "unavailable" (2.3.1.2)
 *  4xx except 429   -> allow_all: "unavailable", no rules (2.3.1.3)
 *  429, 5xx         -> disallow_all until a fetch succeeds: "unreachable" (2.3.1.4)
 *  network error    -> disallow_all (2.3.1.4); when it cannot heal within the crawl (no such
 *                      name, an address the SSRF guard refuses, every address refusing the
 *                      connection on two tries in a row) the record says how the host's
 *                      URLs end (`ends`), and they end at once instead of waiting
 *  anything else    -> disallow_all (1xx or out-of-range status: treated as unreachable)
 */
import { ROBOTS_MAX_BYTES, type RobotsRecord } from './robots-rules.js';
import { REFUSED_RECHECK_MS } from '../politeness/index.js';

export type RobotsFetchResult = { status: number; body: Uint8Array | string } | { error: string; ends?: RobotsRecord['ends']; connectionRefused?: string };

export interface RobotsTtlOptions {
  /** Longest a robots record is used (RFC 9309 section 2.4: SHOULD NOT exceed 24 hours). */
  maxTtlMs: number;
  /** A disallow_all caused by an error (5xx, 429, network) is re-fetched this soon. */
  errorRetryMs: number;
}

export const DEFAULT_ROBOTS_TTL: Readonly<RobotsTtlOptions> = Object.freeze({
  maxTtlMs: 24 * 60 * 60 * 1000,
  errorRetryMs: 60_000,
});

const UNREACHABLE = 'disallow all until a fetch succeeds';
const LF = 0x0a;
const CR = 0x0d;

export function recordFromResponse(res: RobotsFetchResult, now: number): RobotsRecord {
  if ('error' in res) {
    if (res.ends) return { kind: 'disallow_all', fetchedAt: now, status: null, reason: res.ends.reason, ends: res.ends };
    const refused = res.connectionRefused ? { connectionRefused: res.connectionRefused } : {};
    return { kind: 'disallow_all', fetchedAt: now, status: null, reason: `network error: ${res.error}`, ...refused };
  }
  const { status } = res;
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    return { kind: 'disallow_all', fetchedAt: now, status, reason: `http ${status}: unexpected status, ${UNREACHABLE}` };
  }
  if (status >= 200 && status < 300) {
    const { text, truncated } = decodeRobotsBody(res.body);
    return {
      kind: 'rules',
      body: text,
      fetchedAt: now,
      status,
      reason: truncated ? `http ${status}: rules (cut to the first ${ROBOTS_MAX_BYTES} bytes)` : `http ${status}: rules`,
    };
  }
  if (status >= 300 && status < 400) {
    return { kind: 'allow_all', fetchedAt: now, status, reason: `http ${status}: redirect not followed to a robots.txt, no rules` };
  }
  if (status === 429 || status >= 500) {
    return { kind: 'disallow_all', fetchedAt: now, status, reason: `http ${status}: ${UNREACHABLE}` };
  }
  if (status >= 400) {
    return { kind: 'allow_all', fetchedAt: now, status, reason: `http ${status}: no rules` };
  }
  // 1xx as a final status
  return { kind: 'disallow_all', fetchedAt: now, status, reason: `http ${status}: unexpected status, ${UNREACHABLE}` };
}

/**
 * The first ROBOTS_MAX_BYTES bytes as text. When the body is longer, the cut is moved back
 * to the end of the last whole line, so a half line ('Allow: /pub' of 'Allow: /public/')
 * is not read as a broader rule. A leading UTF-8 byte order mark, or the start of one
 * (EF, EF BB), is skipped as Google's parser does; invalid UTF-8 becomes U+FFFD.
 */
export function decodeRobotsBody(body: Uint8Array | string): { text: string; truncated: boolean } {
  let bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  let truncated = false;
  if (bytes.length > ROBOTS_MAX_BYTES) {
    truncated = true;
    let end = ROBOTS_MAX_BYTES;
    while (end > 0 && bytes[end - 1] !== LF && bytes[end - 1] !== CR) end--;
    bytes = bytes.subarray(0, end > 0 ? end : ROBOTS_MAX_BYTES); // a single giant line: keep the byte cut
  }
  const bom = [0xef, 0xbb, 0xbf];
  let skip = 0;
  while (skip < bom.length && skip < bytes.length && bytes[skip] === bom[skip]) skip++;
  const text = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes.subarray(skip));
  return { text, truncated };
}

/**
 * How long `record` may be used after record.fetchedAt: errorRetryMs for an error-caused
 * disallow_all (every disallow_all comes from an error), maxTtlMs otherwise; never more
 * than maxTtlMs, never negative.
 */
export function robotsTtlMs(record: RobotsRecord, opts: Partial<RobotsTtlOptions> = {}): number {
  const maxTtlMs = Math.max(0, opts.maxTtlMs ?? DEFAULT_ROBOTS_TTL.maxTtlMs);
  const errorRetryMs = Math.max(0, opts.errorRetryMs ?? DEFAULT_ROBOTS_TTL.errorRetryMs);
  if (record.kind !== 'disallow_all') return maxTtlMs;
  // every address refused: asked once more soon, and ended if refused again (failure-policy.ts)
  if (record.connectionRefused && !record.ends) return Math.min(REFUSED_RECHECK_MS, maxTtlMs);
  // retried with backoff: errorRetryMs, then twice that, ... at most 6 h apart
  const backoff = Math.min(errorRetryMs * 2 ** Math.max(0, (record.failures ?? 1) - 1), MAX_ERROR_RETRY_MS);
  return Math.min(Math.max(errorRetryMs, backoff), maxTtlMs);
}

/**
 * A host's robots.txt is given up on only once this many tries in a row have failed, however
 * long ago the first was. Time alone can mislead: while the crawler's own servers elect a
 * leader no try is made, and the first try after that can fall past the give-up time; a site
 * answering 503 twice while it restarts is not a site that is down.
 */
export const ROBOTS_GIVE_UP_MIN_FAILURES = 3;

/** When a failing robots.txt (a disallow_all record) may be given up on: null while too few tries have failed. */
export function robotsGiveUpAt(record: RobotsRecord, giveUpMs: number): number | null {
  if ((record.failures ?? 1) < ROBOTS_GIVE_UP_MIN_FAILURES) return null;
  return (record.failingSince ?? record.fetchedAt) + giveUpMs;
}

/** The longest wait between two fetches of a robots.txt that keeps failing. */
export const MAX_ERROR_RETRY_MS = 6 * 60 * 60 * 1000;

/**
 * A failed fetch continues the run of failures of the record before it, so the retry
 * backs off and the time robots.txt has been unavailable is known.
 */
export function withFailureHistory(record: RobotsRecord, previous: RobotsRecord | null): RobotsRecord {
  if (record.kind !== 'disallow_all') return record;
  const continues = previous?.kind === 'disallow_all';
  const history = {
    ...record,
    failures: continues ? (previous.failures ?? 1) + 1 : 1,
    failingSince: continues ? (previous.failingSince ?? previous.fetchedAt) : record.fetchedAt,
  };
  // every address refused on this try and on the one before, a few seconds apart: nothing
  // listens there, and nothing will for this crawl (failure-policy.ts, REFUSED_RECHECK_MS)
  if (record.connectionRefused && !record.ends && continues && previous.connectionRefused) {
    const apartS = Math.round((record.fetchedAt - previous.fetchedAt) / 1000);
    // a host ended before keeps its first words: the reason does not grow with each retry
    const reason = previous.ends?.reason ?? `${record.connectionRefused} (refused twice, ${apartS} s apart)`;
    const ends = { outcome: 'network_error' as const, reason };
    return { ...history, reason, ends };
  }
  return history;
}
