import { z } from 'zod';
import { checkInternal, decodeInternal, encodeMessage, SchemaError } from './codec.js';
import { MsgpackFormatError, readMapExcept, withFieldsAdded, type MapLayout } from './msgpack-map.js';
import { spansOf, textFromSpans } from './text-spans.js';
import { RevisitState, revisitSchedule } from './url-messages.js';

/** raw bytes (msgpack bin) */
const bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'expected bytes');

/**
 * A body too large for its message, stored beside it on the bodies stream (`CRAWL_BODIES`):
 * its chunks' sequences in order, its length and SHA-256 (hex). See ports/bodies.ts.
 */
export const BodyRef = z.object({
  seqs: z.array(z.number().int().positive()).min(1),
  length: z.number().int().positive(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in hex'),
});
export type BodyRef = z.infer<typeof BodyRef>;

/** crawl.fetched.<p>: a successful HTML fetch, with its body, on its way to extract. */
export const FetchedPage = z.object({
  v: z.literal(1),
  fetch_id: z.string(),
  url: z.string(),
  host: z.string(),
  domain: z.string(),
  depth: z.number().int().nonnegative(),
  fetch_time: z.number(),
  fetch_status: z.number().int(),
  duration_ms: z.number().int().nonnegative(),
  content_type: z.string(),
  charset: z.string().nullable(),
  headers: z.record(z.string(), z.string()),
  /** the fields sent more than once, each line as sent (HttpResponse.headerLines); `headers` joins them */
  header_lines: z.record(z.string(), z.array(z.string())).optional(),
  /** empty when the body is stored beside the message (`body_ref`) */
  body: bytes,
  /**
   * Set when the body did not fit the message (larger than the server's max_payload allows):
   * readers get it from the bodies stream (stages/shared/messages/page-body.ts). Absent: `body` is the body.
   */
  body_ref: BodyRef.optional(),
  /** the body was cut at the size cap (--max-page-bytes) */
  truncated: z.boolean(),
  /** the URLs that redirected to this page, oldest first */
  redirect_chain: z.array(z.string()).optional(),
  /**
   * Set by the render stage: true when `body` is the DOM Chromium rendered (UTF-8, `headers`
   * still the fetched response's), false when rendering failed and `body` is the page as
   * fetched. Absent: the page as fetch sent it, not through the render stage.
   */
  rendered: z.boolean().optional(),
  /** what rendering did, or why it failed (fetch_log's reason shows it) */
  render_note: z.string().optional(),
  /** its crawl job, and the revisit facts it carries (see url-messages.ts) */
  job: z.string().optional(),
  revisit: RevisitState.optional(),
  hint_interval_ms: z.number().int().positive().optional(),
  fetch_as: z.literal('sitemap').optional(),
  sitemap_level: z.number().int().nonnegative().optional(),
  /** the response's Last-Modified (epoch ms), a freshness hint for the first revisit */
  last_modified: z.number().optional(),
  /** a job page's validators as sent, for the conditional GET of its revisit */
  validators: z.object({ etag: z.string().nullable(), last_modified: z.string().nullable() }).optional(),
  /** the importance estimate its URL was admitted with (url-messages.ts), for the pages table */
  importance: z.number().int().nonnegative().optional(),
});
export type FetchedPage = z.infer<typeof FetchedPage>;

/**
 * crawl.render.<p>: a fetched page extract hands to the render stage (a `--render` pattern
 * matched its URL, or it looks like an application shell), with the reason.
 */
export const RenderRequest = FetchedPage.extend({
  render_reason: z.string(),
});
export type RenderRequest = z.infer<typeof RenderRequest>;

/** Where a link was found. */
export const LinkSource = z.enum(['a', 'area', 'link-alternate', 'link-next', 'link-prev', 'iframe', 'meta-refresh']);
/** `source` is optional: messages written before links had one were all `<a>`/`<area>` links (persisted as 'a'). */
export const PageLink = z.object({ url: z.string(), anchor: z.string(), rel: z.string(), source: LinkSource.optional() });
export type PageLink = z.infer<typeof PageLink>;

/** crawl.extracted.<p>: what extract made of a page (no raw body). */
export const ExtractedPage = FetchedPage.omit({ body: true, body_ref: true, headers: true }).extend({
  content_length: z.number().int().nonnegative(),
  content_digest: z.string(),
  title: z.string(),
  text: z.string(),
  description: z.string().nullable(),
  language: z.string().nullable(),
  canonical_url: z.string().nullable(),
  noindex: z.boolean(),
  nofollow: z.boolean(),
  links: z.array(PageLink),
  // Added with main-text extraction, optional so that older messages on a replayed stream
  // still decode (persist writes '' / NULL for them).
  /** all visible text (`text` is the main text without boilerplate) */
  text_full: z.string().optional(),
  headings: z.array(z.object({ level: z.number().int().min(1).max(6), text: z.string() })).optional(),
  /** og:* / twitter:* … meta values by key */
  opengraph: z.record(z.string(), z.string()).optional(),
  /** parsed JSON-LD things */
  json_ld: z.array(z.unknown()).optional(),
  hreflang: z.array(z.object({ lang: z.string(), url: z.string() })).optional(),
  // Added with article fields, optional for the same reason.
  /** `main`, or `fallback_full` when no main text was found and `text` is the full text */
  text_source: z.enum(['main', 'fallback_full']).optional(),
  author: z.string().nullable().optional(),
  /** epoch ms (UTC) */
  published_at: z.number().nullable().optional(),
  site_name: z.string().nullable().optional(),
  // Added when extract took over the fingerprint, optional for the same reason (the simhash
  // stage makes it for a message without it).
  /** SimHash of `text` (16 hex digits) and the number of words it was made of */
  simhash: z.string().optional(),
  text_words: z.number().int().nonnegative().optional(),
  // Added with X-Robots-Tag, optional for the same reason.
  /** the robots rules addressed to the crawler, by source: `x-robots-tag: noindex; meta robots: nofollow` (null: none) */
  robots_directives: z.string().nullable().optional(),
  // Added with markdown, optional for the same reason.
  /** `text` as markdown (stages/extract/markdown-render.ts) */
  text_markdown: z.string().optional(),
});
export type ExtractedPage = z.infer<typeof ExtractedPage>;

/** crawl.pages.<p>: an extracted page with its near-duplicate verdict, ready to persist. */
export const FinalPage = ExtractedPage.extend({
  simhash: z.string(),
  near_duplicate_of: z.string().nullable(),
  /** a crawl job's page: what its revisit found and when it is due again (fetch_log's reason) */
  revisit_note: z.string().optional(),
  ...revisitSchedule,
});
export type FinalPage = z.infer<typeof FinalPage>;

/**
 * On the wire, `text` may be '' with `text_spans` naming the spans of `text_full` it is made
 * of (schemas/text-spans.ts); decoding puts the text back, so stages never see the difference.
 */
const textSpans = { text_spans: z.array(z.number().int().nonnegative()).optional() };
const ExtractedWire = ExtractedPage.extend(textSpans);
const FinalWire = FinalPage.extend(textSpans);

function packText<T extends ExtractedPage>(m: T): T | (T & { text_spans: number[] }) {
  const spans = spansOf(m.text, m.text_full ?? '');
  return spans ? { ...m, text: '', text_spans: spans } : m;
}

function unpackText<T extends ExtractedPage>(wire: T & { text_spans?: number[] | undefined }, what: string): T {
  const { text_spans, ...m } = wire;
  if (text_spans === undefined) return m as T;
  try {
    return { ...m, text: textFromSpans(m.text_full ?? '', text_spans) } as T;
  } catch (err) {
    throw new SchemaError(`decoding ${what}: ${(err as Error).message}`);
  }
}

export const encodeFetched = (m: FetchedPage) => encodeMessage(m);
export const encodeRenderRequest = (m: RenderRequest) => encodeMessage(m);
export const decodeRenderRequest = (b: Uint8Array) => decodeInternal(RenderRequest, b, 'render request');
export const encodeExtracted = (m: ExtractedPage) => encodeMessage(packText(m));
export const encodeFinal = (m: FinalPage) => encodeMessage(packText(m));
export const decodeFetched = (b: Uint8Array) => decodeInternal(FetchedPage, b, 'fetched page');
export const decodeExtracted = (b: Uint8Array): ExtractedPage => unpackText(decodeInternal(ExtractedWire, b, 'extracted page'), 'extracted page');
export const decodeFinal = (b: Uint8Array): FinalPage => unpackText(decodeInternal(FinalWire, b, 'final page'), 'final page');

/**
 * An extracted page as the simhash stage reads it: its small fields decoded (`head`), the
 * rest (text, links, headings and other structured data) left as bytes, since simhash only
 * adds its verdict and hands the page on: `encodeFinalOnWire` appends the verdict's fields
 * to the message as it came.
 */
export const ExtractedHead = ExtractedPage.omit({
  title: true,
  text: true,
  description: true,
  links: true,
  text_full: true,
  text_markdown: true,
  headings: true,
  opengraph: true,
  json_ld: true,
  hreflang: true,
}).extend({ simhash: z.string(), text_words: z.number().int().nonnegative() });
export type ExtractedHead = z.infer<typeof ExtractedHead>;

/** The wire form's keys the head leaves out (text_spans among them). */
const PASSED_THROUGH: ReadonlySet<string> = new Set(Object.keys(ExtractedWire.shape).filter((k) => !(k in ExtractedHead.shape)));

export interface ExtractedOnWire {
  head: ExtractedHead;
  bytes: Uint8Array;
  layout: MapLayout;
}

export const isOnWire = (m: object): m is ExtractedOnWire => 'layout' in m && 'head' in m;

/**
 * Null for a message without the fingerprint extract makes (one written before it did, on a
 * replayed stream): the simhash stage decodes that one whole and makes it from the text.
 */
export function decodeExtractedHead(b: Uint8Array): ExtractedOnWire | null {
  let read: ReturnType<typeof readMapExcept>;
  try {
    read = readMapExcept(b, PASSED_THROUGH);
  } catch (err) {
    if (err instanceof MsgpackFormatError) throw new SchemaError(`decoding extracted page: not valid msgpack (${err.message})`, { cause: err });
    throw err;
  }
  const { fields, layout } = read;
  if (fields.simhash === undefined || fields.text_words === undefined || layout.keys.has('near_duplicate_of') || layout.keys.has('revisit_note') || layout.keys.has('next_due_at')) return null;
  return { head: checkInternal(ExtractedHead, fields, 'extracted page'), bytes: b, layout };
}

/** The final page: the extracted one as it came, with the simhash stage's verdict added. */
export function encodeFinalOnWire(m: ExtractedOnWire, verdict: { near_duplicate_of: string | null; revisit_note?: string; next_due_at?: number; change_rate?: number | null }): Uint8Array {
  return withFieldsAdded(m.bytes, m.layout, verdict);
}
