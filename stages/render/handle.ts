import { setTimeout as sleep } from 'node:timers/promises';
import { RenderFailure, type Renderer } from '../../ports/browser.js';
import type { RenderRequest } from '../../schemas/index.js';
import { emit, retryAfter, type Disposition, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { RenderSession } from './render-session.js';
import { type Sleep } from './turn-wait.js';
import { SubresourceCache } from './subresource-cache.js';
import { domBody, renderedPageEmit, renderNote, unrenderedPageEmit } from './rendered-page.js';
import { MAX_RENDER_ATTEMPTS, RENDER_SETTLE_MS } from './spec.js';
import { bodyOf, placeBody } from '../shared/messages/page-body.js';
import { contentDigest } from '../shared/content-identity/content-digest.js';

/** A render that failed in a way another try may fix (the browser died) comes back after this. */
const RETRY_AFTER_MS = 2_000;

export interface RenderStageDeps {
  renderer: Renderer;
  /** shared by the renders of this process */
  cache?: SubresourceCache;
  /** real timers unless a test drives a fake clock */
  sleep?: Sleep;
}

/**
 * Renders one page: the browser gets the fetched document, every request the page makes
 * goes through a RenderSession (policy, robots.txt, the host's turn, the crawler's HTTP
 * client), and the DOM goes on to extract with every exchange for the archive. A render
 * the browser could not finish is tried again (MAX_RENDER_ATTEMPTS in all), then the page is
 * stored as fetched, with why: nothing is lost for want of a browser.
 */
export function createRenderHandler(deps: RenderStageDeps) {
  const cache = deps.cache ?? new SubresourceCache();
  const wait = deps.sleep ?? ((ms: number) => sleep(ms));
  return async function handleRender(input: StageInput<RenderRequest>, ctx: StageContext): Promise<Disposition> {
    const page = input.message;
    const s = ctx.settings;
    // the page as fetched, also when its body is stored beside the message
    const body = await bodyOf(page, ctx);
    const session = new RenderSession(ctx, page, cache, ctx.clock.now() + s.renderTimeoutMs, wait);
    let result;
    try {
      result = await deps.renderer.render({
        url: page.url,
        document: { status: page.fetch_status, headers: page.headers, body },
        timeoutMs: s.renderTimeoutMs,
        settleMs: RENDER_SETTLE_MS,
        onStart: () => session.restartClock(s.renderTimeoutMs),
        onRequest: (req) => session.answer(req),
      });
    } catch (err) {
      await session.close();
      if (!(err instanceof RenderFailure)) throw err;
      ctx.metrics.count('render', 'renders', err.code);
      const attempts = `${input.deliveryCount} of ${MAX_RENDER_ATTEMPTS} attempts`;
      if (err.retryable && input.deliveryCount < MAX_RENDER_ATTEMPTS) {
        ctx.log.warn({ url: page.url, code: err.code, err: err.message }, 'render failed; it will be tried again');
        return retryAfter(RETRY_AFTER_MS, `${err.code}: ${err.message} (${attempts})`);
      }
      ctx.log.warn({ url: page.url, code: err.code, err: err.message }, 'render failed; the page is stored as fetched');
      // what the failed attempts fetched is archived too: those requests were made
      return emit(unrenderedPageEmit(page, `${err.message} (${err.retryable ? attempts : 'not retried'})`, s.partitions), ...session.exchanges);
    }
    // the requests still under way finish (bounded by their timeouts) and release their hosts before the page is published
    await session.close();
    const note = renderNote(page, result, session, s.renderTimeoutMs);
    ctx.metrics.count('render', 'renders', result.settled ? 'settled' : 'timeout');
    ctx.metrics.count('render', 'requests', 'fetched', session.counts.fetched);
    ctx.metrics.count('render', 'requests', 'cached', session.counts.cached);
    ctx.metrics.count('render', 'requests', 'blocked', session.counts.blocked + session.counts.failed);
    // the DOM is kept up to the page size cap, like a fetched page, on any server: a DOM larger
    // than its message can carry is stored beside it
    const dom = domBody(result.html, s.maxPageBytes);
    const placed = await placeBody(ctx, 'render', page.host, dom.bytes);
    return emit(renderedPageEmit(page, { placed, cut: dom.cut }, contentDigest(body), note, session, s.partitions), ...session.exchanges);
  };
}
