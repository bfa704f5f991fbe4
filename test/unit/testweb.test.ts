// The local test web: deterministic, varied where the crawler needs variety, and exactly
// described by expectedPages() (checked by crawling the running server independently).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import robotsParserModule from 'robots-parser';
import {
  buildSiteModel,
  canonicalUrl,
  expectedCrawl,
  expectedPages,
  getFromTestWeb,
  renderPage,
  resolveLink,
  robotsAllows,
  robotsCrawlDelay,
  runTestWebCli,
  startTestWeb,
  SCRIPT_MARKER,
  siteHostName,
  STYLE_MARKER,
  type HtmlResource,
  type SiteModel,
} from '../../testweb/index.js';

const AGENT = 'testcrawler';
// robots-parser is CommonJS whose typings declare an ES default export; under NodeNext the
// default import is module.exports itself, which is the function.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;
type Robots = ReturnType<typeof robotsParser>;

function htmlPages(model: SiteModel, hostName: string): HtmlResource[] {
  return [...(model.byName.get(hostName)?.resources.values() ?? [])].filter((r): r is HtmlResource => r.kind === 'html');
}

function modelFingerprint(model: SiteModel): string {
  return JSON.stringify(model.hosts.map((h) => ({ ...h, resources: [...h.resources.entries()] })));
}

test('same seed gives the same web, another seed a different one', () => {
  const a = buildSiteModel({ hosts: 6, seed: 42, benchHosts: 2 });
  const b = buildSiteModel({ hosts: 6, seed: 42, benchHosts: 2 });
  const c = buildSiteModel({ hosts: 6, seed: 43, benchHosts: 2 });
  assert.equal(modelFingerprint(a), modelFingerprint(b));
  assert.notEqual(modelFingerprint(a), modelFingerprint(c));
  for (const host of a.hosts) {
    for (const page of htmlPages(a, host.name).slice(0, 5)) {
      const other = b.byName.get(host.name)?.resources.get(page.path) as HtmlResource;
      assert.equal(renderPage(host.name, page), renderPage(host.name, other));
    }
  }
});

test('host names and robots variety', () => {
  const model = buildSiteModel({ hosts: 20, seed: 1, benchHosts: 3 });
  assert.deepEqual(model.siteHostNames.slice(0, 3), ['h00.site.test', 'h01.site.test', 'h02.site.test']);
  assert.deepEqual(model.benchHostNames, ['b000.bench.test', 'b001.bench.test', 'b002.bench.test']);
  // Three digits once there are more than 100 hosts.
  assert.equal(siteHostName(0, 101), 'h000.site.test');
  assert.equal(siteHostName(100, 101), 'h100.site.test');
  assert.equal(siteHostName(99, 100), 'h99.site.test');

  const site = model.hosts.filter((h) => h.group === 'site');
  const delays = site.filter((h) => h.crawlDelay !== undefined);
  assert.equal(delays.length, 3, 'crawl delays on 3 hosts in 20');
  assert.ok(delays.every((h) => (h.crawlDelay as number) <= 2), 'crawl delays are at most 2 s');
  assert.equal(site.filter((h) => h.robots.status === 404).length, 1, 'one host without robots.txt');
  assert.ok(site.some((h) => /User-agent: TestCrawler/.test(h.robots.text ?? '')), 'a host has a TestCrawler group');
  assert.ok(site.some((h) => /Disallow: \/private\//.test(h.robots.text ?? '')), 'a host disallows /private/');

  const six = buildSiteModel({ hosts: 6, seed: 9 });
  const kinds = new Set(six.hosts.map((h) => h.robots.kind));
  for (const k of ['private', 'agent', 'delay-1', 'none', 'open', 'agent-only']) assert.ok(kinds.has(k as never), `hosts 0..5 include ${k}`);
  assert.ok(new Set(model.hosts.map((h) => h.lang)).size === 3, 'en, de and fr hosts');

  for (const b of model.hosts.filter((h) => h.group === 'bench')) {
    assert.equal(b.robots.text, 'User-agent: *\nAllow: /\n');
    assert.equal(b.crawlDelay, undefined);
    assert.equal(b.resources.size, 50);
    for (const r of b.resources.values()) assert.ok(r.depthFromHostRoot !== null && r.depthFromHostRoot <= 3, 'bench pages within depth 3');
  }
});

test('served robots.txt text and the rules expectedPages uses agree (checked with robots-parser)', () => {
  const model = buildSiteModel({ hosts: 20, seed: 5 });
  for (const host of model.hosts) {
    if (host.robots.text === null) continue;
    const parsed = robotsParser(`http://${host.name}/robots.txt`, host.robots.text);
    const paths = [...host.resources.keys(), ...host.brokenLinkPaths, '/private/x.html', '/private/press/y.html', '/nocrawl/z.html', '/'];
    for (const agent of [AGENT, 'otherbot', 'somebot', 'badbot']) {
      for (const path of paths) {
        assert.equal(robotsAllows(host.robots, agent, path), parsed.isAllowed(`http://${host.name}${path}`, agent), `${host.name}${path} for ${agent}`);
      }
      assert.equal(robotsCrawlDelay(host.robots, agent), parsed.getCrawlDelay(agent), `crawl-delay on ${host.name} for ${agent}`);
    }
  }
});

test('site hosts carry the web\'s habits: private pages, redirects, 404 links, duplicates, nofollow', () => {
  const model = buildSiteModel({ hosts: 20, seed: 11 });
  for (const host of model.hosts) {
    const pages = htmlPages(model, host.name);
    assert.equal(pages.length, 30);
    for (const p of pages) {
      if (p.role === 'hidden') assert.equal(p.depthFromHostRoot, null);
      else assert.ok(p.depthFromHostRoot !== null && p.depthFromHostRoot <= 4, `${host.name}${p.path} depth ${p.depthFromHostRoot}`);
      const sameHost = p.links.filter((l) => new URL(resolveLink(`http://${host.name}${p.path}`, p.baseHref, l.href) ?? 'x:/').hostname === host.name);
      assert.ok(sameHost.length >= 5 && sameHost.length <= 15, `${host.name}${p.path} has ${sameHost.length} internal links`);
      const cross = p.links.filter((l) => /\.site\.test/i.test(l.href) && !l.href.toLowerCase().includes(host.name));
      assert.ok(cross.length >= 1 && cross.length <= 3, `${host.name}${p.path} has ${cross.length} cross-host links`);
    }
    const redirects = [...host.resources.values()].filter((r) => r.kind === 'redirect');
    assert.equal(redirects.length, 1);
    const target = resolveLink(`http://${host.name}/`, undefined, redirects[0]?.kind === 'redirect' ? redirects[0].location : '') as string;
    assert.equal(host.resources.get(new URL(target).pathname)?.kind, 'html');
    assert.equal(host.brokenLinkPaths.length, 2);
    assert.ok(pages.some((p) => p.path.startsWith('/private/')), 'host has /private/ pages');
    // Private pages are linked from pages a crawler can fetch.
    const linked = new Set(pages.filter((p) => !p.path.startsWith('/private/')).flatMap((p) => p.links.map((l) => resolveLink(`http://${host.name}${p.path}`, p.baseHref, l.href))));
    for (const p of pages.filter((x) => x.path.startsWith('/private/'))) assert.ok(linked.has(`http://${host.name}${p.path}`));
  }
  const all = model.hosts.flatMap((h) => htmlPages(model, h.name).map((p) => ({ host: h.name, p })));
  const exact = all.filter(({ p }) => p.duplicateOf);
  assert.equal(exact.length, 1, 'one exact duplicate pair');
  for (const { host, p } of exact) {
    const original = model.byName.get(host)?.resources.get(p.duplicateOf as string) as HtmlResource;
    assert.equal(renderPage(host, p), renderPage(host, original));
  }
  const near = all.filter(({ p }) => p.nearDuplicateOf);
  assert.ok(near.length >= 3, 'a few near duplicates');
  for (const { host, p } of near) {
    const original = model.byName.get(host)?.resources.get(p.nearDuplicateOf as string) as HtmlResource;
    // Compare the article paragraphs word by word (titles differ on purpose).
    const words = (html: string) => [...html.matchAll(/<p>([\s\S]*?)<\/p>/g)].flatMap((m) => (m[1] as string).split(/\s+/));
    const a = words(renderPage(host, p));
    const b = words(renderPage(host, original));
    const diff = a.filter((w, i) => w !== b[i]).length;
    assert.ok(a.length > 2000 && a.length === b.length && diff > 0 && diff <= 4, `near duplicate differs in ${diff} of ${a.length} words`);
  }
  assert.ok(all.some(({ p }) => p.metaRobots === 'nofollow'), 'a nofollow page exists');
  assert.ok(all.some(({ p }) => p.metaRobots === 'noindex'), 'a noindex page exists');
  assert.ok(all.some(({ p }) => p.baseHref !== undefined), 'a <base href> page exists');
  assert.ok(all.some(({ p }) => p.links.some((l) => l.href.startsWith('http://external.example'))), 'an out-of-scope link exists');
  assert.ok(all.some(({ p }) => p.links.some((l) => l.href.includes('utm_source=x'))), 'a tracking-parameter link exists');
});

test('expectedCrawl: depth, redirects, robots per agent, nofollow', () => {
  const model = buildSiteModel({ hosts: 20, seed: 2 });
  const seeds = model.siteHostNames.map((h) => `http://${h}/`);
  assert.deepEqual([...expectedPages(model, { userAgentToken: AGENT, maxDepth: 0, seeds: [seeds[0] as string] })], ['http://h00.site.test/']);

  const full = expectedCrawl(model, { userAgentToken: AGENT, maxDepth: 6, seeds });
  const other = expectedCrawl(model, { userAgentToken: 'otherbot', maxDepth: 6, seeds });
  const generic = expectedCrawl(model, { userAgentToken: 'somebot', maxDepth: 6, seeds });
  // Nothing hidden behind nofollow, nothing robots forbids.
  assert.ok([...full.pages.keys()].every((u) => !u.includes('/hidden/')), 'nothing behind nofollow');
  for (const [url] of full.pages) {
    const host = model.byName.get(new URL(url).hostname);
    assert.ok(host && robotsAllows(host.robots, AGENT, new URL(url).pathname + new URL(url).search), 'no page robots.txt forbids');
  }
  // 'agent' host h01: testcrawler may not fetch /nocrawl/, others may.
  const inNocrawl = (c: typeof full, h: string) => [...c.pages.keys()].some((u) => u.startsWith(`http://${h}/nocrawl/`));
  assert.equal(inNocrawl(full, 'h01.site.test'), false);
  assert.equal(inNocrawl(generic, 'h01.site.test'), true);
  // 'agent-only' host h05: the testcrawler group replaces '*', so /private/ is allowed for it.
  const inPrivate = (c: typeof full, h: string) => [...c.pages.keys()].some((u) => u.startsWith(`http://${h}/private/`));
  assert.equal(inPrivate(full, 'h05.site.test'), true);
  assert.equal(inPrivate(other, 'h05.site.test'), true);
  assert.equal(inNocrawl(other, 'h05.site.test'), false);
  assert.equal(inPrivate(generic, 'h00.site.test'), false);
  // 'private-allow' host h06: /private/press/ is allowed (longest match), /private/ is not.
  assert.ok([...generic.pages.keys()].some((u) => u.startsWith('http://h06.site.test/private/press/')), '/private/press/ allowed on h06');
  assert.ok([...generic.blockedByRobots.keys()].some((u) => /h06\.site\.test\/private\/[^p]/.test(u)), '/private/ blocked on h06');
  assert.ok(full.outOfScope.size > 0 && [...full.outOfScope].every((u) => !new URL(u).hostname.endsWith('.site.test')), 'only external hosts are out of scope');
  assert.equal(full.redirects.size, 20, 'every host\'s /old-* redirect is reached');
  assert.ok(full.notFound.size > 0, 'broken links are requested');

  // A redirect adds one hop by default; with cost 0 its target sits at the redirect's depth.
  const [redirectUrl, redirect] = [...full.redirects][0] as [string, { depth: number; location: string }];
  const hop1 = expectedCrawl(model, { userAgentToken: AGENT, maxDepth: 1, seeds: [redirectUrl] });
  assert.equal(hop1.pages.get(redirect.location)?.depth, 1);
  const hop0 = expectedCrawl(model, { userAgentToken: AGENT, maxDepth: 0, seeds: [redirectUrl], redirectHopCost: 0 });
  assert.equal(hop0.pages.get(redirect.location)?.depth, 0);
  assert.equal(expectedCrawl(model, { userAgentToken: AGENT, maxDepth: 0, seeds: [redirectUrl] }).pages.size, 0);
  // Seeds in any form canonicalise the same way.
  assert.equal(canonicalUrl('http://H00.Site.Test:80/archive?utm_source=x&sort=new&page=1#top'), 'http://h00.site.test/archive?page=1&sort=new');
});

// ---------------------------------------------------------------- against the running server

interface Crawled {
  pages: Map<string, string>;
  requests: number;
}

/** Extracts <a href>, <base href> and meta robots with plain regexes: independent of the model. */
function linksOf(html: string, pageUrl: string): { links: string[]; nofollow: boolean } {
  const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const base = /<base href="([^"]*)"/.exec(html)?.[1];
  const nofollow = /<meta name="robots" content="[^"]*nofollow/.test(html);
  const links: string[] = [];
  for (const m of html.matchAll(/<a href="([^"]*)"/g)) {
    const url = resolveLink(pageUrl, base === undefined ? undefined : decode(base), decode(m[1] as string));
    if (url) links.push(url);
  }
  return { links, nofollow };
}

/** A small polite-enough BFS crawler over HTTP, scoped to the model's hosts. */
async function crawl(port: number, model: SiteModel, seeds: string[], maxDepth: number): Promise<Crawled> {
  // One robots.txt request per host, shared by all concurrent visits to that host.
  const robots = new Map<string, Promise<Robots | null>>();
  const seen = new Set<string>();
  const pages = new Map<string, string>();
  let requests = 0;
  let frontier = seeds.map((s) => canonicalUrl(s) as string);
  for (const u of frontier) seen.add(u);
  for (let depth = 0; depth <= maxDepth && frontier.length > 0; depth++) {
    const next: string[] = [];
    const visit = async (url: string, d: number): Promise<void> => {
      const u = new URL(url);
      if (!model.byName.has(u.hostname)) return;
      if (!robots.has(u.hostname)) {
        robots.set(
          u.hostname,
          getFromTestWeb(port, u.hostname, '/robots.txt').then((r) => {
            requests++;
            return r.status === 200 ? robotsParser(`http://${u.hostname}/robots.txt`, r.body) : null;
          }),
        );
      }
      const rules = await robots.get(u.hostname);
      if (rules && !rules.isAllowed(url, AGENT)) return;
      const res = await getFromTestWeb(port, u.hostname, u.pathname + u.search);
      requests++;
      const push = (link: string, at: number) => {
        if (!seen.has(link)) {
          seen.add(link);
          if (at === d) void current.push(visit(link, d));
          else next.push(link);
        }
      };
      if (res.status === 301) {
        if (d + 1 <= maxDepth) push(resolveLink(url, undefined, String(res.headers.location)) as string, d + 1);
        return;
      }
      if (res.status !== 200) return;
      pages.set(url, res.body);
      const { links, nofollow } = linksOf(res.body, url);
      if (!nofollow && d + 1 <= maxDepth) for (const l of links) push(l, d + 1);
    };
    const current: Array<Promise<void>> = [];
    for (const url of frontier) current.push(visit(url, depth));
    for (let i = 0; i < current.length; i++) await current[i];
    frontier = next;
  }
  return { pages, requests };
}

test('crawling the running server finds exactly expectedPages, every page 200 and ~25 KB', async () => {
  const web = await startTestWeb({ hosts: 8, seed: 3, benchHosts: 2 });
  try {
    const seeds = [web.url('h00.site.test', '/'), web.url('h04.site.test', '/')];
    const maxDepth = 3;
    const expected = expectedPages(web.model, { userAgentToken: AGENT, maxDepth, seeds });
    const crawled = await crawl(web.port, web.model, seeds, maxDepth);
    assert.deepEqual([...crawled.pages.keys()].sort(), [...expected].sort());
    assert.ok(expected.size > 100, `expected ${expected.size} pages`);

    for (const [url, body] of crawled.pages) {
      const size = Buffer.byteLength(body);
      assert.ok(size >= 20_000 && size <= 30_000, `${url} is ${size} bytes`);
      assert.match(body, /^<!DOCTYPE html>\n<html lang="(en|de|fr)">/);
      // The markers live only inside <script> and <style>.
      const outside = body.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<style[\s\S]*?<\/style>/g, '');
      assert.ok(!outside.includes(SCRIPT_MARKER) && !outside.includes(STYLE_MARKER), 'markers only inside script/style');
    }

    // The log has every request (robots.txt and errors too), with times.
    const log = web.requestLog();
    assert.equal(log.length, crawled.requests);
    assert.ok(log.every((r) => r.end >= r.start && r.start > 1.6e12 && r.status > 0 && r.userAgent === 'testcrawler/1.0'), 'log records are complete');
    assert.ok(log.some((r) => r.path === '/robots.txt' && r.status === 200), 'robots.txt requests are logged');
    assert.ok(log.some((r) => r.host === 'h03.site.test' && r.path === '/robots.txt' && r.status === 404), 'the host without robots.txt answers 404');
    assert.ok(log.some((r) => r.status === 301) && log.some((r) => r.status === 404), 'redirects and 404s are logged');

    const remote = await getFromTestWeb(web.port, 'anything', '/__testweb/log');
    assert.equal((JSON.parse(remote.body) as unknown[]).length, log.length, 'control requests are not logged');
    web.clearLog();
    assert.equal(web.requestLog().length, 0);
  } finally {
    await web.close();
  }
});

test('server details: Host with port, unknown host, content types, conditional GET, bench hosts', async () => {
  const web = await startTestWeb({ hosts: 4, seed: 1, benchHosts: 2, responseDelayMs: 5 });
  try {
    const home = await getFromTestWeb(web.port, `h00.site.test:${web.port}`, '/');
    assert.equal(home.status, 200);
    assert.equal(home.headers['content-type'], 'text/html; charset=utf-8');
    const robots = await getFromTestWeb(web.port, 'h00.site.test', '/robots.txt');
    assert.equal(robots.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(robots.body, web.model.byName.get('h00.site.test')?.robots.text);
    assert.equal((await getFromTestWeb(web.port, 'nope.site.test', '/')).status, 421);
    const again = await getFromTestWeb(web.port, 'h00.site.test', '/', { 'if-none-match': String(home.headers.etag) });
    assert.equal(again.status, 304);
    const tracked = await getFromTestWeb(web.port, 'h00.site.test', '/?utm_source=x');
    assert.equal(tracked.body, home.body, 'tracking parameters are ignored');
    const bench = await getFromTestWeb(web.port, 'b001.bench.test', '/robots.txt');
    assert.equal(bench.body, 'User-agent: *\nAllow: /\n');
    const log = web.requestLog();
    assert.equal(log.length, 6);
    assert.ok(log.every((r) => r.end - r.start >= 4), 'responseDelayMs is inside start..end');
    assert.deepEqual(log.map((r) => r.host), ['h00.site.test', 'h00.site.test', 'nope.site.test', 'h00.site.test', 'h00.site.test', 'b001.bench.test']);
  } finally {
    await web.close();
  }
});

test('runTestWebCli prints its address and stops on abort', async () => {
  const lines: string[] = [];
  const ac = new AbortController();
  const running = runTestWebCli({ hosts: 3, port: 0, seed: 1, out: (l) => lines.push(l), signal: ac.signal });
  while (lines.length === 0) await new Promise((r) => setTimeout(r, 5));
  assert.match(lines[0] as string, /^testweb listening on 127\.0\.0\.1:\d+ \(3 hosts: h00\.site\.test \.\. h02\.site\.test\)$/);
  ac.abort();
  await running;
});

test('runTestWebCli with the politeness and hostile hosts says so and prints the --resolve rules to crawl them', async () => {
  const lines: string[] = [];
  const ac = new AbortController();
  const running = runTestWebCli({ hosts: 2, port: 0, seed: 1, politeness: true, hostile: true, out: (l) => lines.push(l), signal: ac.signal });
  while (lines.length < 2) await new Promise((r) => setTimeout(r, 5));
  assert.match(lines[0] as string, /^testweb listening on 127\.0\.0\.1:(\d+) \(2 hosts: .*, 55 politeness hosts, hostile\.test\)$/);
  const port = /:(\d+) /.exec(lines[0] as string)![1];
  assert.match(lines[1] as string, new RegExp(`--resolve \\*\\.sharedip\\.test=127\\.0\\.0\\.2:${port}`));
  assert.match(lines[1] as string, new RegExp(`--resolve \\*\\.hostile\\.test=127\\.0\\.0\\.1:${port}`));
  ac.abort();
  await running;
});

test('inFlight() shows a request from its arrival until its response ends', async () => {
  const web = await startTestWeb({ hosts: 1, seed: 1, responseDelayMs: 300 });
  try {
    const host = web.model.siteHostNames[0]!;
    const pending = getFromTestWeb(web.port, host, '/');
    let seen: Array<{ host: string; path: string }> = [];
    for (let i = 0; i < 50 && seen.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
      seen = web.inFlight();
    }
    assert.deepEqual(seen.map((r) => [r.host, r.path]), [[host, '/']]);
    await pending;
    assert.deepEqual(web.inFlight(), []);
    assert.equal(web.requestLog().length, 1);
  } finally {
    await web.close();
  }
});

test('prerender serves the same pages, ETags and touched revisions as rendering on request', async () => {
  const opts = { hosts: 2, seed: 5, benchHosts: 2, benchPagesPerHost: 30 };
  const [lazy, eager] = await Promise.all([startTestWeb(opts), startTestWeb({ ...opts, prerender: true })]);
  try {
    const paths = [...htmlPages(lazy.model, 'b001.bench.test').map((p) => ['b001.bench.test', p.path]), ...htmlPages(lazy.model, 'h01.site.test').slice(0, 10).map((p) => ['h01.site.test', p.path])];
    assert.ok(paths.length >= 35);
    for (const web of [lazy, eager]) web.touch([web.url('b001.bench.test', '/')]);
    for (const [host, path] of paths) {
      const a = await getFromTestWeb(lazy.port, host!, path!);
      const b = await getFromTestWeb(eager.port, host!, path!);
      assert.equal(b.status, 200, `${host}${path}`);
      assert.equal(b.body, a.body, `${host}${path}`);
      assert.equal(b.headers.etag, a.headers.etag, `${host}${path}`);
    }
    assert.match((await getFromTestWeb(eager.port, 'b001.bench.test', '/')).body, /updated \(revision 1\)/);
  } finally {
    await Promise.all([lazy.close(), eager.close()]);
  }
});
