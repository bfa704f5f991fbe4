// The crawl-trap hosts of the test web, over real HTTP on loopback: each one answers the URLs
// its own links make up, forever, and keeps its ordinary pages.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CALENDAR_TRAP_HOST,
  DEEP_TRAP_HOST,
  getFromTestWeb,
  PAGES_TRAP_HOST,
  SESSION_TRAP_HOST,
  SESSION_TRAP_PAGES,
  SOFT404_TRAP_HOST,
  startTestWeb,
  TRAP_HOSTS,
  type TestWeb,
} from '../../testweb/index.js';

const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));

describe('test web: crawl-trap hosts', () => {
  let web: TestWeb;
  before(async () => {
    web = await startTestWeb({ hosts: 1, traps: true });
  });
  after(async () => web?.close());
  const get = (host: string, path: string) => getFromTestWeb(web.port, host, path);

  test('served only when enabled, mapped by one --resolve rule', async () => {
    assert.ok(web.resolveRules.includes(`*.trap.test=127.0.0.1:${web.port}`));
    const plain = await startTestWeb({ hosts: 1 });
    try {
      assert.equal((await getFromTestWeb(plain.port, CALENDAR_TRAP_HOST, '/')).status, 421);
    } finally {
      await plain.close();
    }
  });

  test('every trap host has a home page and /about.html, and no robots.txt', async () => {
    for (const host of TRAP_HOSTS) {
      assert.equal((await get(host, '/')).status, 200, host);
      assert.equal((await get(host, '/about.html')).status, 200, host);
      assert.equal((await get(host, '/robots.txt')).status, 404, host);
    }
  });

  test('the calendar: each day links the next and previous day and month, without end', async () => {
    const r = await get(CALENDAR_TRAP_HOST, '/cal/2999/12/31');
    assert.equal(r.status, 200);
    assert.deepEqual(hrefs(r.body).slice(0, 4), ['/cal/2999/12/30', '/cal/3000/01/01', '/cal/2999/11/01', '/cal/3000/01/01']);
    assert.equal((await get(CALENDAR_TRAP_HOST, '/cal/2026/02/30')).status, 404);
  });

  test('session ids: new in every response, in every link; the pages behind them are four', async () => {
    const a = hrefs((await get(SESSION_TRAP_HOST, '/')).body);
    const b = hrefs((await get(SESSION_TRAP_HOST, '/;jsessionid=whatever')).body);
    assert.equal(a.length, SESSION_TRAP_PAGES.length);
    assert.ok(a.every((h) => /;jsessionid=|\?PHPSESSID=/.test(h)));
    assert.ok(a.every((h, i) => h !== b[i]), 'new ids in every response');
    assert.deepEqual(a.map((h) => h.replace(/;jsessionid=.*|\?PHPSESSID=.*/, '')), [...SESSION_TRAP_PAGES]);
    assert.equal((await get(SESSION_TRAP_HOST, '/products.html?PHPSESSID=x')).status, 200);
    assert.equal((await get(SESSION_TRAP_HOST, '/nothing.html')).status, 404);
  });

  test('pagination: endless, every page the same text', async () => {
    const p1 = await get(PAGES_TRAP_HOST, '/list?page=1');
    const p9 = await get(PAGES_TRAP_HOST, '/list?page=900000');
    assert.equal(p9.status, 200);
    assert.equal(p1.body.replace(/href="[^"]*"/g, ''), p9.body.replace(/href="[^"]*"/g, ''));
    assert.deepEqual(hrefs(p9.body), ['/list?page=900001', '/list?page=900002', '/list?page=900003']);
  });

  test('the deep tree: relative links one level deeper, at any depth', async () => {
    const r = await get(DEEP_TRAP_HOST, '/deep/page-1/next/part-3/');
    assert.equal(r.status, 200);
    assert.deepEqual(hrefs(r.body), ['next/', 'page-4/', 'part-4/']);
  });

  test('soft 404: 200 for any path, linking to more made-up paths', async () => {
    const r = await get(SOFT404_TRAP_HOST, '/no/such/page');
    assert.equal(r.status, 200);
    const links = hrefs(r.body);
    assert.equal(links.length, 3);
    for (const l of links) assert.match(l, /^\/item\/\d{5}$/);
    assert.equal((await get(SOFT404_TRAP_HOST, links[0]!)).status, 200);
  });
});
