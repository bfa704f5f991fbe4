import type { AdmittedUrl } from '../../schemas/index.js';
import { PAUSES_BEFORE_GIVING_UP, type HostSlot } from '../shared/politeness/index.js';

/** How a queued URL of a failing host ends without a request. */
export interface FailingHostEnd {
  outcome: 'network_error' | 'http_error';
  reason: string;
  /** the status of the URL's own last try (a 5xx or 429), when it had one */
  status: number | null;
}

/**
 * Whether the URL at the head of a paused host's queue ends now instead of waiting for the
 * pause (host-pacing.ts says when a host is paused and when it is given up):
 *
 * | host                         | URL that already failed (a retry) | URL not tried yet       |
 * |------------------------------|-----------------------------------|-------------------------|
 * | paused                       | ends: its last reason, not retried | waits: the probe        |
 * | paused and given up          | ends: its last reason             | ends: the host's reason |
 * | not paused (given up or not) | tried                             | tried (a probe, if given up) |
 *
 * A URL whose last try the server only asked to come back later for (429, or 503 with
 * Retry-After) waits like one not tried yet: nothing is wrong with it, and a rate-limited
 * host's pauses are bounded all the same (two, then it is given up).
 *
 * A retry that waited out a pause would be the host's probe, and failing again it would cost
 * the host a pause of its own: a host's failing URLs would cost a pause each, a bounded crawl
 * hours. A host that still fails after its pauses is not waited on at all; the first URL
 * queued after its last pause ends is its probe, and an answer ends the give-up.
 * Pure: the gate decides, with the slot every gate and fetcher shares.
 */
export function failingHostEnd(slot: HostSlot, m: AdmittedUrl, now: number): FailingHostEnd | null {
  if (slot.paused_until <= now) return null;
  const own = (m.attempt ?? 0) > 0 ? m.last_failure : undefined;
  if (slot.given_up_at > 0) {
    const spell = `${slot.failures} failures in a row over ${Math.round((slot.given_up_at - slot.failing_since) / 1000)} s, ${PAUSES_BEFORE_GIVING_UP} pauses`;
    if (own) return { outcome: own.outcome, reason: `${own.reason}; host given up: ${spell}`, status: own.status };
    const last = slot.last_failure;
    return { outcome: last?.outcome ?? 'network_error', reason: `host given up, not tried: ${spell}; its last failure: ${last?.reason ?? slot.last_decision}`, status: null };
  }
  if ((m.attempt ?? 0) === 0 || own?.throttled) return null;
  const paused = `not retried: host paused after ${slot.failures} failures in a row, until ${new Date(slot.paused_until).toISOString()}`;
  // a retry queued by an older fetcher carries no reason of its own
  if (!own) return { outcome: 'network_error', reason: paused, status: null };
  return { outcome: own.outcome, reason: `${own.reason}; ${paused}`, status: own.status };
}
