// The test web's hosts that need a browser, over real HTTP on loopback: what a crawler that
// does not render gets (a shell with no text and no links), and what the pages' scripts ask for.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  APP_HOST,
  APP_PAGES,
  appTextMarker,
  ENDLESS_HOST,
  ENDLESS_TEXT_MARKER,
  ESCAPE_HOST,
  getFromTestWeb,
  RENDER_HOSTS,
  startTestWeb,
  type TestWeb,
} from '../../testweb/index.js';

describe('test web: render hosts', () => {
  let web: TestWeb;
  before(async () => {
    web = await startTestWeb({ hosts: 1, render: { probePort: 45678 } });
  });
  after(async () => web?.close());
  const get = (host: string, path: string) => getFromTestWeb(web.port, host, path);

  test('served only when enabled, mapped by one --resolve rule, each with a robots.txt that disallows /private/', async () => {
    assert.ok(web.resolveRules.includes(`*.render.test=127.0.0.1:${web.port}`));
    for (const host of RENDER_HOSTS) assert.match((await get(host, '/robots.txt')).body, /Disallow: \/private\//);
    const plain = await startTestWeb({ hosts: 1 });
    try {
      assert.equal((await getFromTestWeb(plain.port, APP_HOST, '/')).status, 421);
    } finally {
      await plain.close();
    }
  });

  test('app pages are one shell without their text or links; the JSON the script fetches has both', async () => {
    for (const [path, links] of Object.entries(APP_PAGES)) {
      const shell = await get(APP_HOST, path);
      assert.equal(shell.status, 200);
      assert.match(shell.body, /<div id="root"><\/div>/);
      assert.doesNotMatch(shell.body, new RegExp(appTextMarker(path)));
      assert.doesNotMatch(shell.body, /<a /);
      const json = JSON.parse((await get(APP_HOST, `/api/page${path}`)).body);
      assert.match(json.paragraphs[0], new RegExp(appTextMarker(path)));
      assert.deepEqual(json.links.map((l: { href: string }) => l.href), links);
    }
    assert.match((await get(APP_HOST, '/static/app.js')).body, /fetch\('\/api\/page'/);
    assert.equal((await get(APP_HOST, '/api/page/nope')).status, 404);
  });

  test('the escape page names the probe port in every way it tries; the endless page polls', async () => {
    const escape = (await get(ESCAPE_HOST, '/')).body;
    assert.match(escape, /var target = "http:\/\/127\.0\.0\.1:45678"/);
    for (const what of ['fetch', 'xhr', 'image', 'beacon', 'navigation']) assert.match(escape, new RegExp(`target \\+ '/from-${what}'`), what);
    for (const what of ['script.js', 'stylesheet.css', 'iframe']) assert.match(escape, new RegExp(`"http://127\\.0\\.0\\.1:45678/from-${what}"`), what);
    assert.match(escape, /ws:\/\/127\.0\.0\.1:45678\/from-websocket/);
    const redirect = await get(ESCAPE_HOST, '/to-loopback');
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.location, 'http://127.0.0.1:45678/from-redirect');
    const endless = (await get(ENDLESS_HOST, '/')).body;
    assert.match(endless, new RegExp(ENDLESS_TEXT_MARKER));
    assert.match(endless, /setInterval/);
    assert.equal((await get(ENDLESS_HOST, '/api/poll?n=7')).body, '7');
  });
});
