import { z } from 'zod';
import { decodeInternal, encodeMessage } from './codec.js';
import { FetchedPage } from './page-messages.js';

/**
 * What the archive needs about one HTTP exchange besides the response itself: the request as
 * sent, where it went, and what the crawler made of it. Travels inside every message the
 * archive stage reads (HTML pages on `crawl.fetched.<p>`, rendered ones on
 * `crawl.fetched.rendered.<p>`, everything else on `crawl.exchanges.<p>`); extract decodes
 * pages with `FetchedPage`, which drops this field.
 */
export const ExchangeInfo = z.object({
  /**
   * page: an HTML page (also on its way to extract); response: any other answer (a rendered
   * page's subresources too); robots: a robots.txt fetch; failure: no answer; rendered: the
   * DOM the render stage took of a page (no request of its own: a conversion of the page's response)
   */
  kind: z.enum(['page', 'response', 'robots', 'failure', 'rendered']),
  /** one id per exchange: `fetch_id` plus the attempt (retries are separate exchanges), or the robots fetch's id */
  capture_id: z.string().min(1),
  method: z.string(),
  /** header name/value pairs in the order the client sends them (Host first) */
  request_headers: z.array(z.tuple([z.string(), z.string()])),
  /** the response's reason phrase (the standard one for its status: undici does not report the server's) */
  status_text: z.string(),
  remote_ip: z.string().nullable(),
  /** network failure, in words (kind failure) */
  failure: z.string().nullable(),
  /** a 3xx's resolved Location */
  redirect: z.string().nullable(),
  /** robots.txt verdict (kind robots), e.g. "rules: 3 groups"; for a page fetch: the grant's */
  robots: z.string().nullable(),
  /** a 304: when the copy it confirms was fetched (epoch ms) */
  refers_to_date: z.number().nullable(),
  attempt: z.number().int().nonnegative(),
  /** kind rendered: the payload digest of the response the DOM was rendered from (its WARC-Refers-To) */
  refers_to_digest: z.string().nullable().optional(),
  /** kind rendered: what the page asked for and what became of each request, one line each */
  render_log: z.array(z.string()).optional(),
  /**
   * The response's body was not downloaded (stopped at the headers: its type is not stored):
   * why, with its declared length. Its WARC response record has the headers only, marked
   * `WARC-Truncated: unspecified`.
   */
  body_not_read: z.string().optional(),
  /** the protocols the exchange went over, as WARC-Protocol names them: ['h2', 'tls/1.3'], ['http/1.1']; absent when not known */
  protocols: z.array(z.string()).optional(),
  /** over TLS: the cipher suite (IANA name, as WARC-Cipher-Suite writes it) */
  cipher_suite: z.string().optional(),
  /** a host exempted from certificate checks (`--insecure-host`): that it was not checked, and what checking would have found */
  tls_unverified: z.string().optional(),
});
export type ExchangeInfo = z.infer<typeof ExchangeInfo>;

/**
 * crawl.fetched.<p> and crawl.exchanges.<p> as the archive stage reads them: the page fields
 * (for a failure: status 0, empty body) plus the exchange. `exchange` is absent on pages
 * published before the archive existed; they get a response record without a request.
 */
export const ArchivedExchange = FetchedPage.extend({ exchange: ExchangeInfo.optional() });
export type ArchivedExchange = z.infer<typeof ArchivedExchange>;

export const encodeExchange = (m: ArchivedExchange) => encodeMessage(m);
export const decodeExchange = (b: Uint8Array) => decodeInternal(ArchivedExchange, b, 'archived exchange');
