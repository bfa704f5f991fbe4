import { encodeDiscoveredLinks, encodeExtracted, type FetchedPage } from '../../schemas/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import { type Emit, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { contentDigest } from '../simhash/simhash.js';
import { decodeBody } from './decode-body.js';
import { extractHtml } from './extract-html.js';
import { storeValidators } from '../fetch/validators.js';

/** Options a replay may change (for example to fix a bug in what extract keeps). */
export interface ExtractOptions {
  titles: boolean;
}

export function createExtractHandler(opts: ExtractOptions = { titles: true }) {
  return async function handleExtract(input: StageInput<FetchedPage>, ctx: StageContext): Promise<Outcome> {
    const p = input.message;
    const { text: html, charset } = decodeBody(p.body, p.charset, { truncated: p.truncated });
    const doc = extractHtml(html, p.url);
    const { body: _body, headers: _headers, ...meta } = p;
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
          // noindex: the page is recorded, but its text is not kept
          text: doc.metaRobots.noindex ? '' : doc.text,
          description: doc.metaRobots.noindex ? null : doc.description,
          language: doc.language,
          canonical_url: doc.canonicalUrl,
          noindex: doc.metaRobots.noindex,
          nofollow: doc.metaRobots.nofollow,
          links: doc.links.map((l) => ({ url: l.url, anchor: l.anchorText, rel: l.rel })),
        }),
      },
    ];
    // nofollow: links are recorded in the output but not followed. Links from a page at the
    // maximum depth are not sent on either: normalize would only reject them all for depth.
    const follow = !doc.metaRobots.nofollow;
    if (follow && doc.links.length > 0 && p.depth + 1 <= ctx.settings.maxDepth) {
      out.push({
        subject: subjectFor('links', p.host, ctx.settings.partitions),
        msgId: `links:${p.fetch_id}`,
        data: encodeDiscoveredLinks({
          v: 1,
          source_url: p.url,
          depth: p.depth + 1,
          via: 'link',
          links: doc.links.map((l) => ({ url: l.url, anchor: l.anchorText, rel: l.rel })),
        }),
      });
    }
    ctx.metrics.count('extract', 'pages', doc.metaRobots.noindex ? 'noindex' : 'ok');
    return {
      kind: 'emit',
      messages: out,
      // for a later crawl's conditional GET (and the links to follow if the answer is 304)
      afterPublish: () => storeValidators(ctx.kv.validators, p.url, p.headers, p.fetch_time, follow ? doc.links.map((l) => l.url) : []),
    };
  };
}
