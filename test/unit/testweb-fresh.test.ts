// The fresh hosts of the test web (*.fresh.test): pages that change on a known schedule, with
// validators and sitemaps. The schedule is checked through the model and over real HTTP with
// an injected clock; the sitemaps are read with the crawler's own sitemap parser.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { DROP_REASONS, parseSitemap } from '../../stages/extract/sitemap/index.js';
import {
  BAD_SITEMAP_PATH,
  FRESH_DEFAULTS,
  FRESH_SITEMAP_HOST,
  FreshHosts,
  SITEMAP_CHILD_PATHS,
  SITEMAP_INDEX_PATH,
  TEXT_SITEMAP_PATH,
  freshHostName,
  getFromTestWeb,
  runTestWebCli,
  startTestWeb,
  type TestWeb,
} from '../../testweb/index.js';

// not on a whole second, so Last-Modified's rounding is exercised
const T0 = Date.parse('2026-01-01T00:00:00.250Z');
const SECOND = 1000;

const model = (opts: ConstructorParameters<typeof FreshHosts>[0] = {}) => new FreshHosts(typeof opts === 'object' ? { startAt: T0, ...opts } : opts, { seed: 1, serverClock: () => T0 });
const pathOf = (url: string) => new URL(url).pathname;

/** GET as bytes (a gzip sitemap is not text), through the Host header like getFromTestWeb. */
function getBytes(port: number, host: string, path: string): Promise<{ status: number; type: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('fresh hosts: the change schedule', () => {
  test('every host has its pages, with each period and some that never change; the same seed gives the same schedule', () => {
    const m = model();
    assert.deepEqual(m.hostNames, ['f0.fresh.test', 'f1.fresh.test', 'f2.fresh.test']);
    for (const host of m.hostNames) {
      const urls = m.pageUrls(host);
      assert.equal(urls.length, FRESH_DEFAULTS.pagesPerHost);
      assert.ok(urls.includes(`http://${host}/`));
      const periods = new Set(urls.map((u) => m.changePeriodMs(u)));
      assert.deepEqual([...periods].sort(), [...FRESH_DEFAULTS.periodsSeconds.map((s) => s * SECOND), null].sort(), host);
    }
    const again = model();
    const other = model({ seed: 99 });
    const periods = (x: FreshHosts) => x.pageUrls().map((u) => [u, x.changePeriodMs(u), x.changeTimes(u, T0, T0 + 60 * SECOND)[0]]);
    assert.deepEqual(periods(again), periods(m));
    assert.notDeepEqual(periods(other), periods(m));
  });

  test('a page changes exactly at its change times: version and content step there and nowhere else', () => {
    const m = model();
    for (const url of m.pageUrls()) {
      const period = m.changePeriodMs(url);
      const changes = m.changeTimes(url, T0, T0 + 60 * SECOND);
      if (period === null) {
        assert.deepEqual(changes, [], url);
        assert.equal(m.versionAt(url, T0 + 3600 * SECOND), 0);
        assert.equal(m.bodyAt(url, T0), m.bodyAt(url, T0 + 3600 * SECOND));
        continue;
      }
      assert.ok(changes[0]! > T0 && changes[0]! <= T0 + period, `${url}: first change within one period of the start`);
      for (let i = 0; i < changes.length; i++) {
        const c = changes[i]!;
        if (i > 0) assert.equal(c - changes[i - 1]!, period);
        assert.equal(m.versionAt(url, c), i + 1);
        assert.equal(m.versionAt(url, c - 1), i);
        assert.notEqual(m.etagAt(url, c), m.etagAt(url, c - 1), `${url} changes at ${c - T0} ms`);
        assert.equal(m.etagAt(url, c), m.etagAt(url, c + period - 1), `${url} holds still until the next change`);
        assert.equal(m.lastChangeAt(url, c + period - 1), c);
      }
      // the window is inclusive, and ends where asked
      assert.deepEqual(m.changeTimes(url, changes[1]!, changes[2]!), [changes[1], changes[2]]);
      assert.deepEqual(m.changeTimes(url, changes[1]! + 1, changes[2]! - 1), []);
      assert.ok(m.lastChangeAt(url, T0) <= T0, 'version 0 dates from before the start');
    }
  });

  test('every host publishes an index; only f0 the text and the bad sitemap', () => {
    const m = model();
    assert.equal(m.sitemapUrls(freshHostName(1)).bad, null);
    assert.equal(m.sitemapUrls(freshHostName(1)).text, null);
    assert.equal(m.sitemapUrls(freshHostName(1)).index, `http://${freshHostName(1)}${SITEMAP_INDEX_PATH}`);
  });

  test('periods are options; bad options stop start-up with their name', () => {
    const m = model({ hosts: 1, pagesPerHost: 5, periodsSeconds: [2] });
    assert.deepEqual(m.pageUrls().map(pathOf), ['/', '/news/1.html', '/docs/1.html', '/news/2.html', '/docs/2.html']);
    assert.deepEqual([...new Set(m.pageUrls().map((u) => m.changePeriodMs(u)))].sort(), [2000, null].sort());
    assert.equal(new FreshHosts({ clock: () => T0 + 7 }).options.startAt, T0 + 7, 'the schedule starts when the clock says, by default');
    assert.throws(() => model({ pagesPerHost: 3 }), /fresh\.pagesPerHost/);
    assert.throws(() => model({ periodsSeconds: [0.5] }), /fresh\.periodsSeconds/);
    assert.throws(() => model({ hosts: 0 }), /fresh\.hosts/);
    assert.throws(() => m.versionAt('http://f0.fresh.test/nope.html', T0), /not a page of the fresh hosts/);
  });
});

describe('fresh hosts over HTTP, on an injected clock', () => {
  let web: TestWeb;
  let now = T0 + 100;
  before(async () => {
    web = await startTestWeb({ hosts: 1, fresh: { startAt: T0, clock: () => now } });
  });
  after(async () => web?.close());
  const host = FRESH_SITEMAP_HOST;
  const get = (path: string, headers: Record<string, string> = {}) => getFromTestWeb(web.port, host, path, headers);
  const parse = async (path: string) => {
    const r = await getBytes(web.port, host, path);
    assert.equal(r.status, 200, path);
    return { ...parseSitemap({ body: r.body, contentType: r.type, url: `http://${host}${path}`, now }), type: r.type };
  };

  test('served only when enabled, mapped by one --resolve rule', async () => {
    assert.ok(web.resolveRules.includes(`*.fresh.test=127.0.0.1:${web.port}`));
    assert.equal(web.fresh?.options.startAt, T0);
    const plain = await startTestWeb({ hosts: 1 });
    try {
      assert.equal(plain.fresh, null);
      assert.equal((await getFromTestWeb(plain.port, host, '/')).status, 421);
    } finally {
      await plain.close();
    }
  });

  test('Last-Modified and a strong ETag; 304 while unchanged, 200 with new validators after a change', async () => {
    const fresh = web.fresh!;
    const url = fresh.pageUrls(host).find((u) => fresh.changePeriodMs(u) === 3 * SECOND)!;
    const [change] = fresh.changeTimes(url, now, now + 10 * SECOND);
    now = change! - 1;
    const first = await get(pathOf(url));
    assert.equal(first.status, 200);
    const etag = String(first.headers.etag);
    const lastModified = String(first.headers['last-modified']);
    assert.match(etag, /^"[^"]+"$/, 'strong: no W/');
    assert.equal(Date.parse(lastModified), Math.floor(fresh.lastChangeAt(url, now) / SECOND) * SECOND);
    assert.equal((await get(pathOf(url), { 'if-none-match': etag })).status, 304);
    assert.equal((await get(pathOf(url), { 'if-modified-since': lastModified })).status, 304);
    now = change!;
    const inm = await get(pathOf(url), { 'if-none-match': etag });
    assert.equal(inm.status, 200);
    assert.notEqual(inm.headers.etag, etag);
    assert.equal(Date.parse(String(inm.headers['last-modified'])), Math.floor(change! / SECOND) * SECOND);
    assert.match(inm.body, /Version \d+:/);
    assert.equal((await get(pathOf(url), { 'if-modified-since': lastModified })).status, 200);
    // a page that never changes stays 304 an hour later
    const still = fresh.pageUrls(host).find((u) => fresh.changePeriodMs(u) === null)!;
    const r = await get(pathOf(still));
    now += 3600 * SECOND;
    assert.equal((await get(pathOf(still), { 'if-none-match': String(r.headers.etag) })).status, 304);
    // and the request log has them, 304s included, like any host's
    const log = web.requestLog().filter((x) => x.host === host);
    assert.ok(log.some((x) => x.status === 304 && x.path === pathOf(url)));
  });

  test('a crawl from the home page finds every page', async () => {
    const seen = new Set(['/']);
    const queue = ['/'];
    while (queue.length > 0) {
      const r = await get(queue.shift()!);
      for (const [, href] of r.body.matchAll(/href="([^"]+)"/g)) {
        if (!seen.has(href!)) {
          seen.add(href!);
          queue.push(href!);
        }
      }
    }
    assert.deepEqual([...seen].sort(), web.fresh!.pageUrls(host).map(pathOf).sort());
  });

  test('robots.txt allows all and names the sitemaps; the index and its children (one gzip) list every page with its last change', async () => {
    const robots = await get('/robots.txt');
    assert.match(robots.body, /^User-agent: \*\nAllow: \/\n/);
    const named = [...robots.body.matchAll(/^Sitemap: (.*)$/gm)].map((m) => m[1]);
    assert.deepEqual(named, [`http://${host}${SITEMAP_INDEX_PATH}`, `http://${host}${BAD_SITEMAP_PATH}`, `http://${host}${TEXT_SITEMAP_PATH}`]);

    now = T0 + 42 * SECOND;
    const index = await parse(SITEMAP_INDEX_PATH);
    assert.equal(index.kind, 'index');
    assert.deepEqual(index.entries.map((e) => pathOf(e.url)), [...SITEMAP_CHILD_PATHS]);
    const listed: string[] = [];
    for (const entry of index.entries) {
      const child = await parse(pathOf(entry.url));
      assert.equal(child.kind, 'urlset', `${entry.url}: ${child.error}`);
      assert.deepEqual(child.dropped, []);
      if (entry.url.endsWith('.gz')) assert.equal(child.type, 'application/gzip');
      for (const e of child.entries) {
        assert.equal(e.lastmod, web.fresh!.lastChangeAt(e.url, now), e.url);
        listed.push(e.url);
      }
      assert.equal(entry.lastmod, Math.max(...child.entries.map((e) => e.lastmod!)), 'the index dates each child by its newest page');
    }
    assert.deepEqual(listed.sort(), web.fresh!.pageUrls(host).sort());
    for (const url of listed) assert.equal((await get(pathOf(url))).status, 200, url);
  });

  test('the text sitemap lists every page', async () => {
    const text = await parse(TEXT_SITEMAP_PATH);
    assert.equal(text.kind, 'text');
    assert.deepEqual(text.entries.map((e) => e.url).sort(), web.fresh!.pageUrls(host).sort());
  });

  test('the bad sitemap is bad three ways: a future lastmod, a URL outside its prefix, malformed XML; its URLs all exist', async () => {
    const bad = await parse(BAD_SITEMAP_PATH);
    assert.equal(bad.kind, 'invalid');
    assert.match(bad.error ?? '', /malformed XML/);
    assert.deepEqual(
      bad.entries.map((e) => [pathOf(e.url), e.lastmod]),
      [
        ['/news/1.html', web.fresh!.lastChangeAt(`http://${host}/news/1.html`, now)],
        ['/news/2.html', null],
      ],
    );
    assert.deepEqual(bad.dropped, [{ url: `http://${host}/docs/1.html`, reason: DROP_REASONS.outsidePrefix }]);
    const raw = (await get(BAD_SITEMAP_PATH)).body;
    const future = /news\/2\.html<\/loc><lastmod>([^<]+)</.exec(raw)![1]!;
    assert.ok(Date.parse(future) > now + 86_400_000, 'the future lastmod is days ahead');
    for (const [, loc] of raw.matchAll(/<loc>([^<]+)</g)) assert.equal((await get(pathOf(loc!))).status, 200, loc);
  });
});

test('crawl testweb --fresh says so and prints the --resolve rule for *.fresh.test', async () => {
  const lines: string[] = [];
  const ac = new AbortController();
  const running = runTestWebCli({ hosts: 1, port: 0, seed: 1, fresh: true, out: (l) => lines.push(l), signal: ac.signal });
  while (lines.length < 2) await new Promise((r) => setTimeout(r, 5));
  assert.match(lines[0]!, /^testweb listening on 127\.0\.0\.1:(\d+) \(1 hosts: h00\.site\.test, 3 fresh hosts \(\*\.fresh\.test, changing since \d{4}-\d\d-\d\dT[\d:.]+Z\)\)$/);
  const port = /:(\d+) /.exec(lines[0]!)![1];
  assert.match(lines[1]!, new RegExp(`--resolve \\*\\.fresh\\.test=127\\.0\\.0\\.1:${port}`));
  ac.abort();
  await running;
});
