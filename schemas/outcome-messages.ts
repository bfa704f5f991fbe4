import { z } from 'zod';
import { decodeInternal, decodeMessage, encodeMessage } from './codec.js';
import { RevisitState, revisitSchedule } from './url-messages.js';

/** raw bytes (msgpack bin) */
const bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'expected bytes');

/**
 * Outcomes of a URL other than a stored page, all terminal but `retry`. Each becomes one `fetch_log` row.
 * Expected failures are data: a 404, a DNS failure, a robots block all end up here.
 */
export const OUTCOMES = [
  'fetched',
  'redirect',
  'http_error',
  'network_error',
  'robots_disallowed',
  'filtered',
  'unsupported_content',
  /** a conditional GET answered 304: the page has not changed since the previous crawl */
  'not_modified',
  /** the SSRF guard refused the address (loopback, private, link-local, ...) */
  'refused',
  /** not terminal: a retryable failure (5xx, 429, timeout); the URL is queued again */
  'retry',
] as const;
export type OutcomeKind = (typeof OUTCOMES)[number];

/** crawl.outcomes.<p> */
export const UrlOutcome = z.object({
  v: z.literal(1),
  /** deterministic: the same event redelivered gets the same id, so the view shows it once */
  event_id: z.string(),
  fetch_id: z.string().nullable(),
  url: z.string(),
  host: z.string(),
  outcome: z.enum(OUTCOMES),
  reason: z.string(),
  fetch_status: z.number().int().nullable(),
  fetch_time: z.number(),
  duration_ms: z.number().int().nullable(),
  depth: z.number().int().nullable(),
  /** a redirect's target (cc-index's fetch_redirect) */
  fetch_redirect: z.string().nullable().optional(),
  /** the crawl job of the URL (its rows' crawl id), and its revisit facts when it was one */
  job: z.string().optional(),
  revisit: RevisitState.optional(),
  hint_interval_ms: z.number().int().positive().optional(),
  ...revisitSchedule,
});
export type UrlOutcome = z.infer<typeof UrlOutcome>;

export const encodeOutcome = (m: UrlOutcome) => encodeMessage(m);
export const decodeOutcome = (b: Uint8Array) => decodeInternal(UrlOutcome, b, 'url outcome');

/** crawl.dlq.<stage>: a message a stage could not process at all. */
export const DeadLetter = z.object({
  v: z.literal(1),
  stage: z.string(),
  subject: z.string(),
  stream_seq: z.number().int(),
  delivery_count: z.number().int(),
  reason: z.string(),
  failed_at: z.number(),
  data: bytes,
});
export type DeadLetter = z.infer<typeof DeadLetter>;
export const encodeDeadLetter = (m: DeadLetter) => encodeMessage(m);
export const decodeDeadLetter = (b: Uint8Array) => decodeMessage(DeadLetter, b, 'dead letter');
