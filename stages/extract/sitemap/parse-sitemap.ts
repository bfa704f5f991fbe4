// One sitemap file, fetched, into entries: see parseSitemap.

import { EntryCollector, StopParsing } from './collector.js';
import { isGzip, readSitemapBytes, type ReadResult } from './read-bytes.js';
import { textSitemapSink, type TextSink } from './text-sitemap.js';
import { DEFAULT_SITEMAP_LIMITS, type SitemapInput, type SitemapKind, type SitemapParse } from './types.js';
import { sitemapScope } from './url-scope.js';
import { xmlSitemapSink, type XmlSink } from './xml-sitemap.js';

/**
 * Parses a fetched sitemap: an XML `<urlset>` or `<sitemapindex>`, or a text sitemap (one URL a
 * line), plain or gzip, UTF-8. Pure: no I/O, no clock but `input.now`; never throws for bad
 * input. Whatever was read before a fault or a limit is kept:
 * - past `maxUrls` URLs or `maxBytes` bytes (inflated) it stops and says so in `truncated`;
 * - malformed XML, an unknown root element, binary data or corrupt gzip make it `invalid`,
 *   with `error`;
 * - each URL not absolute http(s), too long, or outside the sitemap's scope goes to `dropped`
 *   with its reason (DROP_REASONS); see url-scope.ts for the scope.
 */
export function parseSitemap(input: SitemapInput): SitemapParse {
  const limits = { ...DEFAULT_SITEMAP_LIMITS, ...input.limits };
  const scope = sitemapScope(input.url);
  if (!scope) return { kind: 'invalid', entries: [], dropped: [], error: `the sitemap's own URL is not an absolute http(s) URL: ${input.url}` };
  const gzip = isGzip(input.body);
  const described = `${gzip ? 'gzip, ' : ''}content type ${input.contentType ?? 'none'}`;
  const collector = new EntryCollector(scope, limits, input.now);
  // UTF-8 as the protocol requires: the BOM is dropped, bad bytes become U+FFFD
  const decoder = new TextDecoder('utf-8');
  let sink: TextSink | null = null;
  let xml: XmlSink | null = null;
  const feed = (text: string) => {
    if (sink) return sink.write(text);
    // the first character that is not white space tells XML from text
    const first = text.search(/\S/);
    if (first < 0) return;
    const c = text[first]!;
    if (c === '<') sink = xml = xmlSitemapSink(collector, limits.maxUrlLength);
    // a control character or undecodable bytes where a URL should start: binary, not a text sitemap
    else if (c < ' ' || c === '\uFFFD') sink = notASitemap(`not a sitemap: binary data (${described})`);
    else sink = textSitemapSink(collector, limits.maxUrlLength);
    sink.write(text.slice(first));
  };
  let read: ReadResult = { cut: false };
  try {
    read = readSitemapBytes(input.body, limits.maxBytes, (bytes) => feed(decoder.decode(bytes, { stream: true })));
    if (!read.cut) feed(decoder.decode());
    // after corrupt gzip the file is not ended as if it were whole
    if (!read.error) (sink as TextSink | null)?.end(read.cut);
  } catch (err) {
    if (!(err instanceof StopParsing)) throw err;
  }

  const s = sink as TextSink | null;
  const x = xml as XmlSink | null;
  let error = read.error ?? s?.error;
  if (!s && !error) error = `empty sitemap (${described})`;
  const kind: SitemapKind = error ? 'invalid' : x ? (x.kind ?? 'invalid') : 'text';
  const truncated = [collector.truncated, read.cut ? `larger than ${limits.maxBytes} bytes${gzip ? ' inflated' : ''}: read the first ${limits.maxBytes}` : undefined]
    .filter(Boolean)
    .join('; ');
  return {
    kind,
    entries: collector.entries,
    dropped: collector.dropped,
    ...(error ? { error } : {}),
    ...(truncated ? { truncated } : {}),
  };
}

/** The sink of a file that is no sitemap at all: it ends the parse at once. */
function notASitemap(error: string): TextSink {
  return {
    error,
    write() {
      throw new StopParsing('error');
    },
    end() {},
  };
}
