// The host of robots directives of the test web, over real HTTP on loopback: each page sends
// the X-Robots-Tag headers and meta tags it is described with, and links to its own leaf.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { DIRECTIVE_PAGES, DIRECTIVES_HOST, leafOf, startTestWeb, textMarkerOf, type TestWeb } from '../../testweb/index.js';

interface Raw {
  status: number;
  type: string;
  /** every X-Robots-Tag header line, in order */
  xRobotsTag: string[];
  body: Buffer;
}

/** A GET that keeps the header lines as sent (node's `headers` would join repeated ones). */
function get(port: number, path: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host: DIRECTIVES_HOST } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const xRobotsTag: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() === 'x-robots-tag') xRobotsTag.push(res.rawHeaders[i + 1]!);
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), xRobotsTag, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('test web: the host of robots directives', () => {
  let web: TestWeb;
  before(async () => {
    web = await startTestWeb({ hosts: 1, directives: true });
  });
  after(async () => web?.close());

  test('served only when enabled, mapped by one --resolve rule', async () => {
    assert.ok(web.resolveRules.includes(`*.directives.test=127.0.0.1:${web.port}`));
    const plain = await startTestWeb({ hosts: 1 });
    try {
      assert.equal(plain.directives, null);
      assert.equal((await get(plain.port, '/')).status, 421);
    } finally {
      await plain.close();
    }
  });

  test('the home page links to every page; robots.txt is a 404', async () => {
    const home = await get(web.port, '/');
    assert.equal(home.status, 200);
    for (const p of DIRECTIVE_PAGES) assert.ok(home.body.toString().includes(`href="${p.path}"`), p.path);
    assert.equal((await get(web.port, '/robots.txt')).status, 404);
  });

  for (const p of DIRECTIVE_PAGES) {
    test(`${p.path}: X-Robots-Tag ${JSON.stringify(p.xRobotsTag)}${p.meta ? `, ${p.meta}` : ''}, a link to its leaf`, async () => {
      const r = await get(web.port, p.path);
      assert.equal(r.status, 200);
      assert.deepEqual(r.xRobotsTag, p.xRobotsTag, 'one header line per value');
      const body = r.body.toString('latin1');
      if (p.pdf) {
        assert.equal(r.type, 'application/pdf');
        assert.ok(body.includes(`/URI (http://${DIRECTIVES_HOST}${leafOf(p.path)})`));
      } else {
        assert.ok(body.includes(p.meta), 'the meta tags');
        assert.ok(body.includes(`href="${leafOf(p.path)}"`));
        assert.ok(body.includes(textMarkerOf(p.path)));
      }
      const leaf = await get(web.port, leafOf(p.path));
      assert.equal(leaf.status, 200);
      assert.deepEqual(leaf.xRobotsTag, []);
    });
  }

  test('one leaf per page, linked from that page only', () => {
    assert.equal(new Set(DIRECTIVE_PAGES.map((p) => leafOf(p.path))).size, DIRECTIVE_PAGES.length);
  });
});
