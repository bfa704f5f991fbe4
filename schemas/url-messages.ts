import { z } from 'zod';
import { decodeInternal, encodeMessage, SchemaError } from './codec.js';

/**
 * Messages that carry URLs before they are fetched:
 * seeds and discovered links (into normalize), candidates (into seen-filter),
 * admitted URLs (into politeness-gate) and fetch grants (into fetch).
 */

/**
 * What the previous fetch of a URL found, carried with it when it is revisited (a job's
 * adaptive schedule): the interval that led to this fetch and what to compare the new copy
 * with. Nothing per URL is kept anywhere else: the revisit schedule is these messages.
 */
export const RevisitState = z.object({
  interval_ms: z.number().int().positive(),
  /** content digest and SimHash (16 hex) of the previous copy; null when it stored no page */
  digest: z.string().nullable(),
  simhash: z.string().nullable(),
  /** when the previous fetch happened, and when this one was due (epoch ms) */
  fetched_at: z.number(),
  due_at: z.number(),
  /** whether the page had changed at the previous fetch (a changed page's revisit goes first) */
  changed: z.boolean().optional(),
  /** the previous copy's validators, for a conditional GET */
  etag: z.string().nullable().optional(),
  last_modified: z.string().nullable().optional(),
  /** the change-rate estimate's evidence, decayed so recent checks weigh most: checks made, changes seen, time they covered (ms) */
  checks: z.number().nonnegative().optional(),
  changes: z.number().nonnegative().optional(),
  observed_ms: z.number().nonnegative().optional(),
});
export type RevisitState = z.infer<typeof RevisitState>;

/**
 * What the revisit schedule decided at a URL's outcome, for its fetch_log row: when the URL
 * is due again (epoch ms; absent when it is not scheduled) and the change estimate (changes
 * per day, null while there is no evidence: stages/shared/revisits/revisit-policy.ts).
 */
export const revisitSchedule = {
  next_due_at: z.number().optional(),
  change_rate: z.number().nullable().optional(),
};
export type RevisitSchedule = { next_due_at: number; change_rate: number | null };

/**
 * Fields a URL carries from discovery to its outcome when it belongs to a crawl job (absent:
 * the deployment's own crawl, whose id is in the settings).
 */
const jobFields = {
  /** the job's id, which is also the crawl id of its rows */
  job: z.string().optional(),
  /** a revisit: what the last fetch found (past the seen filter, with conditional GET) */
  revisit: RevisitState.optional(),
  /** a freshness hint for the first revisit interval (a sitemap's changefreq or lastmod), ms */
  hint_interval_ms: z.number().int().positive().optional(),
  /** `sitemap`: fetch this URL as a sitemap (XML, text or gzip) and follow what it lists */
  fetch_as: z.literal('sitemap').optional(),
  /** sitemap indexes followed to reach this sitemap (bounded) */
  sitemap_level: z.number().int().nonnegative().optional(),
};

/** How a URL was found. */
export const VIA = ['seed', 'link', 'redirect', 'sitemap', 'revisit'] as const;

/**
 * A URL's own priority among its host's URLs, set by a stage module that queued it (absent:
 * normal): high ones wait in the host's high lane, low ones in its low lane (host-lanes.ts).
 */
export const UrlPriority = z.enum(['high', 'low']);
export type UrlPriority = z.infer<typeof UrlPriority>;

export const DiscoveredLink = z.object({
  url: z.string(),
  anchor: z.string().optional(),
  rel: z.string().optional(),
  priority: UrlPriority.optional(),
  revisit: RevisitState.optional(),
  hint_interval_ms: z.number().int().positive().optional(),
  fetch_as: z.literal('sitemap').optional(),
});
export type DiscoveredLink = z.infer<typeof DiscoveredLink>;

/** crawl.links.<p>: links found on one page (or a redirect target), resolved to absolute URLs. */
export const DiscoveredLinks = z.object({
  v: z.literal(1),
  /** the page they were found on; null for a crawl job's seeds and revisits */
  source_url: z.string().nullable(),
  /** depth of the URLs in `links` (the source page's depth + 1) */
  depth: z.number().int().nonnegative(),
  via: z.enum(VIA),
  links: z.array(DiscoveredLink),
  job: z.string().optional(),
  /** links of a sitemap: the index levels above it */
  sitemap_level: z.number().int().nonnegative().optional(),
  /** via redirect: the URLs that redirected, oldest first (the last one is source_url) */
  redirect_chain: z.array(z.string()).optional(),
  /** via redirect: the chain started at a seed, so its target takes the seed's scope along */
  from_seed: z.literal(true).optional(),
});
export type DiscoveredLinks = z.infer<typeof DiscoveredLinks>;

/** crawl.seeds accepts JSON `{url, depth?}` or a plain-text URL. */
export const SeedMessage = z.object({
  url: z.string().min(1),
  depth: z.number().int().nonnegative().optional(),
});
export type SeedMessage = z.infer<typeof SeedMessage>;

/** crawl.normalized.<p>: a canonical URL in scope, not yet checked against the seen set. */
export const CandidateUrl = z.object({
  v: z.literal(1),
  url: z.string(),
  host: z.string(),
  domain: z.string(),
  depth: z.number().int().nonnegative(),
  source_url: z.string().nullable(),
  via: z.enum(VIA),
  /** the URLs that redirected to this one, oldest first */
  redirect_chain: z.array(z.string()).optional(),
  /** a seed's redirect target (the seed's scope came along): its own redirect does the same */
  from_seed: z.literal(true).optional(),
  /** its priority as the link that found it had one (a stage module's) */
  priority: UrlPriority.optional(),
  ...jobFields,
});
export type CandidateUrl = z.infer<typeof CandidateUrl>;

/** crawl.frontier.<p>: a URL admitted to the crawl, with the id its fetch will carry. */
/**
 * How a URL's last try failed, as its terminal row would record it: a URL waiting for a retry
 * carries it, so that when the retry is not made (its host is paused, or given up) the URL ends
 * with its own reason.
 */
export const LastFailure = z.object({
  outcome: z.enum(['http_error', 'network_error']),
  reason: z.string(),
  /** the response's status (a 5xx or 429); null for a network failure */
  status: z.number().int().nullable(),
  /**
   * the server asked to be left alone for a while (429, or 503 with Retry-After): the URL is
   * fine, its host busy, so it waits for its host's pause rather than ending at one
   */
  throttled: z.boolean().optional(),
});
export type LastFailure = z.infer<typeof LastFailure>;

export const AdmittedUrl = CandidateUrl.extend({
  fetch_id: z.string(),
  admitted_at: z.number(),
  /** retries so far after a retryable failure (5xx, 429, timeout); absent = 0 */
  attempt: z.number().int().nonnegative().optional(),
  /**
   * set by the gate's intake on a URL it queued while its URL pattern was past its budget or
   * had near-duplicate pages: before fetching it, the gate looks at the pattern's content
   * novelty again (stages/shared/traps/trap-tally.ts)
   */
  novelty_check: z.literal(true).optional(),
  /** with attempt > 0: how the last try failed */
  last_failure: LastFailure.optional(),
  /**
   * admitted during the first pass (`--target-unique-domains`) to a domain already reached: it
   * waits in its host's held lane until the pass ends, and only then counts against --max-pages
   */
  held: z.literal(true).optional(),
  /**
   * the importance estimate when it was admitted: links the admitting seen-filter had seen to
   * its registrable domain from other domains (stages/shared/importance/domain-inlinks.ts);
   * absent on a URL admitted before the estimate existed, or past the seen set (a revisit)
   */
  importance: z.number().int().nonnegative().optional(),
});
export type AdmittedUrl = z.infer<typeof AdmittedUrl>;

/** crawl.ready.<p>: permission to fetch now, holding the host's lease. */
export const FetchGrant = AdmittedUrl.extend({
  lease_id: z.string(),
  granted_at: z.number(),
  /** the delay the gate computed for this host (robots crawl-delay, minimum) */
  delay_ms: z.number().int().nonnegative(),
  /** the address whose per-IP place the grant holds (null: no per-IP cap) */
  ip: z.string().nullable().optional(),
});
export type FetchGrant = z.infer<typeof FetchGrant>;

export const encodeDiscoveredLinks = (m: DiscoveredLinks) => encodeMessage(m);
export const encodeCandidate = (m: CandidateUrl) => encodeMessage(m);
export const encodeAdmitted = (m: AdmittedUrl) => encodeMessage(m);
export const encodeGrant = (m: FetchGrant) => encodeMessage(m);

export const decodeDiscoveredLinks = (b: Uint8Array) => decodeInternal(DiscoveredLinks, b, 'discovered links');
export const decodeCandidate = (b: Uint8Array) => decodeInternal(CandidateUrl, b, 'candidate url');
export const decodeAdmitted = (b: Uint8Array) => decodeInternal(AdmittedUrl, b, 'admitted url');
export const decodeGrant = (b: Uint8Array) => decodeInternal(FetchGrant, b, 'fetch grant');

/**
 * A seed is either a JSON object `{"url": ..., "depth"?: ...}` or a plain-text URL,
 * so any NATS client (even `nats pub crawl.seeds https://...`) can start a crawl.
 */
export function decodeSeed(bytes: Uint8Array): SeedMessage {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes).trim();
  if (text === '') throw new SchemaError('decoding seed: empty message');
  if (text.startsWith('{')) {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new SchemaError(`decoding seed: invalid JSON (${(err as Error).message})`);
    }
    const parsed = SeedMessage.safeParse(raw);
    if (!parsed.success) throw new SchemaError(`decoding seed: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return parsed.data;
  }
  if (/\s/.test(text)) throw new SchemaError('decoding seed: one URL per message (found whitespace)');
  return { url: text };
}

/**
 * The seeds of one message on crawl.seeds: a JSON seed, or plain text of one URL a line (blank
 * lines and `#` comments skipped). Normalize puts all of one message's seeds in the scope before
 * it passes any of them on, so a crawl's seeds sent as one message never race their own links.
 */
export function decodeSeeds(bytes: Uint8Array): SeedMessage[] {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes).trim();
  if (text.startsWith('{') || !/[\r\n]/.test(text)) return [decodeSeed(bytes)];
  const seeds: SeedMessage[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (/\s/.test(line)) throw new SchemaError(`decoding seeds: one URL a line (found whitespace in ${JSON.stringify(line.slice(0, 200))})`);
    seeds.push({ url: line });
  }
  if (seeds.length === 0) throw new SchemaError('decoding seeds: no URL in the message');
  return seeds;
}

/** Seeds as one message, one URL a line (see decodeSeeds). */
export function encodeSeedLines(urls: readonly string[]): Uint8Array {
  return new TextEncoder().encode(urls.join('\n') + '\n');
}

export function encodeSeed(seed: SeedMessage): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(seed));
}
