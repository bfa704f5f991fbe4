// An XML sitemap, <urlset> or <sitemapindex> (https://www.sitemaps.org/protocol.html), read as
// a stream of SAX events, so a 50 MB file is never held as a tree and the parse can stop at the
// URL limit. Tags are matched as the spec spells them (lower case); namespaces are tolerated
// by matching children with the root's own prefix (none, or `sm:` for `<sm:urlset>`), whatever
// URI it is bound to: the 0.9 namespace, Google's old 0.84 one, or none at all. Extension
// elements (`<image:loc>`, `<xhtml:link>`) carry another prefix or sit deeper, and are ignored.
//
// A fault ends the parse, but what was read before it stays: the entries closed so far, and
// the one in progress if its <loc> was complete (as crawler-commons does).

import sax from 'sax';
import { StopParsing, type EntryCollector, type RawEntry } from './collector.js';
import type { TextSink } from './text-sitemap.js';

type Field = 'loc' | 'lastmod' | 'changefreq' | 'priority';
const FIELDS: readonly string[] = ['loc', 'lastmod', 'changefreq', 'priority'];
const FEED_ROOTS = new Set(['rss', 'feed', 'RDF']);

export interface XmlSink extends TextSink {
  /** what the root element said, once it has been seen */
  readonly kind: 'urlset' | 'index' | null;
}

export function xmlSitemapSink(collector: EntryCollector, maxUrlLength: number): XmlSink {
  // sax's strict mode: well-formedness errors are reported (no HTML-style guessing), and entities
  // declared in a DTD are never expanded, so an entity bomb is only an error.
  const parser = sax.parser(true, { position: true });
  const sink = { kind: null as XmlSink['kind'], error: undefined as string | undefined, write, end };
  // a field's text is kept only up to twice the URL limit: a longer one is dropped anyway
  const textCap = 2 * maxUrlLength;
  const open: string[] = [];
  let prefix = '';
  let entry: Partial<RawEntry> | null = null;
  let field: Field | null = null;
  let text = '';

  const fail = (message: string): never => {
    sink.error = message;
    // the entry in progress counts if its <loc> was read whole
    if (entry?.loc !== undefined) collect();
    throw new StopParsing('error');
  };
  const collect = () => {
    const e = entry;
    entry = null;
    collector.add({ ...e, loc: e?.loc ?? '' });
  };

  parser.onopentag = (tag) => {
    const depth = open.length;
    open.push(tag.name);
    if (depth === 0) return root(tag.name);
    if (depth === 1 && tag.name === `${prefix}${sink.kind === 'index' ? 'sitemap' : 'url'}`) entry = {};
    else if (depth === 2 && entry && tag.name.startsWith(prefix) && FIELDS.includes(tag.name.slice(prefix.length))) {
      field = tag.name.slice(prefix.length) as Field;
      text = '';
    }
  };
  const root = (name: string) => {
    const colon = name.indexOf(':');
    prefix = colon < 0 ? '' : name.slice(0, colon + 1);
    const local = name.slice(prefix.length);
    if (local === 'urlset' || local === 'sitemapindex') {
      sink.kind = local === 'urlset' ? 'urlset' : 'index';
      collector.index = sink.kind === 'index';
      return;
    }
    fail(`not a sitemap: the root element is <${name}>${FEED_ROOTS.has(local) ? ' (an RSS or Atom feed, which this parser does not read)' : ''}`);
  };
  const onText = (t: string) => {
    if (field !== null && open.length === 3 && text.length < textCap) text += t;
  };
  parser.ontext = onText;
  parser.oncdata = onText;
  parser.onclosetag = () => {
    open.pop();
    const depth = open.length;
    if (depth === 2 && field !== null && entry) {
      entry[field] = text;
      field = null;
    } else if (depth === 1 && entry) collect();
  };
  parser.onerror = (err) => {
    const inside = open.length > 0 ? ` (inside <${open[open.length - 1]}>)` : '';
    fail(`malformed XML at line ${parser.line + 1}, column ${parser.column}: ${err.message.split('\n')[0]}${inside}`);
  };

  function write(chunk: string): void {
    parser.write(chunk);
  }
  function end(cut: boolean): void {
    // cut at the byte limit: keep what was read, without calling the unclosed end an error
    if (cut) {
      if (entry?.loc !== undefined) collect();
      return;
    }
    parser.close();
    if (sink.kind === null) fail('not a sitemap: no root element');
  }
  return sink;
}
