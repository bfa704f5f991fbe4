import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { REFUSED_RECHECK_MS } from '../../stages/shared/politeness/failure-policy.js';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import {
  ROBOTS_MAX_BYTES,
  ROBOTS_MAX_LINE_BYTES,
  canonicalizeForMatch,
  compileRobots,
  isValidProductToken,
  productToken,
  robotsMatchPath,
  robotsTokenOf,
  type RobotsRecord,
} from '../../stages/shared/robots/robots-rules.js';
import {
  DEFAULT_ROBOTS_TTL,
  decodeRobotsBody,
  recordFromResponse,
  robotsTtlMs,
  withFailureHistory,
} from '../../stages/shared/robots/robots-fetch-policy.js';

const AGENT = 'jetstream-crawler';
const rules = (body: string): RobotsRecord => ({ kind: 'rules', body, fetchedAt: 0, status: 200, reason: 'http 200: rules' });
const verdict = (body: string, url: string, agent = AGENT) => compileRobots(rules(body), agent).verdict(url);

describe('productToken', () => {
  // Google's crawlers are matched by the product after "compatible;", whatever comes before
  // it; their user agent strings as Google Search Central's overview of Google crawlers lists them
  const table: Array<[string, string]> = [
    ['jetstream-crawler/0.1 (+https://example.org/crawler)', 'jetstream-crawler'],
    ['Mozilla/5.0 (compatible; TestCrawler/1.0; +http://x)', 'testcrawler'],
    ['Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot)', 'examplebot'],
    ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'googlebot'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/120.0.0.0 Safari/537.36', 'googlebot'],
    ['Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'googlebot'],
    ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', 'bingbot'],
    ['Mozilla/5.0 (Compatible ; Example_Bot-News/3)', 'example_bot-news'],
    // no product after "compatible;": the first product
    ['Mozilla/5.0 (compatible; +http://example.org/bot)', 'mozilla'],
    ['Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0', 'mozilla'],
    // "compatible" outside a comment does not name the crawler
    ['crawler/1.0 compatible; other/2', 'crawler'],
    ['JetStream-Crawler', 'jetstream-crawler'],
    ['Foo_Bar2/1', 'foo_bar'],
  ];
  for (const [ua, token] of table) test(`${ua} -> ${token}`, () => assert.equal(productToken(ua), token));
  for (const bad of ['', ' jetstream-crawler', '2bot', '/x', '(compatible; 2bot/1)']) {
    test(`${JSON.stringify(bad)} throws`, () => assert.throws(() => productToken(bad), /product token/));
  }
  test('--robots-token overrides the user agent\'s token', () => {
    assert.equal(robotsTokenOf({ userAgent: 'Mozilla/5.0 (compatible; ExampleBot/1.0)' }), 'examplebot');
    assert.equal(robotsTokenOf({ userAgent: 'Mozilla/5.0 (compatible; ExampleBot/1.0)', robotsToken: 'Other_Bot' }), 'other_bot');
    assert.equal(robotsTokenOf({ userAgent: '2bot', robotsToken: 'named' }), 'named', 'a user agent without a token is fine when the token is given');
  });
});

describe('rule decisions', () => {
  interface Row {
    name: string;
    robots: string;
    url: string;
    allowed: boolean;
    matchedRule?: string | null;
    agent?: string;
  }
  const table: Row[] = [
    { name: 'no rules', robots: '', url: 'http://h/x', allowed: true, matchedRule: null },
    { name: 'disallow prefix', robots: 'User-agent: *\nDisallow: /private/', url: 'http://h/private/a', allowed: false, matchedRule: 'Disallow: /private/' },
    { name: 'prefix not matched', robots: 'User-agent: *\nDisallow: /private/', url: 'http://h/private', allowed: true, matchedRule: null },
    { name: 'longer Allow wins', robots: 'User-agent: *\nDisallow: /a/\nAllow: /a/b/', url: 'http://h/a/b/c', allowed: true, matchedRule: 'Allow: /a/b/' },
    { name: 'longer Disallow wins', robots: 'User-agent: *\nAllow: /a/\nDisallow: /a/b/', url: 'http://h/a/b/c', allowed: false, matchedRule: 'Disallow: /a/b/' },
    { name: 'Allow wins a tie', robots: 'User-agent: *\nDisallow: /a\nAllow: /a', url: 'http://h/a', allowed: true, matchedRule: 'Allow: /a' },
    { name: 'order does not matter', robots: 'User-agent: *\nAllow: /a\nDisallow: /a', url: 'http://h/a', allowed: true, matchedRule: 'Allow: /a' },
    { name: 'empty Disallow allows', robots: 'User-agent: *\nDisallow:', url: 'http://h/x', allowed: true, matchedRule: null },
    { name: 'wildcard', robots: 'User-agent: *\nDisallow: /*.pdf', url: 'http://h/docs/a.pdf', allowed: false, matchedRule: 'Disallow: /*.pdf' },
    { name: '$ anchors the end', robots: 'User-agent: *\nDisallow: /*.pdf$', url: 'http://h/a.pdf?x=1', allowed: true },
    { name: '$ at end matches', robots: 'User-agent: *\nDisallow: /*.pdf$', url: 'http://h/a.pdf', allowed: false },
    { name: 'query is matched', robots: 'User-agent: *\nDisallow: /*?sessionid=', url: 'http://h/p?sessionid=1', allowed: false },
    { name: 'fragment is ignored', robots: 'User-agent: *\nDisallow: /a$', url: 'http://h/a#frag', allowed: false },
    { name: 'path is case-sensitive', robots: 'User-agent: *\nDisallow: /Private', url: 'http://h/private', allowed: true },
    { name: 'comment removed', robots: 'User-agent: * # all\nDisallow: /a # not /b\n# Disallow: /', url: 'http://h/b', allowed: true },
    { name: 'comment kept out of matchedRule', robots: 'User-agent: *\nDisallow: /a # x', url: 'http://h/a', allowed: false, matchedRule: 'Disallow: /a' },
    { name: 'keys are case-insensitive', robots: 'USER-AGENT: *\nDISALLOW: /a', url: 'http://h/a', allowed: false },
    { name: 'typo key (Google)', robots: 'User-agent: *\nDissallow: /a', url: 'http://h/a', allowed: false, matchedRule: 'Disallow: /a' },
    { name: 'missing colon (Google)', robots: 'User-agent *\nDisallow /a', url: 'http://h/a', allowed: false },
    { name: 'missing colon, 3 words: ignored', robots: 'User-agent: *\nDisallow /a /b', url: 'http://h/a', allowed: true },
    { name: 'rule before any User-agent ignored', robots: 'Disallow: /\nUser-agent: *\nDisallow: /x', url: 'http://h/a', allowed: true },
    // agent-specific group vs *
    { name: 'specific group replaces *', robots: 'User-agent: *\nDisallow: /\n\nUser-agent: jetstream-crawler\nDisallow: /x', url: 'http://h/a', allowed: true },
    { name: 'specific group applies', robots: 'User-agent: *\nDisallow: /\n\nUser-agent: jetstream-crawler\nDisallow: /x', url: 'http://h/x/1', allowed: false, matchedRule: 'Disallow: /x' },
    { name: '* applies to other agents', robots: 'User-agent: *\nDisallow: /\n\nUser-agent: jetstream-crawler\nDisallow: /x', url: 'http://h/a', allowed: false, agent: 'otherbot' },
    { name: 'agent value is case-insensitive', robots: 'User-agent: *\nDisallow: /\nUser-agent: JetStream-Crawler\nAllow: /', url: 'http://h/a', allowed: true },
    { name: 'agent value version stripped', robots: 'User-agent: *\nDisallow: /\nUser-agent: jetstream-crawler/2.0\nAllow: /', url: 'http://h/a', allowed: true },
    { name: 'agent value: first word (Google)', robots: 'User-agent: *\nDisallow: /\nUser-agent: jetstream-crawler and friends\nAllow: /', url: 'http://h/a', allowed: true },
    { name: 'prefix of our token is not us', robots: 'User-agent: *\nDisallow: /\nUser-agent: jetstream\nAllow: /', url: 'http://h/a', allowed: false },
    { name: 'longer token is not us', robots: 'User-agent: *\nDisallow: /\nUser-agent: jetstream-crawler-x\nAllow: /', url: 'http://h/a', allowed: false },
    { name: 'groups for the same agent merge', robots: 'User-agent: jetstream-crawler\nDisallow: /a\n\nUser-agent: other\nDisallow: /\n\nUser-agent: jetstream-crawler\nDisallow: /b', url: 'http://h/b', allowed: false, matchedRule: 'Disallow: /b' },
    { name: 'several agents share a group', robots: 'User-agent: other\nUser-agent: jetstream-crawler\nDisallow: /a', url: 'http://h/a', allowed: false },
    { name: 'Sitemap does not end a User-agent run', robots: 'User-agent: jetstream-crawler\nSitemap: http://h/s.xml\nUser-agent: other\nDisallow: /a', url: 'http://h/a', allowed: false },
    { name: 'unknown line does not end a User-agent run', robots: 'User-agent: jetstream-crawler\nX-Foo: bar\nUser-agent: other\nDisallow: /a', url: 'http://h/a', allowed: false },
    // percent-encoding: both sides in the same form
    { name: 'hex case of escapes ignored', robots: 'User-agent: *\nDisallow: /a%7eb', url: 'http://h/a%7Eb', allowed: false },
    { name: 'escape not decoded (%62 != b)', robots: 'User-agent: *\nDisallow: /%62', url: 'http://h/b', allowed: true },
    { name: 'raw UTF-8 pattern vs encoded URL', robots: 'User-agent: *\nDisallow: /café', url: 'http://h/caf%C3%A9', allowed: false, matchedRule: 'Disallow: /café' },
    { name: 'encoded pattern vs raw UTF-8 URL', robots: 'User-agent: *\nDisallow: /caf%c3%a9', url: 'http://h/café', allowed: false },
    { name: "'|' in pattern and URL (robots-parser encodes one side only)", robots: 'User-agent: *\nDisallow: /a|b', url: 'http://h/a|b', allowed: false },
    { name: "'|' raw vs %7C", robots: 'User-agent: *\nDisallow: /a|b', url: 'http://h/a%7Cb', allowed: false },
    { name: "quote in query (WHATWG encodes ' in queries)", robots: "User-agent: *\nDisallow: /s?q='x'", url: "http://h/s?q='x'", allowed: false },
    { name: 'space in pattern', robots: 'User-agent: *\nDisallow: /a b', url: 'http://h/a%20b', allowed: false },
    { name: '%25 stays a percent sign', robots: 'User-agent: *\nDisallow: /100%25', url: 'http://h/100%25', allowed: false },
    { name: 'lone % in pattern', robots: 'User-agent: *\nDisallow: /100%', url: 'http://h/100%', allowed: false },
    // robots.txt itself, origins, bad input
    { name: '/robots.txt always allowed', robots: 'User-agent: *\nDisallow: /', url: 'http://h/robots.txt', allowed: true, matchedRule: null },
    { name: 'other hosts/ports/schemes answer too', robots: 'User-agent: *\nDisallow: /x', url: 'https://h01.site.test:8443/x', allowed: false },
    { name: 'userinfo ignored', robots: 'User-agent: *\nDisallow: /x', url: 'http://u:p@h01.site.test/x', allowed: false },
    { name: 'not a URL: fail closed', robots: '', url: '/relative/path', allowed: false, matchedRule: null },
    { name: 'not http(s): fail closed', robots: '', url: 'ftp://h/x', allowed: false },
  ];
  for (const row of table) {
    test(row.name, () => {
      const v = verdict(row.robots, row.url, row.agent);
      assert.equal(v.allowed, row.allowed);
      if (row.matchedRule !== undefined) assert.equal(v.matchedRule, row.matchedRule);
    });
  }

  test('a record for http://h01.site.test/robots.txt answers every URL of that host (never undefined)', () => {
    const c = compileRobots(rules('User-agent: *\nDisallow: /private/'), AGENT);
    for (const origin of ['http://h01.site.test', 'http://h01.site.test:80', 'http://H01.SITE.TEST', 'http://h01.site.test:8080', 'https://h01.site.test']) {
      assert.deepEqual(c.verdict(`${origin}/private/a`), { allowed: false, crawlDelayMs: null, matchedRule: 'Disallow: /private/' });
      assert.deepEqual(c.verdict(`${origin}/public`), { allowed: true, crawlDelayMs: null, matchedRule: null });
    }
  });

  test('the empty agent token falls back to *', () => {
    assert.equal(verdict('User-agent: *\nDisallow: /', 'http://h/a', '').allowed, false);
  });
});

describe('allow_all and disallow_all', () => {
  const allowAll: RobotsRecord = { kind: 'allow_all', fetchedAt: 0, status: 404, reason: 'http 404: no rules' };
  const disallowAll: RobotsRecord = { kind: 'disallow_all', fetchedAt: 0, status: 503, reason: 'http 503: disallow all until a fetch succeeds' };
  const table: Array<[RobotsRecord, string, boolean]> = [
    [allowAll, 'http://h/', true],
    [allowAll, 'http://h/anything?x=1', true],
    [allowAll, 'not a url', false],
    [disallowAll, 'http://h/', false],
    [disallowAll, 'http://h/page', false],
    [disallowAll, 'http://h/robots.txt', true],
    [disallowAll, 'http://h/robots.txt?x', false],
  ];
  for (const [record, url, allowed] of table) {
    test(`${record.kind} ${url} -> ${allowed}`, () => {
      const c = compileRobots(record, AGENT);
      assert.deepEqual(c.verdict(url), { allowed, crawlDelayMs: null, matchedRule: null });
      assert.equal(c.crawlDelayMs, null);
      assert.deepEqual(c.sitemaps, []);
    });
  }
  test('a rules record without body allows everything', () => {
    const c = compileRobots({ kind: 'rules', fetchedAt: 0, status: 200, reason: '' }, AGENT);
    assert.equal(c.verdict('http://h/x').allowed, true);
  });
});

describe('crawl-delay', () => {
  const table: Array<[string, number | null]> = [
    ['5', 5000],
    ['0.5', 500],
    ['1.2345', 1235],
    ['.25', 250],
    ['2.', 2000],
    ['0', 0],
    ['', null],
    ['abc', null],
    ['-1', null],
    ['1e3', null],
    ['0x10', null],
    ['Infinity', null],
    ['5 # seconds', 5000],
  ];
  for (const [value, ms] of table) {
    test(`Crawl-delay: ${JSON.stringify(value)} -> ${ms}`, () => {
      const c = compileRobots(rules(`User-agent: *\nCrawl-delay: ${value}\nDisallow: /x`), AGENT);
      assert.equal(c.crawlDelayMs, ms);
      assert.equal(c.verdict('http://h/a').crawlDelayMs, ms);
      assert.equal(c.verdict('http://h/x').allowed, false, 'the rules after Crawl-delay stay in the group');
    });
  }
  test("the agent's own group wins, even without a delay", () => {
    const body = 'User-agent: *\nCrawl-delay: 10\n\nUser-agent: jetstream-crawler\nDisallow: /x';
    assert.equal(compileRobots(rules(body), AGENT).crawlDelayMs, null);
    assert.equal(compileRobots(rules(body), 'otherbot').crawlDelayMs, 10_000);
  });
  test("the agent's group delay", () => {
    const body = 'User-agent: *\nCrawl-delay: 10\n\nUser-agent: JetStream-Crawler\nCrawl-delay: 1.5';
    assert.equal(compileRobots(rules(body), AGENT).crawlDelayMs, 1500);
  });
  test('* delay applies when there is no group for the agent', () => {
    assert.equal(compileRobots(rules('User-agent: other\nCrawl-delay: 3\nUser-agent: *\nCrawl-delay: 2'), AGENT).crawlDelayMs, 2000);
  });
});

describe('sitemaps, BOM, line endings, caps', () => {
  test('Sitemap lines are collected in order, anywhere in the file', () => {
    const c = compileRobots(rules('Sitemap: http://h/a.xml\nUser-agent: *\nDisallow: /x\nsite-map: http://h/b.xml # c\nSitemap:'), AGENT);
    assert.deepEqual(c.sitemaps, ['http://h/a.xml', 'http://h/b.xml']);
  });
  test('a leading BOM in the text is skipped', () => {
    assert.equal(verdict('\uFEFFUser-agent: *\nDisallow: /', 'http://h/a').allowed, false);
  });
  for (const [name, eol] of [['LF', '\n'], ['CRLF', '\r\n'], ['CR', '\r']] as const) {
    test(`${name} line endings`, () => {
      const body = ['User-agent: *', 'Disallow: /a', 'Allow: /a/b'].join(eol);
      assert.equal(verdict(body, 'http://h/a/c').matchedRule, 'Disallow: /a');
      assert.equal(verdict(body, 'http://h/a/b').matchedRule, 'Allow: /a/b');
    });
  }
  test(`lines are cut at ${ROBOTS_MAX_LINE_BYTES} bytes`, () => {
    const pattern = '/' + 'a'.repeat(ROBOTS_MAX_LINE_BYTES); // 'Disallow: ' + pattern is longer than the cap
    const kept = pattern.slice(0, ROBOTS_MAX_LINE_BYTES - 'Disallow: '.length);
    assert.equal(verdict(`User-agent: *\nDisallow: ${pattern}`, `http://h${kept}b`).allowed, false);
    assert.equal(verdict(`User-agent: *\nDisallow: ${pattern}`, `http://h${kept.slice(0, -1)}b`).allowed, true);
  });
  test(`compileRobots reads at most ROBOTS_MAX_BYTES (${ROBOTS_MAX_BYTES}) of a body`, () => {
    const filler = '# ' + 'x'.repeat(98) + '\n'; // 101 bytes
    const head = 'User-agent: *\nDisallow: /before\n';
    const padding = filler.repeat(Math.floor((ROBOTS_MAX_BYTES - head.length) / filler.length));
    const room = ROBOTS_MAX_BYTES - head.length - padding.length;
    assert.ok(room > 4 && room <= filler.length, `room ${room}`);
    // 'Disallow: /afterwards' crosses the cap: neither it nor a shorter '/aft...' is read
    const body = head + padding + 'x'.repeat(room - 4) + '\nDisallow: /afterwards\n';
    assert.ok(Buffer.byteLength(body) > ROBOTS_MAX_BYTES);
    assert.equal(verdict(body, 'http://h/before').allowed, false);
    assert.equal(verdict(body, 'http://h/afterwards').allowed, true);
    assert.equal(verdict(body, 'http://h/aft').allowed, true);
    assert.equal(verdict(head + 'Disallow: /afterwards\n' + padding, 'http://h/afterwards').allowed, false);
  });
});

describe('recordFromResponse', () => {
  const NOW = 1_700_000_000_000;
  interface Row {
    res: Parameters<typeof recordFromResponse>[0];
    kind: RobotsRecord['kind'];
    status: number | null;
    reason: string | RegExp;
    body?: string;
  }
  const table: Row[] = [
    { res: { status: 200, body: 'User-agent: *\nDisallow: /x\n' }, kind: 'rules', status: 200, reason: 'http 200: rules', body: 'User-agent: *\nDisallow: /x\n' },
    { res: { status: 200, body: new TextEncoder().encode('Disallow: /é') }, kind: 'rules', status: 200, reason: 'http 200: rules', body: 'Disallow: /é' },
    { res: { status: 203, body: '' }, kind: 'rules', status: 203, reason: 'http 203: rules', body: '' },
    { res: { status: 204, body: new Uint8Array(0) }, kind: 'rules', status: 204, reason: 'http 204: rules', body: '' },
    { res: { status: 301, body: '' }, kind: 'allow_all', status: 301, reason: /^http 301: redirect not followed/ },
    { res: { status: 400, body: 'x' }, kind: 'allow_all', status: 400, reason: 'http 400: no rules' },
    { res: { status: 401, body: '' }, kind: 'allow_all', status: 401, reason: 'http 401: no rules' },
    { res: { status: 403, body: '' }, kind: 'allow_all', status: 403, reason: 'http 403: no rules' },
    { res: { status: 404, body: '<html>' }, kind: 'allow_all', status: 404, reason: 'http 404: no rules' },
    { res: { status: 410, body: '' }, kind: 'allow_all', status: 410, reason: 'http 410: no rules' },
    { res: { status: 429, body: '' }, kind: 'disallow_all', status: 429, reason: 'http 429: disallow all until a fetch succeeds' },
    { res: { status: 500, body: '' }, kind: 'disallow_all', status: 500, reason: 'http 500: disallow all until a fetch succeeds' },
    { res: { status: 503, body: 'User-agent: *\nAllow: /' }, kind: 'disallow_all', status: 503, reason: 'http 503: disallow all until a fetch succeeds' },
    { res: { status: 599, body: '' }, kind: 'disallow_all', status: 599, reason: 'http 599: disallow all until a fetch succeeds' },
    { res: { status: 100, body: '' }, kind: 'disallow_all', status: 100, reason: /^http 100: unexpected status/ },
    { res: { status: 0, body: '' }, kind: 'disallow_all', status: 0, reason: /^http 0: unexpected status/ },
    { res: { status: 600, body: '' }, kind: 'disallow_all', status: 600, reason: /^http 600: unexpected status/ },
    { res: { error: 'connect ECONNREFUSED' }, kind: 'disallow_all', status: null, reason: 'network error: connect ECONNREFUSED' },
    { res: { error: 'timeout after 10000 ms' }, kind: 'disallow_all', status: null, reason: 'network error: timeout after 10000 ms' },
  ];
  for (const row of table) {
    const label = 'error' in row.res ? `error ${row.res.error}` : `status ${row.res.status}`;
    test(`${label} -> ${row.kind}`, () => {
      const r = recordFromResponse(row.res, NOW);
      assert.equal(r.kind, row.kind);
      assert.equal(r.status, row.status);
      assert.equal(r.fetchedAt, NOW);
      if (typeof row.reason === 'string') assert.equal(r.reason, row.reason);
      else assert.match(r.reason, row.reason);
      assert.equal(r.body, row.kind === 'rules' ? row.body : undefined);
      assert.deepEqual(JSON.parse(JSON.stringify(r)), r, 'records survive a JSON round trip (robots KV bucket)');
    });
  }

  test('the body is cut to the first 500 KiB, at a line end', () => {
    const line = 'Disallow: /' + 'p'.repeat(88) + '\n'; // 100 bytes
    const lines = Math.ceil((ROBOTS_MAX_BYTES * 1.2) / line.length);
    const body = 'User-agent: *\n' + line.repeat(lines);
    const r = recordFromResponse({ status: 200, body: new TextEncoder().encode(body) }, NOW);
    const bytes = Buffer.byteLength(r.body!);
    assert.ok(bytes <= ROBOTS_MAX_BYTES && bytes > ROBOTS_MAX_BYTES - line.length, `kept ${bytes} bytes`);
    assert.ok(r.body!.endsWith('\n'), 'no half line kept');
    assert.match(r.reason, /^http 200: rules \(cut to the first 512000 bytes\)$/);
  });
  test('a rule past 500 KiB is not read; one before it is', () => {
    const padding = ('#' + ' '.repeat(99) + '\n').repeat(Math.ceil(ROBOTS_MAX_BYTES / 101));
    const r = recordFromResponse({ status: 200, body: 'User-agent: *\nDisallow: /early\n' + padding + 'Disallow: /late\n' }, NOW);
    const c = compileRobots(r, AGENT);
    assert.equal(c.verdict('http://h/early').allowed, false);
    assert.equal(c.verdict('http://h/late').allowed, true);
  });
  test('a single line over 500 KiB is cut at the byte limit', () => {
    const r = recordFromResponse({ status: 200, body: 'x'.repeat(ROBOTS_MAX_BYTES + 10) }, NOW);
    assert.equal(r.body!.length, ROBOTS_MAX_BYTES);
  });
  test('a body of exactly 500 KiB is kept whole', () => {
    const r = recordFromResponse({ status: 200, body: 'y'.repeat(ROBOTS_MAX_BYTES) }, NOW);
    assert.equal(r.body!.length, ROBOTS_MAX_BYTES);
    assert.equal(r.reason, 'http 200: rules');
  });
  test('UTF-8 BOM stripped (bytes and string); invalid UTF-8 replaced', () => {
    const bom = [0xef, 0xbb, 0xbf];
    const ascii = [...new TextEncoder().encode('User-agent: *')];
    assert.equal(decodeRobotsBody(new Uint8Array([...bom, ...ascii])).text, 'User-agent: *');
    assert.equal(decodeRobotsBody('\uFEFFUser-agent: *').text, 'User-agent: *');
    assert.equal(decodeRobotsBody(new Uint8Array([0xff, ...ascii])).text, '\uFFFDUser-agent: *');
  });
});

describe('robotsTtlMs', () => {
  const rec = (kind: RobotsRecord['kind']): RobotsRecord => ({ kind, fetchedAt: 0, status: null, reason: '' });
  const H24 = 24 * 60 * 60 * 1000;
  const table: Array<[RobotsRecord['kind'], Parameters<typeof robotsTtlMs>[1], number]> = [
    ['rules', undefined, H24],
    ['allow_all', undefined, H24],
    ['disallow_all', undefined, 60_000],
    ['rules', { maxTtlMs: 3_600_000, errorRetryMs: 30_000 }, 3_600_000],
    ['allow_all', { maxTtlMs: 3_600_000, errorRetryMs: 30_000 }, 3_600_000],
    ['disallow_all', { maxTtlMs: 3_600_000, errorRetryMs: 30_000 }, 30_000],
    ['disallow_all', { maxTtlMs: 10_000, errorRetryMs: 30_000 }, 10_000],
    ['disallow_all', { errorRetryMs: 5_000 }, 5_000],
    ['rules', { maxTtlMs: -1 }, 0],
  ];
  for (const [kind, opts, ttl] of table) {
    test(`${kind} ${JSON.stringify(opts)} -> ${ttl}`, () => assert.equal(robotsTtlMs(rec(kind), opts), ttl));
  }
  test('defaults', () => assert.deepEqual({ ...DEFAULT_ROBOTS_TTL }, { maxTtlMs: H24, errorRetryMs: 60_000 }));
  test('each status class gets the TTL of its kind', () => {
    assert.equal(robotsTtlMs(recordFromResponse({ status: 200, body: '' }, 0)), H24);
    assert.equal(robotsTtlMs(recordFromResponse({ status: 404, body: '' }, 0)), H24);
    assert.equal(robotsTtlMs(recordFromResponse({ status: 503, body: '' }, 0)), 60_000);
    assert.equal(robotsTtlMs(recordFromResponse({ error: 'x' }, 0)), 60_000);
    // every address refused: asked again a few seconds later, not after the retry interval
    assert.equal(robotsTtlMs(recordFromResponse({ error: 'x', connectionRefused: 'connection_refused: x' }, 0)), REFUSED_RECHECK_MS);
  });
});

describe('percent-encoding properties', () => {
  // characters a path may hold written raw both in robots.txt and in a URL
  const chars = [...'abcXYZ019-_.~!()+,;=:@&\'"<>[]^`{}| ', 'é', 'ツ', '😀', '%41', '%c3%a9', '%25'];
  const segment = fc.array(fc.constantFrom(...chars), { minLength: 1, maxLength: 12 }).map((a) => a.join(''));

  test('canonicalizeForMatch is idempotent', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => canonicalizeForMatch(canonicalizeForMatch(s)) === canonicalizeForMatch(s)));
  });
  test('a path written raw in Disallow matches the same path in a URL', () => {
    fc.assert(
      fc.property(segment, (seg) => {
        // a leading 'x' keeps '.'/'..' segments (which URL parsing removes) out
        const body = `User-agent: *\nDisallow: /x${seg.trim()}$`;
        const url = `http://h/x${seg.trim()}`;
        return verdict(body, url).allowed === false;
      }),
      { numRuns: 500 },
    );
  });
  test('the WHATWG form of a URL path as the pattern matches the URL', () => {
    fc.assert(
      fc.property(segment, (seg) => {
        const u = new URL(`http://h/${seg}`);
        return verdict(`User-agent: *\nDisallow: ${u.pathname}$`, u.href).allowed === false;
      }),
      { numRuns: 500 },
    );
  });
});

// ---------------------------------------------------------------------------------------
// google-robotstxt-aux-cases.json: the parts that apply to this module

const AUX_PATH = path.resolve(process.cwd(), 'test/fixtures/conformance/google-robotstxt-aux-cases.json');

interface AuxCases {
  valid_user_agent: Array<{ user_agent: string | null; expected_valid: boolean; source_line: number }>;
  parse_stats: Array<{ test_name: string; robots_txt_hex: string; expected: { valid_directives: number; unknown_directives?: number; last_line_seen?: number }; source_line: number }>;
  sitemap: Array<{ robots_txt: string; expected_sitemaps: string[]; source_line: number }>;
  path_params_query: Array<{ input: string; expected: string }>;
  escape_pattern: Array<{ input: string; expected: string }>;
}

function loadAux(): AuxCases {
  if (!fs.existsSync(AUX_PATH)) {
    throw new Error(`robots.txt aux conformance data not found at ${AUX_PATH}; run the tests from the repository root (cwd ${process.cwd()})`);
  }
  return JSON.parse(fs.readFileSync(AUX_PATH, 'utf8')) as AuxCases;
}
let aux: AuxCases | null = null;
let auxError: unknown = null;
try {
  aux = loadAux();
} catch (err) {
  auxError = err;
}

describe('google-robotstxt-aux-cases.json', () => {
  test('aux data is present', () => {
    if (auxError) throw auxError;
    assert.ok(aux);
  });
  if (!aux) return;

  for (const c of aux.valid_user_agent) {
    test(`valid product token ${JSON.stringify(c.user_agent)} -> ${c.expected_valid} (line ${c.source_line})`, () => {
      assert.equal(isValidProductToken(c.user_agent), c.expected_valid);
    });
  }

  // Line endings: 'User-Agent: foo / Allow: /some/path / User-Agent: bar / / / Disallow: /' in
  // LF, CRLF, CR, mixed, no final newline: 4 directives, two groups.
  for (const c of aux.parse_stats.filter((x) => x.test_name === 'ID_LinesNumbersAreCountedCorrectly')) {
    test(`line endings (line ${c.source_line}): two groups, four directives`, () => {
      const r = compileRobots(recordFromResponse({ status: 200, body: Buffer.from(c.robots_txt_hex, 'hex') }, 0), 'foo');
      assert.equal(r.verdict('http://h/some/path').matchedRule, 'Allow: /some/path');
      assert.deepEqual(r.verdict('http://h/other'), { allowed: true, crawlDelayMs: null, matchedRule: null });
      const bar = compileRobots(recordFromResponse({ status: 200, body: Buffer.from(c.robots_txt_hex, 'hex') }, 0), 'bar');
      assert.equal(bar.verdict('http://h/some/path').matchedRule, 'Disallow: /');
    });
  }

  // BOM: 'User-Agent: foo / Allow: /AnyValue' with a full or partial BOM first (both lines
  // read: the Allow is the matched rule) or a broken/misplaced one (one line is unknown, so
  // the Allow belongs to no group for foo and nothing matches).
  for (const c of aux.parse_stats.filter((x) => x.test_name === 'ID_UTF8ByteOrderMarkIsSkipped')) {
    const bothRead = c.expected.valid_directives === 2;
    test(`BOM (line ${c.source_line}, ${c.robots_txt_hex.slice(0, 8)}...): ${c.expected.valid_directives} valid directives`, () => {
      const record = recordFromResponse({ status: 200, body: Buffer.from(c.robots_txt_hex, 'hex') }, 0);
      const v = compileRobots(record, 'foo').verdict('http://h/AnyValue');
      assert.equal(v.matchedRule, bothRead ? 'Allow: /AnyValue' : null);
    });
  }

  for (const c of aux.sitemap) {
    test(`sitemap (line ${c.source_line})`, () => {
      assert.deepEqual(compileRobots(rules(c.robots_txt), AGENT).sitemaps, c.expected_sitemaps);
    });
  }

  // URL -> path: only absolute http(s) URLs are in our contract; anything else is null
  // (and verdict() answers it allowed=false) where Google guesses a path.
  for (const c of aux.path_params_query) {
    const absolute = /^https?:\/\//.test(c.input);
    test(`path of ${JSON.stringify(c.input)} -> ${absolute ? c.expected : 'null (not an absolute URL)'}`, () => {
      assert.equal(robotsMatchPath(c.input), absolute ? c.expected : null);
    });
  }

  for (const c of aux.escape_pattern) {
    test(`pattern escaping ${JSON.stringify(c.input)} -> ${c.expected}`, () => {
      assert.equal(canonicalizeForMatch(c.input), c.expected);
    });
  }
});

describe('withFailureHistory: every address refused on two tries in a row ends the host', () => {
  const refused = (at: number) => recordFromResponse({ error: 'connect ECONNREFUSED', connectionRefused: 'connection_refused: connect ECONNREFUSED 192.0.2.1:80' }, at);
  test('refused, then refused again 6 s later: ends, with both tries in the reason', () => {
    const first = withFailureHistory(refused(1000), null);
    assert.equal(first.ends, undefined);
    const second = withFailureHistory(refused(7000), first);
    assert.deepEqual(second.ends, { outcome: 'network_error', reason: 'connection_refused: connect ECONNREFUSED 192.0.2.1:80 (refused twice, 6 s apart)' });
    assert.equal(second.reason, second.ends!.reason);
    assert.equal(second.failures, 2);
    // asked again when that verdict expires and refused again: the same reason, not a longer one
    assert.equal(withFailureHistory(refused(70_000), second).ends?.reason, second.ends!.reason);
  });
  test('a refusal after another failure (a 503), or after a success, does not end the host', () => {
    const after503 = withFailureHistory(refused(5000), withFailureHistory(recordFromResponse({ status: 503, body: '' }, 0), null));
    assert.equal(after503.ends, undefined);
    assert.equal(withFailureHistory(refused(5000), recordFromResponse({ status: 200, body: '' }, 0)).ends, undefined);
    assert.equal(withFailureHistory(recordFromResponse({ error: 'timeout' }, 5000), withFailureHistory(refused(0), null)).ends, undefined, 'a refusal then a timeout');
  });
});
