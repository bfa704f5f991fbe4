/**
 * One render on a browser context of the pool: the page's document is served from the job,
 * every other request goes to the job's `onRequest` through the context's route handler, and
 * the DOM is taken once the page has loaded and its network has been quiet for `settleMs`,
 * or when the render's time is up, whichever is first.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserContext, Page, Route } from 'playwright-core';
import { RenderFailure, type BrowserRequest, type RenderJob, type RenderResult } from '../../../ports/browser.js';

/** One context of the pool, with its page, reused render after render. */
export interface BrowserSlot {
  context: BrowserContext;
  page: Page;
  renders: number;
  /** the render in progress, whose job answers the route handler; null between renders */
  current: ActiveRender | null;
}

/** What one render has seen so far: the route handler and the settle loop share it. */
export class ActiveRender {
  documentServed = false;
  /** the page has loaded (its readyState is complete) */
  loaded = false;
  open = 0;
  lastActivity: number;
  crashed = false;
  constructor(
    readonly job: RenderJob,
    readonly started: number,
  ) {
    this.lastActivity = started;
  }

  /**
   * The page has loaded: its quiet time counts from now. Counted from the render's start, a
   * page whose scripts only begin their requests a moment after loading (a cold renderer can
   * take over half a second to make an endless poller's first request) would be "settled"
   * before it had asked for anything.
   */
  markLoaded(now: number): void {
    if (this.loaded) return;
    this.loaded = true;
    this.lastActivity = Math.max(this.lastActivity, now);
  }
}

/** How long the DOM may take to serialize: a page whose main thread never yields does not answer at all. */
const SNAPSHOT_TIMEOUT_MS = 5_000;
/** A page busy this long is asked again at the next turn of the settle loop. */
const READY_STATE_TIMEOUT_MS = 1_000;
/** how often the settle loop looks at the open requests */
const SETTLE_POLL_MS = 50;
/** Headers that describe the transfer, not the body handed to the browser (the client decoded it). */
const TRANSFER_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'set-cookie']);

export function browserHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!TRANSFER_HEADERS.has(k.toLowerCase())) out[k] = v;
  return out;
}

/** The context's route handler: answers each request of the page from the current render's job. */
export async function routeRequest(slot: BrowserSlot, route: Route): Promise<void> {
  const active = slot.current;
  const req = route.request();
  // a late request of the previous page (its scripts run until about:blank replaces it)
  if (!active) return route.abort('blockedbyclient').catch(() => undefined);
  let mainFrame = true;
  try {
    mainFrame = req.frame() === slot.page.mainFrame();
  } catch {
    mainFrame = false; // a service worker's request has no frame (service workers are blocked anyway)
  }
  const navigation = req.isNavigationRequest();
  if (navigation && mainFrame && !active.documentServed) {
    active.documentServed = true;
    const d = active.job.document;
    return route.fulfill({ status: d.status, headers: browserHeaders(d.headers), body: Buffer.from(d.body.buffer, d.body.byteOffset, d.body.byteLength) }).catch(() => undefined);
  }
  active.open++;
  active.lastActivity = performance.now();
  try {
    const request: BrowserRequest = { url: req.url(), method: req.method(), resourceType: req.resourceType(), navigation: navigation && mainFrame, subframe: !mainFrame, headers: req.headers() };
    const answer = await active.job.onRequest(request);
    if (answer.kind === 'response') {
      await route.fulfill({ status: answer.status, headers: browserHeaders(answer.headers), body: Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength) });
    } else if (navigation && mainFrame) {
      // a blocked navigation away from the page: 204 keeps the page where it is (an abort would put an error page in its place)
      await route.fulfill({ status: 204, body: '' });
    } else {
      await route.abort('blockedbyclient');
    }
  } catch {
    // the page went away meanwhile (the render ended): nothing to answer
    await route.abort('failed').catch(() => undefined);
  } finally {
    active.open--;
    active.lastActivity = performance.now();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The page's document.readyState; 'loading' while its main thread does not answer. */
function readyState(page: Page): Promise<string> {
  return withTimeout(page.evaluate(() => document.readyState), READY_STATE_TIMEOUT_MS, () => new Error('busy')).catch(() => 'loading');
}

/**
 * Renders `job` on `slot`. Throws a RenderFailure when there is no DOM to give (the page's
 * renderer crashed, its main thread never answered); the caller then resets the slot.
 */
export async function renderOn(slot: BrowserSlot, job: RenderJob, browserGone: () => boolean): Promise<RenderResult> {
  const started = performance.now();
  const deadline = started + job.timeoutMs;
  job.onStart?.();
  const active = new ActiveRender(job, started);
  slot.current = active;
  const onCrash = () => (active.crashed = true);
  slot.page.on('crash', onCrash);
  const failure = (err: unknown): RenderFailure => {
    if (err instanceof RenderFailure) return err;
    if (browserGone()) return new RenderFailure('browser_crashed', `the browser died while rendering ${job.url}`, true, { cause: err });
    if (active.crashed) return new RenderFailure('page_crashed', `the page's renderer crashed (over the memory bound?) while rendering ${job.url}`, true, { cause: err });
    return new RenderFailure('page_crashed', `rendering ${job.url}: ${(err as Error).message.split('\n')[0]}`, true, { cause: err });
  };
  // Loaded is the page's readyState, not a goto waiting for the load event: when the page
  // starts a navigation of its own before it has loaded (answered 204, so it stays), the
  // driver drops the page's load event, though the page goes on to load.
  const onLoad = () => active.markLoaded(performance.now());
  slot.page.on('load', onLoad);
  try {
    try {
      await slot.page.goto(job.url, { waitUntil: 'commit', timeout: Math.max(1, deadline - performance.now()) });
    } catch (err) {
      // not even the document committed in time: the DOM as it is still counts, unless the page is gone
      if (active.crashed || browserGone() || !/timeout/i.test((err as Error).message)) throw failure(err);
    }
    let settled = false;
    while (performance.now() < deadline) {
      if (active.crashed) throw failure(new Error('crashed'));
      if (!active.loaded && (await readyState(slot.page)) === 'complete') active.markLoaded(performance.now());
      const now = performance.now();
      if (active.loaded && active.open === 0 && now - active.lastActivity >= job.settleMs) {
        settled = true;
        break;
      }
      await sleep(Math.min(SETTLE_POLL_MS, Math.max(1, deadline - now)));
    }
    const html = await withTimeout(
      slot.page.content(),
      SNAPSHOT_TIMEOUT_MS,
      () => new RenderFailure('unresponsive', `the page's main thread did not answer within ${SNAPSHOT_TIMEOUT_MS} ms (a script that never yields?): ${job.url}`, false),
    ).catch((err: unknown) => {
      throw failure(err);
    });
    return { html, settled, loaded: active.loaded, durationMs: Math.round(performance.now() - started), pending: active.open };
  } finally {
    slot.page.off('load', onLoad);
    slot.page.off('crash', onCrash);
    slot.current = null;
    slot.renders++;
  }
}

/** Leaves the slot's page blank for the next render: the last page's timers and requests stop. */
export async function blankPage(slot: BrowserSlot): Promise<void> {
  await withTimeout(slot.page.goto('about:blank', { timeout: SNAPSHOT_TIMEOUT_MS }), SNAPSHOT_TIMEOUT_MS + 1000, () => new Error('about:blank did not load'));
  await slot.context.clearCookies();
}
