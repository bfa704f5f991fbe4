/**
 * The Chromium adapter of the browser port, against the real browser (Debian's chromium,
 * driven by playwright-core): the document comes from the job and every other request
 * from `onRequest`; nothing the page tries reaches the network by itself; a page that never
 * settles ends at the timeout, one that never yields fails, one past its heap bound crashes
 * (and is retryable), and a browser that dies is started again.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { ChromiumRenderer } from '../../pipeline/adapters/browser/chromium-renderer.js';
import { RenderFailure, type BrowserAnswer, type BrowserRequest, type RenderJob } from '../../ports/browser.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const html = (body: string, head = '') => utf8(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title>${head}</head><body>${body}</body></html>`);

function job(url: string, body: Uint8Array, answers: Record<string, string> = {}, seen: BrowserRequest[] = [], over: Partial<RenderJob> = {}): RenderJob {
  return {
    url,
    document: { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' }, body },
    timeoutMs: 10_000,
    settleMs: 300,
    async onRequest(req): Promise<BrowserAnswer> {
      seen.push(req);
      const answer = answers[req.url];
      if (answer === undefined) return { kind: 'blocked', reason: 'not in this test' };
      return { kind: 'response', status: 200, headers: { 'content-type': req.url.endsWith('.js') ? 'text/javascript' : 'application/json', 'content-encoding': 'br' }, body: utf8(answer) };
    },
    ...over,
  };
}

/** The browser processes this test process started (its direct children), by pid. */
function chromiumChildren(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out.split('\n').filter((l) => /chrom/.test(l)).map((l) => Number(l.trim().split(/\s+/)[0]));
}

describe('Chromium renderer (real browser)', () => {
  let renderer: ChromiumRenderer;
  let probe: Server;
  let probePort = 0;
  let probeConnections = 0;
  const warnings: string[] = [];
  before(async () => {
    renderer = new ChromiumRenderer({ concurrency: 2, memoryMb: 256, userAgent: 'testcrawler/1.0', warn: (m) => warnings.push(m) });
    probe = createServer((s) => {
      probeConnections++;
      s.destroy();
    });
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    probePort = (probe.address() as { port: number }).port;
  });
  after(async () => {
    await renderer?.close();
    await new Promise<void>((r) => probe.close(() => r()));
  });

  test('a page built by its script: the document comes from the job, the script and its JSON from onRequest, the DOM has the text', async () => {
    const seen: BrowserRequest[] = [];
    const r = await renderer.render(
      job(
        'http://app.test/page',
        html('<div id="root"></div><img src="/hero.png"><script src="/app.js"></script>'),
        {
          'http://app.test/app.js': "fetch('/api').then(r => r.json()).then(d => { document.getElementById('root').innerHTML = '<p>' + d.text + '</p><a href=\"/next\">next</a>'; });",
          'http://app.test/api': JSON.stringify({ text: 'Built by the script' }),
        },
        seen,
      ),
    );
    assert.match(r.html, /<p>Built by the script<\/p><a href="\/next">next<\/a>/);
    assert.equal(r.settled, true);
    assert.equal(r.loaded, true);
    assert.deepEqual(
      seen.map((s) => `${s.resourceType} ${s.url}`).sort(),
      ['fetch http://app.test/api', 'image http://app.test/hero.png', 'script http://app.test/app.js'],
      'the document itself is never asked for',
    );
    assert.equal(seen.find((s) => s.resourceType === 'script')!.headers['user-agent'], 'testcrawler/1.0');
  });

  test('nothing the page tries reaches a listener of its own: fetch, image, script, iframe, beacon, WebSocket, preconnect, navigation', async () => {
    const target = `http://127.0.0.1:${probePort}`;
    const seen: BrowserRequest[] = [];
    const page = html(
      `<p id="out">start</p><iframe src="${target}/frame"></iframe><img src="${target}/img"><script src="${target}/s.js"></script>` +
        `<script>fetch('${target}/f').catch(() => {}); try { navigator.sendBeacon('${target}/b', 'x'); } catch (e) {}` +
        ` try { new WebSocket('ws://127.0.0.1:${probePort}/ws'); } catch (e) {}` +
        ` setTimeout(() => { location.href = '${target}/nav'; }, 100); setTimeout(() => { document.getElementById('out').textContent = 'still here'; }, 400);</script>`,
      `<link rel="preconnect" href="${target}"><link rel="dns-prefetch" href="http://example.invalid"><link rel="prefetch" href="${target}/prefetch">`,
    );
    const r = await renderer.render(job('http://escape.test/', page, {}, seen, { settleMs: 800 }));
    assert.match(r.html, /still here/, 'a blocked navigation leaves the page where it is');
    assert.ok(seen.some((s) => s.navigation && s.url === `${target}/nav`), 'the navigation came to onRequest');
    assert.ok(seen.some((s) => s.subframe && s.url === `${target}/frame`), 'the iframe came to onRequest, marked as a subframe');
    assert.ok(seen.some((s) => s.resourceType === 'ping' || s.url.endsWith('/b')), 'the beacon came to onRequest');
    assert.equal(probeConnections, 0, 'no connection reached the listener');
    assert.equal(renderer.leaks, 0, 'nothing needed the sink');
  });

  test('a page that tries to leave before it has loaded stays, loads and settles', async () => {
    const slowStylesheet: RenderJob = {
      ...job('http://leave.test/', html('<p>the page itself</p><script>location.href = "/elsewhere";</script>', '<link rel="stylesheet" href="/slow.css">')),
      async onRequest(req) {
        if (req.navigation) return { kind: 'blocked', reason: 'navigation' };
        await new Promise((r) => setTimeout(r, 500));
        return { kind: 'response', status: 200, headers: { 'content-type': 'text/css' }, body: utf8('p { color: red }') };
      },
    };
    const r = await renderer.render(slowStylesheet);
    assert.deepEqual([r.loaded, r.settled], [true, true]);
    assert.match(r.html, /the page itself/);
  });

  test('a page that polls forever ends at the timeout, not settled, with the DOM as it was', async () => {
    let polls = 0;
    const endless: RenderJob = {
      ...job('http://endless.test/', html(`<p id="n">0</p><script>let n = 0; setInterval(() => fetch('/poll').then(r => r.text()).then(t => { document.getElementById('n').textContent = 'polled ' + (++n); }), 50);</script>`)),
      timeoutMs: 1500,
      async onRequest() {
        polls++;
        return { kind: 'response', status: 200, headers: { 'content-type': 'text/plain' }, body: utf8('x') };
      },
    };
    const r = await renderer.render(endless);
    assert.equal(r.settled, false);
    assert.equal(r.loaded, true);
    assert.ok(r.durationMs >= 1500, `ended at the timeout (${r.durationMs} ms)`);
    assert.match(r.html, /polled \d+/);
    assert.ok(polls > 3);
  });

  test('a script that never yields fails as unresponsive (not retried); the renderer goes on', async () => {
    await assert.rejects(renderer.render(job('http://hang.test/', html('<script>while (true) {}</script>'), {}, [], { timeoutMs: 1000 })), (err: unknown) => {
      assert.ok(err instanceof RenderFailure);
      assert.equal(err.code, 'unresponsive');
      assert.equal(err.retryable, false);
      return true;
    });
    const r = await renderer.render(job('http://after.test/', html('<p>fine again</p>')));
    assert.match(r.html, /fine again/);
  });

  test('a page past its JavaScript heap bound (memoryMb): its renderer dies, the render fails as a retryable crash; the renderer goes on', async () => {
    const hog = '<script>const keep = []; for (;;) keep.push(new Array(1e6).fill(Math.random()));</script>';
    await assert.rejects(renderer.render(job('http://hog.test/', html(hog), {}, [], { timeoutMs: 8000 })), (err: unknown) => {
      assert.ok(err instanceof RenderFailure, String(err));
      assert.equal(err.code, 'page_crashed', err.message);
      assert.equal(err.retryable, true);
      return true;
    });
    const r = await renderer.render(job('http://after-hog.test/', html('<p>fine after the crash</p>')));
    assert.match(r.html, /fine after the crash/);
  });

  test('renders beyond the concurrency wait for a context; at most the concurrency run at once; all finish', async () => {
    // Each page asks for a script the test holds: a page is inside its render while its request
    // is held. The first two meet (so two did run at once), then stay a while longer, so that
    // a third page rendering beside them would be counted too.
    let inFlight = 0;
    let peak = 0;
    let twoMet!: () => void;
    const met = new Promise<void>((r) => (twoMet = r));
    const holding = (n: number): Partial<RenderJob> => ({
      async onRequest(req): Promise<BrowserAnswer> {
        if (!req.url.endsWith('/hold.js')) return { kind: 'blocked', reason: 'not in this test' };
        inFlight++;
        peak = Math.max(peak, inFlight);
        if (inFlight >= 2) twoMet();
        await Promise.race([met, new Promise((r) => setTimeout(r, 3000))]);
        await new Promise((r) => setTimeout(r, 500));
        inFlight--;
        return { kind: 'response', status: 200, headers: { 'content-type': 'text/javascript' }, body: utf8(`document.body.dataset.n = '${n}';`) };
      },
    });
    const results = await Promise.all(
      [1, 2, 3, 4].map((n) => renderer.render(job(`http://many.test/${n}`, html(`<p>page ${n}</p><script src="/hold.js"></script>`), {}, [], holding(n)))),
    );
    results.forEach((r, i) => assert.match(r.html, new RegExp(`page ${i + 1}`)));
    assert.equal(peak, 2, 'renders at once: the concurrency (2), no more');
  });

  test('a browser that dies fails its renders as retryable, and is started again for the next', async () => {
    const launches = renderer.launches;
    const slow = renderer.render(job('http://slow.test/', html('<script>setInterval(() => fetch("/x"), 20)</script>'), {}, [], { timeoutMs: 8000 }));
    await new Promise((r) => setTimeout(r, 500));
    const pids = chromiumChildren();
    assert.ok(pids.length > 0, 'found the browser process');
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await assert.rejects(slow, (err: unknown) => err instanceof RenderFailure && err.code === 'browser_crashed' && err.retryable);
    const r = await renderer.render(job('http://again.test/', html('<p>a new browser</p>')));
    assert.match(r.html, /a new browser/);
    assert.equal(renderer.launches, launches + 1);
  });
});
