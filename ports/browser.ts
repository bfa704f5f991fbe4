/**
 * The browser port: what the render stage asks of a headless browser. The adapter
 * (pipeline/adapters/browser/) drives Debian's Chromium through playwright-core; unit tests
 * use a fake. The browser reaches nothing by itself: the page's document comes from the job,
 * and every other request the page makes is handed to the job's `onRequest`, which answers
 * it (through the crawler's own HTTP client, politely) or blocks it.
 */

export interface BrowserRequest {
  url: string;
  method: string;
  /** Chromium's resource type: document, stylesheet, script, xhr, fetch, image, media, font, websocket, ping, … */
  resourceType: string;
  /** the page's own window navigating away (a script setting `location`, a form) */
  navigation: boolean;
  /** a request of a frame inside the page (an iframe), not of the page itself */
  subframe: boolean;
  /** the headers the page would send (Accept, Referer, …) */
  headers: Record<string, string>;
}

export type BrowserAnswer =
  | { kind: 'response'; status: number; headers: Record<string, string>; body: Uint8Array }
  | { kind: 'blocked'; reason: string };

export interface RenderJob {
  url: string;
  /** the page's document as fetched: the browser is given it, it does not fetch it again */
  document: { status: number; headers: Record<string, string>; body: Uint8Array };
  /** the render ends this long after it started, settled or not (the DOM as it is then is the result) */
  timeoutMs: number;
  /** after the load event, the page counts as settled once no request has been open for this long */
  settleMs: number;
  /** called once the browser has a page for the render and starts its `timeoutMs` */
  onStart?(): void;
  onRequest(req: BrowserRequest): Promise<BrowserAnswer>;
}

export interface RenderResult {
  /** the DOM, serialized as HTML */
  html: string;
  /** true: loaded and the network went quiet; false: cut at the timeout */
  settled: boolean;
  /** whether the load event fired */
  loaded: boolean;
  durationMs: number;
  /** requests still open when the render ended */
  pending: number;
}

export type RenderFailureCode =
  /** the browser process died or could not be started */
  | 'browser_crashed'
  /** the page's renderer died (out of memory, a crash) */
  | 'page_crashed'
  /** the page's main thread did not answer (a script that never yields) */
  | 'unresponsive';

/** A render that produced no DOM. `retryable`: another try may succeed (the browser restarts). */
export class RenderFailure extends Error {
  override readonly name = 'RenderFailure';
  constructor(
    readonly code: RenderFailureCode,
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface Renderer {
  /** Renders one page; at most `concurrency` at once (more wait for a free browser context). */
  render(job: RenderJob): Promise<RenderResult>;
  close(): Promise<void>;
}
