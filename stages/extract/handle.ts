import { encodeDiscoveredLinks, encodeExtracted, type FetchedPage } from '../../schemas/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import { type Emit, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { contentDigest } from '../simhash/simhash.js';
import { decodeBody } from './decode-body.js';
import { extractHtml, type ExtractedHtml } from './extract-html.js';
import { storeValidators } from '../validators.js';
import { cutToBytes, MESSAGE_SLACK_BYTES, utf8Length, withinBudget } from '../message-budget.js';

/** Options a replay may change (for example to fix a bug in what extract keeps). */
export interface ExtractOptions {
  titles: boolean;
}

const jsonBytes = (v: unknown) => utf8Length(JSON.stringify(v) ?? '') + 1;

/**
 * Headings, OpenGraph, JSON-LD and hreflang cut to `maxBytes` in all: JSON-LD (the one that
 * can be large) gets half, the others an eighth each; items past a budget are left out whole.
 */
function structuredWithinBudget(doc: ExtractedHtml, maxBytes: number) {
  const eighth = Math.floor(maxBytes / 8);
  const opengraph = jsonBytes(doc.openGraph) <= eighth ? doc.openGraph : {};
  return {
    headings: withinBudget(doc.headings, jsonBytes, eighth),
    opengraph,
    json_ld: withinBudget(doc.jsonLd, jsonBytes, 4 * eighth),
    hreflang: withinBudget(doc.hreflang, jsonBytes, eighth),
  };
}

export function createExtractHandler(opts: ExtractOptions = { titles: true }) {
  return async function handleExtract(input: StageInput<FetchedPage>, ctx: StageContext): Promise<Outcome> {
    const p = input.message;
    const { text: html, charset } = decodeBody(p.body, p.charset, { truncated: p.truncated });
    const doc = extractHtml(html, p.url);
    const { body: _body, headers: _headers, ...meta } = p;
    // The extracted page carries its texts, links and structured data; together they must fit
    // one message: a quarter each for links, main text and structured data, and the full text
    // gets what the main text left of half the room (it is a superset, usually the larger).
    const room = Math.max(0, ctx.maxPayloadBytes - MESSAGE_SLACK_BYTES);
    const quarter = Math.floor(room / 4);
    const links = withinBudget(
      doc.links.map((l) => ({ url: l.url, anchor: cutToBytes(l.anchorText, 1000), rel: l.rel, source: l.source })),
      (l) => utf8Length(l.url) + utf8Length(l.anchor) + l.rel.length + l.source.length + 24,
      quarter,
    );
    // noindex: the page is recorded, but its text is not kept, nor what repeats it (headings,
    // OpenGraph, JSON-LD, like the description); its links and hreflang alternates are
    const noindex = doc.metaRobots.noindex;
    const text = noindex ? '' : cutToBytes(doc.mainText, quarter);
    const textFull = noindex ? '' : cutToBytes(doc.text, 2 * quarter - utf8Length(text));
    const structured = structuredWithinBudget(noindex ? { ...doc, headings: [], openGraph: {}, jsonLd: [] } : doc, quarter);
    if (doc.jsonLd.length > 0) ctx.metrics.count('extract', 'json_ld', 'ok', doc.jsonLd.length);
    if (doc.jsonLdInvalid > 0) ctx.metrics.count('extract', 'json_ld', 'invalid', doc.jsonLdInvalid);
    const out: Emit[] = [
      {
        subject: subjectFor('extracted', p.host, ctx.settings.partitions),
        msgId: `extracted:${p.fetch_id}`,
        data: encodeExtracted({
          ...meta,
          charset,
          content_length: p.body.length,
          content_digest: contentDigest(p.body),
          title: opts.titles ? doc.title : '',
          text,
          text_full: textFull,
          ...structured,
          description: doc.metaRobots.noindex ? null : doc.description,
          language: doc.language,
          canonical_url: doc.canonicalUrl,
          noindex: doc.metaRobots.noindex,
          nofollow: doc.metaRobots.nofollow,
          links,
        }),
      },
    ];
    // nofollow: links are recorded in the output but not followed. Links from a page at the
    // maximum depth are not sent on either: normalize would only reject them all for depth.
    const follow = !doc.metaRobots.nofollow;
    if (follow && links.length > 0 && p.depth + 1 <= ctx.settings.maxDepth) {
      out.push({
        subject: subjectFor('links', p.host, ctx.settings.partitions),
        msgId: `links:${p.fetch_id}`,
        data: encodeDiscoveredLinks({
          v: 1,
          source_url: p.url,
          depth: p.depth + 1,
          via: 'link',
          // normalize needs no link source; the output's links table has it
          links: links.map(({ url, anchor, rel }) => ({ url, anchor, rel })),
        }),
      });
    }
    ctx.metrics.count('extract', 'pages', doc.metaRobots.noindex ? 'noindex' : 'ok');
    return {
      kind: 'emit',
      messages: out,
      // for a later crawl's conditional GET (and the links to follow if the answer is 304)
      afterPublish: () => storeValidators(ctx.kv.validators, p.url, p.headers, p.fetch_time, follow ? links.map((l) => l.url) : []),
    };
  };
}
