import { decodeFetched, encodeDiscoveredLinks, encodeExtracted, encodeRenderRequest, type BodyRef, type FetchedPage } from '../../schemas/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import type { Emit } from '../../pipeline/stage.js';
import { contentDigest } from '../shared/content-identity/content-digest.js';
import { decodeBody } from './decode-body.js';
import { extractSitemap } from './sitemap-page.js';
import type { ExtractCount, ExtractSettings, PageExtraction } from './extraction.js';
import { extractHtml, type ExtractedHtml } from './extract-html.js';
import { cutToBytes, MESSAGE_SLACK_BYTES, utf8Length, withinBudget } from '../shared/messages/message-budget.js';
import { renderPatternReason, type RenderRouting } from './render-route.js';
import { appShellReason } from './app-shell.js';
import { simhashAndWords, simhashToHex } from '../shared/content-identity/simhash.js';
import { describeDirectives, indexingVerdict, xRobotsTagGroup, type DirectiveGroup } from '../shared/robots/robots-directives.js';

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

/**
 * Decodes a fetched-page message and extracts it; an undecodable message throws a SchemaError.
 * A page whose body is stored beside the message needs that body (`body`, read by the caller):
 * without it, the answer is where it is.
 */
export function extractFetchedMessage(data: Uint8Array, s: ExtractSettings, body?: Uint8Array): PageExtraction | { needsBody: BodyRef; url: string } {
  const p = decodeFetched(data);
  if (p.body_ref && !body) return { needsBody: p.body_ref, url: p.url };
  return extractPage(p, s, body ?? p.body);
}

/**
 * The page goes to the render stage instead of on: the render stage sends back its rendered
 * DOM (or, when rendering fails, the page as it is), marked `rendered`, which extract then
 * extracts like any page. In a replay the render message reaches no one, and the rendered
 * version, retained beside the original, is what is extracted. The page goes as it came: a
 * body stored beside it stays there, referred to.
 */
function toRender(p: FetchedPage, reason: string, s: ExtractSettings): PageExtraction {
  return {
    messages: [{ subject: subjectFor('render', p.host, s.partitions), msgId: `render:${p.fetch_id}`, data: encodeRenderRequest({ ...p, render_reason: reason }) }],
    counts: [{ what: 'pages', outcome: 'to_render', by: 1 }],
    validators: null,
  };
}

/** The robots rules the page gave the crawler: its X-Robots-Tag header, then its meta tags. */
function pageDirectives(p: FetchedPage, doc: ExtractedHtml, token: string): DirectiveGroup[] {
  const header = xRobotsTagGroup(p.headers, token, p.header_lines);
  return header ? [header, ...doc.robotsMeta] : doc.robotsMeta;
}

/** `p` as it came (its body possibly stored beside it) and its whole `body`. */
export function extractPage(p: FetchedPage, s: ExtractSettings, body = p.body): PageExtraction {
  if (p.fetch_as === 'sitemap') return extractSitemap(p, s, body);
  // a page that came back from the render stage is never sent there again
  const routable = p.rendered === undefined;
  const byPattern = routable ? renderPatternReason(p.url, s.render.patterns) : null;
  if (byPattern) return toRender(p, byPattern, s);
  const { text: html, charset } = decodeBody(body, p.charset, { truncated: p.truncated });
  const doc = extractHtml(html, p.url, { robotsToken: s.robotsToken });
  const shell = routable && s.render.auto ? appShellReason({ text: doc.text, ...doc.shell }) : null;
  if (shell) return toRender(p, shell, s);
  const { body: _body, body_ref: _ref, headers: _headers, ...meta } = p;
  // The extracted page carries its texts, links and structured data; together they must fit
  // one message: a quarter each for links, main text and structured data; the main text's
  // markdown (the same words with their markup, a tenth longer on the article benchmark) gets
  // up to a quarter too, out of the full text's room, which gets what the main text and its
  // markdown left of half the room (the full text is a superset, usually the larger).
  const room = Math.max(0, s.maxPayloadBytes - MESSAGE_SLACK_BYTES);
  const quarter = Math.floor(room / 4);
  const links = withinBudget(
    doc.links.map((l) => ({ url: l.url, anchor: cutToBytes(l.anchorText, 1000), rel: l.rel, source: l.source })),
    (l) => utf8Length(l.url) + utf8Length(l.anchor) + l.rel.length + l.source.length + 24,
    quarter,
  );
  // meta robots and X-Robots-Tag together, the most restrictive winning (robots-directives.ts)
  const directives = pageDirectives(p, doc, s.robotsToken);
  const robots = indexingVerdict(directives, p.fetch_time);
  // noindex: the page is recorded, but its text is not kept, nor what repeats it (headings,
  // OpenGraph, JSON-LD, like the description); its links and hreflang alternates are
  const noindex = robots.noindex;
  const text = noindex ? '' : cutToBytes(doc.mainText, quarter);
  const markdown = noindex ? '' : cutToBytes(doc.markdown, quarter);
  const textFull = noindex ? '' : cutToBytes(doc.text, 2 * quarter - utf8Length(text) - utf8Length(markdown));
  // the text's fingerprint is made here, on the extract thread, rather than by the simhash
  // stage on the process's main thread, which is what a one-process crawl waits on
  const fingerprint = simhashAndWords(text);
  const structured = structuredWithinBudget(noindex ? { ...doc, headings: [], openGraph: {}, jsonLd: [] } : doc, quarter);
  const counts: ExtractCount[] = [];
  if (doc.jsonLd.length > 0) counts.push({ what: 'json_ld', outcome: 'ok', by: doc.jsonLd.length });
  if (doc.jsonLdInvalid > 0) counts.push({ what: 'json_ld', outcome: 'invalid', by: doc.jsonLdInvalid });
  const messages: Emit[] = [
    {
      subject: subjectFor('extracted', p.host, s.partitions),
      msgId: `extracted:${p.fetch_id}`,
      data: encodeExtracted({
        ...meta,
        charset,
        content_length: body.length,
        content_digest: contentDigest(body),
        title: s.titles ? doc.title : '',
        text,
        text_full: textFull,
        text_markdown: markdown,
        simhash: simhashToHex(fingerprint.hash),
        text_words: fingerprint.words,
        ...structured,
        description: noindex ? null : doc.description,
        // a noindex page keeps no text, so there is nothing to say where it came from
        text_source: noindex ? undefined : doc.textSource,
        // from the same metadata as the description, and likewise not kept for noindex pages
        author: noindex ? null : doc.author,
        published_at: noindex ? null : doc.publishedAt,
        site_name: noindex ? null : doc.siteName,
        language: doc.language,
        canonical_url: doc.canonicalUrl,
        noindex: robots.noindex,
        nofollow: robots.nofollow,
        robots_directives: describeDirectives(directives),
        links,
      }),
    },
  ];
  // nofollow: links are recorded in the output but not followed. Links from a page at the
  // maximum depth are not sent on either: normalize would only reject them all for depth.
  const follow = !robots.nofollow && s.followLinks;
  // (a job has a maximum depth of its own, which normalize applies)
  if (follow && links.length > 0 && (p.job !== undefined || p.depth + 1 <= s.maxDepth)) {
    messages.push({
      subject: subjectFor('links', p.host, s.partitions),
      msgId: `links:${p.fetch_id}`,
      data: encodeDiscoveredLinks({
        v: 1,
        source_url: p.url,
        depth: p.depth + 1,
        via: 'link',
        // normalize needs no link source; the output's links table has it
        links: links.map(({ url, anchor, rel }) => ({ url, anchor, rel })),
        ...(p.job !== undefined ? { job: p.job } : {}),
      }),
    });
  }
  counts.push({ what: 'pages', outcome: robots.noindex ? 'noindex' : 'ok', by: 1 });
  return {
    messages,
    counts,
    // for a later crawl's conditional GET (and the links to follow if the answer is 304)
    validators: p.job !== undefined ? null : { url: p.url, headers: p.headers, fetchTime: p.fetch_time, links: follow ? links.map((l) => l.url) : [], fetchId: p.fetch_id },
  };
}
