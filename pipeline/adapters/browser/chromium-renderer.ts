/**
 * The Renderer port over headless Chromium: one browser per process, started at the first
 * render, and a pool of `concurrency` browser contexts, each with one page that is reused
 * render after render (cookies cleared between them) and replaced after RECYCLE_AFTER
 * renders or any failure. A browser that dies is started again at the next render; the
 * renders it took down fail as retryable, so the stage tries them again.
 */
import type { Browser } from 'playwright-core';
import { RenderFailure, type Renderer, type RenderJob, type RenderResult } from '../../../ports/browser.js';
import { launchChromium, startSink } from './chromium-launch.js';
import { blankPage, renderOn, routeRequest, type BrowserSlot } from './render-one.js';

export interface ChromiumRendererOptions {
  /** browser contexts, so renders at once */
  concurrency: number;
  /** JavaScript heap per page (MB): past it the page's renderer dies */
  memoryMb: number;
  /** navigator.userAgent in the pages (the requests carry the crawler's anyway: its own client sends them) */
  userAgent: string;
  executablePath?: string;
  /** told about what goes wrong beside a render (a restart, a connection past the route handler) */
  warn?: (message: string, fields?: Record<string, unknown>) => void;
}

/** A context serves this many renders, then a fresh one takes over (what pages leave behind stays bounded). */
export const RECYCLE_AFTER = 50;

export class ChromiumRenderer implements Renderer {
  private browser: Promise<Browser> | null = null;
  /** bumped when the browser goes away: slots of an older one are made again */
  private generation = 0;
  private readonly slots: Array<(BrowserSlot & { generation: number }) | null>;
  private readonly free: number[] = [];
  private readonly waiting: Array<(slot: number) => void> = [];
  private sink: Promise<{ port: number; close(): Promise<void> }> | null = null;
  private closed = false;
  /** connections that reached the sink instead of the route handler */
  leaks = 0;
  launches = 0;

  constructor(private readonly opts: ChromiumRendererOptions) {
    this.slots = Array.from({ length: Math.max(1, opts.concurrency) }, () => null);
    for (let i = 0; i < this.slots.length; i++) this.free.push(i);
  }

  private async ensureBrowser(): Promise<Browser> {
    if (this.closed) throw new RenderFailure('browser_crashed', 'the renderer is closed', false);
    this.sink ??= startSink(() => {
      this.leaks++;
      this.opts.warn?.('the browser opened a connection past the route handler; the sink refused it', { leaks: this.leaks });
    });
    if (!this.browser) {
      const generation = ++this.generation;
      const launching = (async () => {
        const browser = await launchChromium({ memoryMb: this.opts.memoryMb, sinkPort: (await this.sink!).port, executablePath: this.opts.executablePath });
        this.launches++;
        browser.on('disconnected', () => {
          if (this.generation !== generation || this.closed) return;
          this.opts.warn?.('the browser died; it starts again at the next render');
          this.browser = null;
          this.generation++;
        });
        return browser;
      })();
      this.browser = launching;
      launching.catch(() => {
        if (this.browser === launching) this.browser = null;
      });
    }
    try {
      return await this.browser;
    } catch (err) {
      throw new RenderFailure('browser_crashed', `starting Chromium: ${(err as Error).message.split('\n')[0]}`, true, { cause: err });
    }
  }

  private acquire(): Promise<number> {
    const i = this.free.pop();
    if (i !== undefined) return Promise.resolve(i);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(i: number): void {
    const next = this.waiting.shift();
    if (next) next(i);
    else this.free.push(i);
  }

  /** The slot's context and page, made (again) when missing, of an older browser, or used up. */
  private async slot(i: number): Promise<BrowserSlot> {
    const current = this.slots[i];
    if (current && current.generation === this.generation && current.renders < RECYCLE_AFTER && this.browser) return current;
    if (current) await this.drop(i);
    const browser = await this.ensureBrowser();
    const generation = this.generation;
    const context = await browser.newContext({ userAgent: this.opts.userAgent, serviceWorkers: 'block', acceptDownloads: false, javaScriptEnabled: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const made = { context, page, renders: 0, current: null, generation };
    await context.route('**/*', (route) => routeRequest(made, route));
    // WebSockets do not pass the route handler: every one is closed before it connects
    await context.routeWebSocket(/.*/, (ws) => ws.close({ code: 1008, reason: 'blocked by the crawler' }));
    // dialogs would stop the page's scripts; popups are pages of their own, not this one
    page.on('dialog', (d) => void d.dismiss().catch(() => undefined));
    context.on('page', (p) => {
      if (p !== page) void p.close().catch(() => undefined);
    });
    this.slots[i] = made;
    return made;
  }

  private async drop(i: number): Promise<void> {
    const s = this.slots[i];
    this.slots[i] = null;
    await s?.context.close().catch(() => undefined);
  }

  async render(job: RenderJob): Promise<RenderResult> {
    const i = await this.acquire();
    try {
      const slot = await this.slot(i);
      const generation = this.generation;
      try {
        const result = await renderOn(slot, job, () => this.generation !== generation || !this.browser);
        await blankPage(slot).catch(() => this.drop(i));
        return result;
      } catch (err) {
        await this.drop(i);
        throw err;
      }
    } finally {
      this.release(i);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (let i = 0; i < this.slots.length; i++) await this.drop(i);
    const browser = this.browser;
    this.browser = null;
    if (browser) await (await browser.catch(() => null))?.close().catch(() => undefined);
    await (await this.sink?.catch(() => null))?.close();
  }
}
