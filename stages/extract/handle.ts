import type { FetchedPage } from '../../schemas/index.js';
import type { Disposition, StageContext, StageInput } from '../../pipeline/stage.js';
import { storeValidators } from '../shared/conditional-get.js';
import { robotsTokenOf } from '../shared/robots/robots-rules.js';
import { bodyOf } from '../shared/messages/page-body.js';
import { extractPage } from './extract-page.js';
import { type ExtractSettings, type PageExtraction } from './extraction.js';

/** Options a replay may change (for example to fix a bug in what extract keeps). */
export interface ExtractOptions {
  titles: boolean;
}

export function extractSettings(opts: ExtractOptions, ctx: StageContext): ExtractSettings {
  const st = ctx.settings;
  return {
    titles: opts.titles,
    maxPayloadBytes: ctx.maxPayloadBytes,
    partitions: st.partitions,
    maxDepth: st.maxDepth,
    followLinks: st.followLinks,
    render: { patterns: st.render, auto: st.renderAuto },
    robotsToken: robotsTokenOf(st),
  };
}

/** The main thread's share of extracting a page, wherever the extraction ran: counts, and the KV write once the outputs are out. */
export function extractionDisposition(x: PageExtraction, ctx: StageContext): Disposition {
  for (const c of x.counts) ctx.metrics.count('extract', c.what, c.outcome, c.by);
  const v = x.validators;
  if (!v) return { kind: 'emit', messages: x.messages };
  return {
    kind: 'emit',
    messages: x.messages,
    ...(v ? { afterPublish: () => storeValidators(ctx.kv.validators, v.url, v.headers, v.fetchTime, v.links, v.fetchId) } : {}),
  };
}

/** Extracts on the calling thread (`--extract-threads 0`, replays, tests). */
export function createExtractHandler(opts: ExtractOptions = { titles: true }) {
  return async function handleExtract(input: StageInput<FetchedPage>, ctx: StageContext): Promise<Disposition> {
    const p = input.message;
    return extractionDisposition(extractPage(p, extractSettings(opts, ctx), await bodyOf(p, ctx)), ctx);
  };
}
