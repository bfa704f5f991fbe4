import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page, Route } from 'playwright-core';
import { renderOn, routeRequest, type BrowserSlot } from '../../pipeline/adapters/browser/render-one.js';
import type { RenderJob } from '../../ports/browser.js';

/**
 * A page standing in for Chromium's: it loads `loadAfterMs` after the render starts, and its
 * script makes one request `requestAfterLoadMs` after that (a poller's first tick).
 */
function fakeSlot(loadAfterMs: number, requestAfterLoadMs: number): BrowserSlot {
  const frame = {};
  const page = new EventEmitter() as EventEmitter & Record<string, unknown>;
  let loaded = false;
  let slot: BrowserSlot;
  page.mainFrame = () => frame;
  page.goto = async () => {
    setTimeout(() => {
      loaded = true;
      page.emit('load');
      setTimeout(() => void routeRequest(slot, fakeRoute(frame)), requestAfterLoadMs);
    }, loadAfterMs);
  };
  page.evaluate = async () => (loaded ? 'complete' : 'loading');
  page.content = async () => '<html><body>polled</body></html>';
  slot = { context: {} as BrowserSlot['context'], page: page as unknown as Page, renders: 0, current: null };
  return slot;
}

function fakeRoute(frame: object): Route {
  const request = { frame: () => frame, isNavigationRequest: () => false, url: () => 'http://endless.test/api/poll?n=1', method: () => 'GET', resourceType: () => 'fetch', headers: () => ({}) };
  return { request: () => request, fulfill: async () => undefined, abort: async () => undefined } as unknown as Route;
}

function job(timeoutMs: number): RenderJob {
  return {
    url: 'http://endless.test/',
    document: { status: 200, headers: {}, body: new Uint8Array() },
    timeoutMs,
    settleMs: 500,
    // the page's request is answered 100 ms after it is made
    onRequest: async () => {
      await sleep(100);
      return { kind: 'response', status: 200, headers: {}, body: new TextEncoder().encode('1') };
    },
  };
}

describe('renderOn: when a page is settled', () => {
  it("counts the page's quiet time from its load, not from the render's start", async () => {
    // loads 400 ms in and makes its first request 300 ms later: quiet for 700 ms since the
    // start, but only 300 since the load, so the page is not settled before that request
    const result = await renderOn(fakeSlot(400, 300), job(3000), () => false);
    assert.equal(result.settled, true);
    assert.equal(result.loaded, true);
    // load 400 + request 300 + answer 100 + quiet 500 = 1300
    assert.ok(result.durationMs >= 1250, `settled after ${result.durationMs} ms, before the page's first request was answered and quiet for 500 ms`);
  });

  it('a page still quiet 500 ms after its load is settled', async () => {
    const result = await renderOn(fakeSlot(100, 2000), job(3000), () => false);
    assert.equal(result.settled, true);
    assert.ok(result.durationMs >= 550 && result.durationMs < 1500, `settled after ${result.durationMs} ms`);
  });
});
