/**
 * Replay, as an archivist does it: a crawl of the test web exported with `crawl export wacz`
 * and opened in real Chromium by Webrecorder's replay engine (wabac.js, the service worker
 * behind ReplayWeb.page, from npm), served from a static server on loopback with range
 * requests as a WACZ host serves it. Archived pages render with their text. The package is
 * also checked as a WACZ reader would: every file listed with its sha256, WARC files
 * stored uncompressed, the index sorted and equal to warcio.js's over the packaged WARC files.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { unzipSync } from 'fflate';
import { chromium, type Browser } from 'playwright-core';
import { startTestWeb, type TestWeb } from '../../testweb/index.js';
import { chromiumPath } from '../../pipeline/adapters/browser/chromium-launch.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E, queryOutput, runShortCrawl } from '../support/e2e-web.js';
import { readWarcBytes, warcioCdxj } from '../support/warc-reader.js';

/** the engine's service worker, built by the package beside its module entry (dist/) */
const SW_JS = path.join(path.dirname(createRequire(import.meta.url).resolve('@webrecorder/wabac')), 'sw.js');

/**
 * The page a viewer opens: registers the replay service worker for /replay/, hands it the
 * WACZ by URL (it reads the package with range requests) and says when it is loaded.
 */
const VIEWER = `<!doctype html><html><body><iframe id="replay" style="width:1000px;height:700px"></iframe><script>
window.loaded = (async () => {
  const reg = await navigator.serviceWorker.register('/replay/sw.js', { scope: '/replay/' });
  const sw = reg.installing || reg.waiting || reg.active;
  await new Promise((resolve) => { if (sw.state === 'activated') resolve(); else sw.addEventListener('statechange', () => sw.state === 'activated' && resolve()); });
  return await new Promise((resolve, reject) => {
    navigator.serviceWorker.onmessage = (ev) => {
      if (ev.data.msg_type === 'collAdded') resolve(ev.data.name);
      if (ev.data.msg_type === 'collProgress' && ev.data.error) reject(new Error(ev.data.error));
    };
    reg.active.postMessage({ msg_type: 'addColl', name: 'crawl', skipExisting: false, file: { sourceUrl: location.origin + '/crawl.wacz' } });
  });
})();
</script></body></html>`;

/** A static host for the viewer, the engine and the package, answering range requests as WACZ hosting needs (spec: Partial Requests). */
function serveViewer(wacz: Buffer): Promise<{ server: Server; origin: string; ranges: () => number }> {
  const engine = readFileSync(SW_JS);
  let ranges = 0;
  const server = createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    if (p === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(VIEWER);
    if (p === '/replay/sw.js') return res.writeHead(200, { 'content-type': 'application/javascript' }).end(engine);
    if (p !== '/crawl.wacz') return res.writeHead(404).end();
    const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (!m) return res.writeHead(200, { 'content-type': 'application/zip', 'accept-ranges': 'bytes', 'content-length': wacz.length }).end(req.method === 'HEAD' ? undefined : wacz);
    ranges++;
    // bytes=a-b, bytes=a- and the suffix form bytes=-n
    const start = m[1] === '' ? Math.max(0, wacz.length - Number(m[2])) : Number(m[1]);
    const end = m[1] === '' || m[2] === '' ? wacz.length - 1 : Math.min(Number(m[2]), wacz.length - 1);
    res.writeHead(206, { 'content-type': 'application/zip', 'accept-ranges': 'bytes', 'content-range': `bytes ${start}-${end}/${wacz.length}`, 'content-length': end - start + 1 });
    res.end(req.method === 'HEAD' ? undefined : wacz.subarray(start, end + 1));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`, ranges: () => ranges })));
}

describe('browser: a crawl exported as WACZ replays in Chromium through Webrecorder’s replay engine', () => {
  let web: TestWeb;
  let out: string;
  let dir: string;
  let wacz: Buffer;
  let browser: Browser;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'wacz-replay-'));
    out = path.join(dir, 'out');
    web = await startTestWeb({ hosts: 2, pagesPerHost: 12, seed: E2E.seed });
    await runShortCrawl(web, out, 'replay', ['--max-depth', '2', '--no-compact']);
    const exported = await runCli(['export', 'wacz', '--out', out, '--to', path.join(dir, 'crawl.wacz')]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stdout, /^wrote .*crawl\.wacz: \d+ WARC files?, \d+ index lines, \d+ pages/);
    wacz = readFileSync(path.join(dir, 'crawl.wacz'));
    browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  });
  after(async () => {
    await browser?.close();
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an archived page renders with its title and main text, and a second page by its URL', async () => {
    const { server, origin, ranges } = await serveViewer(wacz);
    try {
      const page = await browser.newPage();
      assert.equal(await page.goto(origin + '/').then((r) => r?.status()), 200);
      assert.equal(await page.evaluate('window.loaded'), 'crawl');
      const host = web.model.siteHostNames[0]!;
      const pages = (await queryOutput(out, `SELECT url, title, text FROM pages WHERE url_host_name = '${host}' AND fetch_status = 200 ORDER BY depth, url LIMIT 2`)) as Array<[string, string, string]>;
      assert.equal(pages.length, 2);
      for (const [url, title, text] of pages) {
        await page.evaluate((src) => ((document.getElementById('replay') as HTMLIFrameElement).src = src), `/replay/w/crawl/mp_/${url}`);
        const frame = await waitForFrame(page, `mp_/${url}`);
        await frame.waitForFunction((t) => document.title === t, title, { timeout: 15_000 });
        const shown = await frame.evaluate(() => document.body.innerText);
        // the first line of the page's main text, as extract stored it, is on the replayed page
        const firstLine = text.split('\n').find((l) => l.trim().length > 20)!.trim();
        assert.ok(shown.replace(/\s+/g, ' ').includes(firstLine.replace(/\s+/g, ' ')), `${url}: "${firstLine}" not in the replayed page`);
      }
      assert.ok(ranges() > 0, 'the engine read the package by range requests');
    } finally {
      server.close();
    }
  });

  it('the package is WACZ 1.1.1: every file listed with its size and sha256, WARC files stored, index sorted and equal to warcio.js’s, pages listed', async () => {
    const files = unzipSync(wacz);
    const names = Object.keys(files).sort();
    assert.ok(names.includes('datapackage.json') && names.includes('datapackage-digest.json') && names.includes('indexes/index.cdxj') && names.includes('pages/pages.jsonl'), names.join(' '));
    const manifest = JSON.parse(Buffer.from(files['datapackage.json']!).toString()) as { profile: string; wacz_version: string; resources: Array<{ path: string; hash: string; bytes: number }> };
    assert.equal(manifest.profile, 'data-package');
    assert.equal(manifest.wacz_version, '1.1.1');
    assert.deepEqual(manifest.resources.map((r) => r.path).sort(), names.filter((n) => !n.startsWith('datapackage')));
    for (const r of manifest.resources) {
      assert.equal(r.bytes, files[r.path]!.length, r.path);
      assert.equal(r.hash, 'sha256:' + createHash('sha256').update(files[r.path]!).digest('hex'), r.path);
    }
    const digest = JSON.parse(Buffer.from(files['datapackage-digest.json']!).toString()) as { path: string; hash: string };
    assert.equal(digest.hash, 'sha256:' + createHash('sha256').update(files['datapackage.json']!).digest('hex'));
    // stored, not deflated: the WARC bytes sit in the ZIP as they are (a reader range-requests a record)
    for (const n of names.filter((x) => x.startsWith('archive/'))) assert.ok(wacz.includes(Buffer.from(files[n]!.subarray(0, 4096))), `${n} is stored`);
    // the index: warcio.js's lines over the packaged WARC files, merged in sort order
    const expected: string[] = [];
    for (const n of names.filter((x) => x.startsWith('archive/'))) {
      const local = path.join(dir, path.basename(n));
      writeFileSync(local, files[n]!);
      expected.push(...(await warcioCdxj(local)).trimEnd().split('\n').filter(Boolean));
    }
    const index = Buffer.from(files['indexes/index.cdxj']!).toString();
    assert.deepEqual(index.trimEnd().split('\n'), [...expected].sort());
    // pages: the header line, then one entry per stored 2xx page with its fetch time
    const [head, ...entries] = Buffer.from(files['pages/pages.jsonl']!).toString().trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
    assert.equal(head!.format, 'json-pages-1.0');
    const stored = await queryOutput(out, 'SELECT count(*) FROM pages WHERE fetch_status BETWEEN 200 AND 299');
    assert.equal(entries.length, Number(stored[0]![0]));
    for (const e of entries) assert.match(e.ts!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('--host packages that host’s records only, each file still a WARC file warcio reads, with its own index', async () => {
    const host = web.model.siteHostNames[1]!;
    const to = path.join(dir, 'host.wacz');
    const exported = await runCli(['export', 'wacz', '--out', out, '--host', host, '--to', to]);
    assert.equal(exported.code, 0, exported.stderr);
    const files = unzipSync(readFileSync(to));
    const uris = new Set<string>();
    const expected: string[] = [];
    for (const n of Object.keys(files).filter((x) => x.startsWith('archive/'))) {
      const records = await readWarcBytes(files[n]!);
      assert.equal(records[0]!.type, 'warcinfo', `${n} opens with its warcinfo`);
      for (const r of records.slice(1)) uris.add(new URL(r.uri!).hostname);
      const local = path.join(dir, `host-${path.basename(n)}`);
      writeFileSync(local, files[n]!);
      // warcio names the file as it was given; the package names it by its own name
      expected.push(...(await warcioCdxj(local)).trimEnd().split('\n').map((l) => l.replace(`"filename":"host-`, `"filename":"`)));
    }
    assert.deepEqual([...uris], [host]);
    assert.deepEqual(Buffer.from(files['indexes/index.cdxj']!).toString().trimEnd().split('\n'), expected.sort(), 'the index has the offsets of the copied records');
    const pages = Buffer.from(files['pages/pages.jsonl']!).toString().trimEnd().split('\n').slice(1);
    assert.ok(pages.length > 0 && pages.every((l) => new URL((JSON.parse(l) as { url: string }).url).hostname === host));
    // a host that is not in the crawl is a clear error, and no file is left
    const none = await runCli(['export', 'wacz', '--out', out, '--host', 'nowhere.test', '--to', path.join(dir, 'none.wacz')]);
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /no records of nowhere\.test/);
  });
});

async function waitForFrame(page: import('playwright-core').Page, urlPart: string) {
  for (let i = 0; i < 150; i++) {
    const f = page.frames().find((x) => x.url().includes(urlPart));
    if (f) return f;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no frame shows ${urlPart}: ${page.frames().map((f) => f.url()).join(' ')}`);
}
