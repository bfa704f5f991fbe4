// The politeness hosts of the test web, over real HTTP on loopback: each misbehaves exactly
// as documented, the sharedip hosts sit on 127.0.0.2, and the request log carries what the
// audit needs (localAddress, retryAfterMs, robotsBody).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CHANGE_ROBOTS_AFTER,
  CHANGE_ROBOTS_BEFORE,
  FLAKY_ROBOTS,
  POLITE_HOSTS,
  RETRY_AFTER_HOST,
  ROBOTS_503_HOST,
  ROBOTS_CHANGE_HOST,
  ROBOTS_FLAKY_HOST,
  SLOW_HOST,
  getFromTestWeb,
  politenessExpectedPages,
  politenessHostNames,
  politenessHostPaths,
  politenessSeedUrls,
  resolveLink,
  startTestWeb,
  type PolitenessHostsOptions,
  type TestWeb,
} from '../../testweb/index.js';

const SMALL: PolitenessHostsOptions = { flakyRobotsFailures: 2, robotsChangeAfterMs: 300, retryAfterSeconds: 1, slowMs: 200, sharedIpHosts: 5 };

async function withWeb(politeness: PolitenessHostsOptions | boolean | undefined, body: (web: TestWeb) => Promise<void>): Promise<void> {
  const web = await startTestWeb({ hosts: 2, seed: 1, ...(politeness === undefined ? {} : { politeness }) });
  try {
    await body(web);
  } finally {
    await web.close();
  }
}

const robotsOf = (web: TestWeb, host: string) => getFromTestWeb(web.port, host, '/robots.txt');

test('off by default: two resolve rules, no polite hosts, nothing on 127.0.0.2; every log record has localAddress and robots bodies', async () => {
  await withWeb(undefined, async (web) => {
    assert.deepEqual(web.resolveRules, [`*.site.test=127.0.0.1:${web.port}`, `*.bench.test=127.0.0.1:${web.port}`]);
    assert.equal(web.politeness, null);
    assert.equal((await robotsOf(web, ROBOTS_503_HOST)).status, 421);
    await assert.rejects(getFromTestWeb(web.port, 's00.sharedip.test', '/', {}, 'GET', '127.0.0.2'), /ECONNREFUSED/);
    const robots = await robotsOf(web, 'h00.site.test');
    const log = web.requestLog();
    assert.equal(log.length, 2);
    assert.ok(log.every((r) => r.localAddress === '127.0.0.1' && r.retryAfterMs === undefined));
    assert.equal(log[0]!.robotsBody, undefined, 'a 421 has no robots body');
    assert.equal(log[1]!.robotsBody, robots.body);
    assert.equal(robots.body, web.model.byName.get('h00.site.test')?.robots.text);
  });
});

test('enabled: the two extra resolve rules, defaults, and host names', async () => {
  await withWeb(true, async (web) => {
    assert.deepEqual(web.resolveRules.slice(2), [`*.polite.test=127.0.0.1:${web.port}`, `*.sharedip.test=127.0.0.2:${web.port}`]);
    assert.deepEqual(web.politeness?.options, { flakyRobotsFailures: 2, robotsChangeAfterMs: 4000, retryAfterSeconds: 2, slowMs: 1500, sharedIpHosts: 50 });
    const names = politenessHostNames(true);
    assert.equal(names.length, 55);
    assert.deepEqual(names.slice(0, 5), [...POLITE_HOSTS]);
    assert.equal(names[5], 's00.sharedip.test');
    assert.equal(names[54], 's49.sharedip.test');
    assert.deepEqual(web.politeness?.hostNames, names);
  });
  assert.throws(() => politenessHostNames({ sharedIpHosts: 2.5 }), /sharedIpHosts must be a non-negative integer/);
});

test('robots503 always answers 503 (its pages exist); robotsflaky answers 503 N times, then its rules', async () => {
  await withWeb(SMALL, async (web) => {
    for (let i = 0; i < 3; i++) assert.equal((await robotsOf(web, ROBOTS_503_HOST)).status, 503);
    assert.equal((await getFromTestWeb(web.port, ROBOTS_503_HOST, '/p1')).status, 200);
    const flaky = [];
    for (let i = 0; i < 4; i++) flaky.push(await robotsOf(web, ROBOTS_FLAKY_HOST));
    assert.deepEqual(flaky.map((r) => r.status), [503, 503, 200, 200]);
    assert.equal(flaky[2]!.body, FLAKY_ROBOTS);
    assert.equal(flaky[2]!.body, 'User-agent: *\nDisallow: /private/\n');
    const flakyLog = web.requestLog().filter((r) => r.host === ROBOTS_FLAKY_HOST);
    assert.deepEqual(flakyLog.map((r) => r.robotsBody), [undefined, undefined, FLAKY_ROBOTS, FLAKY_ROBOTS]);
    assert.ok(flakyLog.every((r) => r.retryAfterMs === undefined), 'the 503s carry no Retry-After');
  });
});

test('robotschange allows all until robotsChangeAfterMs, then disallows /late/', async () => {
  // before the change: a server whose change is a minute away, so that however slow the machine
  // the first answer comes before it
  await withWeb({ ...SMALL, robotsChangeAfterMs: 60_000 }, async (web) => {
    const before = await robotsOf(web, ROBOTS_CHANGE_HOST);
    assert.equal(before.body, CHANGE_ROBOTS_BEFORE);
    assert.equal(CHANGE_ROBOTS_BEFORE, 'User-agent: *\nAllow: /\n');
    assert.equal(web.requestLog().at(-1)!.robotsBody, CHANGE_ROBOTS_BEFORE);
  });
  // after it: past robotsChangeAfterMs (300 ms) from the server's start
  await withWeb(SMALL, async (web) => {
    await sleep(350);
    const after = await robotsOf(web, ROBOTS_CHANGE_HOST);
    assert.equal(after.body, CHANGE_ROBOTS_AFTER);
    assert.equal(after.body, 'User-agent: *\nDisallow: /late/\n');
    assert.equal(web.requestLog().at(-1)!.robotsBody, CHANGE_ROBOTS_AFTER);
    assert.equal((await getFromTestWeb(web.port, ROBOTS_CHANGE_HOST, '/late/8')).status, 200, 'the pages are still served');
  });
});

test('retryafter: the first GET of each page is 429 with Retry-After, later GETs are 200; robots.txt is plain', async () => {
  await withWeb(SMALL, async (web) => {
    const robots = await robotsOf(web, RETRY_AFTER_HOST);
    assert.equal(robots.status, 200);
    assert.equal(robots.body, 'User-agent: *\nAllow: /\n');
    const first = await getFromTestWeb(web.port, RETRY_AFTER_HOST, '/p1');
    assert.equal(first.status, 429);
    assert.equal(first.headers['retry-after'], '1');
    const second = await getFromTestWeb(web.port, RETRY_AFTER_HOST, '/p1');
    assert.equal(second.status, 200);
    assert.match(second.body, /^<!DOCTYPE html>/);
    assert.equal((await getFromTestWeb(web.port, RETRY_AFTER_HOST, '/p2', {}, 'HEAD')).status, 200, 'HEAD does not use up the 429');
    assert.equal((await getFromTestWeb(web.port, RETRY_AFTER_HOST, '/p2')).status, 429);
    assert.equal((await getFromTestWeb(web.port, RETRY_AFTER_HOST, '/nope')).status, 404);
    const log = web.requestLog();
    assert.deepEqual(log.map((r) => [r.path, r.status, r.retryAfterMs]), [
      ['/robots.txt', 200, undefined],
      ['/p1', 429, 1000],
      ['/p1', 200, undefined],
      ['/p2', 200, undefined],
      ['/p2', 429, 1000],
      ['/nope', 404, undefined],
    ]);
  });
});

test('slow: every response, robots.txt included, waits slowMs', async () => {
  await withWeb(SMALL, async (web) => {
    await robotsOf(web, SLOW_HOST);
    await getFromTestWeb(web.port, SLOW_HOST, '/');
    await getFromTestWeb(web.port, RETRY_AFTER_HOST, '/robots.txt');
    const log = web.requestLog();
    assert.ok(log[0]!.end - log[0]!.start >= 199 && log[1]!.end - log[1]!.start >= 199, 'slow host waited');
    assert.ok(log[2]!.end - log[2]!.start < 150, 'other hosts do not');
  });
});

test('sharedip hosts answer on 127.0.0.2 and the log records the address', async () => {
  await withWeb(SMALL, async (web) => {
    const robots = await getFromTestWeb(web.port, 's03.sharedip.test', '/robots.txt', {}, 'GET', '127.0.0.2');
    assert.equal(robots.body, 'User-agent: *\nAllow: /\n');
    const page = await getFromTestWeb(web.port, 's04.sharedip.test', '/p2', {}, 'GET', '127.0.0.2');
    assert.equal(page.status, 200);
    assert.equal((await getFromTestWeb(web.port, 's05.sharedip.test', '/', {}, 'GET', '127.0.0.2')).status, 421, 'only sharedIpHosts of them');
    await getFromTestWeb(web.port, SLOW_HOST, '/robots.txt');
    assert.deepEqual(web.requestLog().map((r) => [r.host, r.localAddress]), [
      ['s03.sharedip.test', '127.0.0.2'],
      ['s04.sharedip.test', '127.0.0.2'],
      ['s05.sharedip.test', '127.0.0.2'],
      [SLOW_HOST, '127.0.0.1'],
    ]);
  });
});

test('an explicit port taken on 127.0.0.2 is an error, not a silent port change', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.2', resolve));
  try {
    const port = (blocker.address() as { port: number }).port;
    await assert.rejects(startTestWeb({ hosts: 1, port, politeness: true }), /EADDRINUSE/);
  } finally {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  }
});

test('pages: valid HTML, portless links, every page within depth 2 of "/", expectations partition them', async () => {
  await withWeb(SMALL, async (web) => {
    const seeds = politenessSeedUrls(SMALL);
    assert.equal(seeds.length, 10);
    const depth = new Map<string, number>(seeds.map((s) => [s, 0]));
    let frontier = seeds;
    for (let d = 0; d < 2; d++) {
      const next: string[] = [];
      for (const url of frontier) {
        const u = new URL(url);
        const address = u.hostname.endsWith('.sharedip.test') ? '127.0.0.2' : '127.0.0.1';
        let res = await getFromTestWeb(web.port, u.hostname, u.pathname, {}, 'GET', address);
        if (res.status === 429) res = await getFromTestWeb(web.port, u.hostname, u.pathname, {}, 'GET', address);
        assert.equal(res.status, 200, url);
        assert.match(res.body, /^<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>[^<]+\| [a-z0-9.]+<\/title>/);
        assert.ok(res.body.length > 1000 && res.body.trimEnd().endsWith('</html>'), `${url} has text`);
        for (const m of res.body.matchAll(/<a href="([^"]*)"/g)) {
          const href = m[1]!;
          assert.ok(href.startsWith('/') || href.startsWith(`http://${u.hostname}/`), `${url}: ${href}`);
          assert.ok(!href.includes(`:${web.port}`), 'no port in links');
          const to = resolveLink(url, undefined, href)!;
          if (!depth.has(to)) {
            depth.set(to, d + 1);
            next.push(to);
          }
        }
      }
      frontier = next;
    }
    const all = politenessHostNames(SMALL).flatMap((h) => politenessHostPaths(h, SMALL)!.map((p) => `http://${h}${p}`));
    assert.deepEqual([...depth.keys()].sort(), [...all].sort(), 'every page reached within depth 2, nothing else linked');
    assert.ok([...depth].some(([u, d]) => u.includes('/late/') && d === 2), 'some /late/ pages sit at depth 2');

    const exp = politenessExpectedPages(SMALL);
    assert.deepEqual([...exp.pages, ...exp.optional, ...exp.forbidden].sort(), [...all].sort());
    assert.deepEqual([...exp.forbidden].sort(), [
      ...['/', '/p1', '/p2', '/p3', '/p4', '/p5'].map((p) => `http://${ROBOTS_503_HOST}${p}`),
      `http://${ROBOTS_FLAKY_HOST}/private/1`,
      `http://${ROBOTS_FLAKY_HOST}/private/2`,
    ].sort());
    assert.deepEqual([...exp.optional].sort(), Array.from({ length: 8 }, (_, i) => `http://${ROBOTS_CHANGE_HOST}/late/${i + 1}`).sort());
    assert.equal(exp.pages.size, 4 * 6 + 5 * 3, 'robotsflaky, robotschange (less the above), retryafter, slow: 6 each; 5 sharedip hosts: 3 each');
  });
});
