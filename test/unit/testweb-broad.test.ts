// The broad test web: thousands of registrable domains with a few pages each, over real HTTP
// on many loopback addresses and named by the web's own DNS server. Every domain is reachable
// from the one seed within the crawler's default depth, the cross links are skewed, and the
// dead hosts are dead.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { connect } from 'node:net';
import { BROAD_ROBOTS, BroadHosts, getFromTestWeb, startTestWeb, type TestWeb } from '../../testweb/index.js';

const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));

/** Page depth of every URL reachable from the seed, following the model's links (no HTTP), and each domain's in-links. */
function walk(web: BroadHosts): { depth: Map<string, number>; inLinks: Map<string, number> } {
  const depth = new Map<string, number>([[web.seedUrl(), 0]]);
  const inLinks = new Map<string, number>();
  const queue = [web.seedUrl()];
  const hostOf = (url: string) => url.slice(7, url.indexOf(':', 7));
  for (let q = 0; q < queue.length; q++) {
    const url = queue[q]!;
    const i = web.domainIndex(hostOf(url));
    if (i < 0) continue;
    for (const l of web.links(i, url.slice(url.indexOf('/', 7)))) {
      inLinks.set(hostOf(l), (inLinks.get(hostOf(l)) ?? 0) + 1);
      if (depth.has(l)) continue;
      depth.set(l, depth.get(url)! + 1);
      queue.push(l);
    }
  }
  return { depth, inLinks };
}

describe('test web: broad hosts', () => {
  let web: TestWeb;
  let resolver: Resolver;
  before(async () => {
    web = await startTestWeb({ hosts: 1, broad: { domains: 300, addresses: 8, deadHosts: 4 } });
    resolver = new Resolver();
    resolver.setServers([`${web.broad!.dns!.address}:${web.broad!.dns!.port}`]);
  });
  after(async () => web?.close());

  test('the web DNS names every domain with one of its addresses, the refused dead hosts with an address nothing listens on, and not the others', async () => {
    const broad = web.broad!;
    assert.deepEqual(broad.addresses(), ['127.77.0.1', '127.77.0.2', '127.77.0.3', '127.77.0.4', '127.77.0.5', '127.77.0.6', '127.77.0.7', '127.77.0.8']);
    const used = new Set<string>();
    for (const i of [0, 1, 17, 299]) {
      const [address] = await resolver.resolve4(broad.domainName(i));
      assert.equal(address, broad.addressOf(i));
      used.add(address!);
      // the page is served on that address, at the port its links name
      const r = await getFromTestWeb(web.port, broad.domainName(i), '/', {}, 'GET', address);
      assert.equal(r.status, 200);
      assert.ok(hrefs(r.body).every((h) => h.startsWith('http://') && new URL(h).port === String(web.port)), 'absolute links with the port');
    }
    for (let i = 0; i < 300; i++) used.add(broad.addressOf(i));
    assert.equal(used.size, 8, 'the domains are spread over every address');
    const { nxdomain, refused } = broad.deadHostNames();
    assert.deepEqual([nxdomain.length, refused.length], [2, 2]);
    await assert.rejects(resolver.resolve4(nxdomain[0]!), /ENOTFOUND/);
    const [deadAddress] = await resolver.resolve4(refused[0]!);
    await assert.rejects(
      new Promise<void>((resolve, reject) => {
        const s = connect({ host: deadAddress!, port: web.port }, () => (s.destroy(), resolve()));
        s.once('error', reject);
      }),
      /ECONNREFUSED/,
    );
  });

  test('following the links over HTTP from the seed reaches every page of every domain and each dead host, robots.txt on each', async () => {
    const broad = web.broad!;
    const found = new Set<string>();
    const dead = new Set<string>();
    const queue = [broad.seedUrl()];
    for (let q = 0; q < queue.length; q++) {
      const url = queue[q]!;
      if (found.has(url)) continue;
      const { hostname, pathname } = new URL(url);
      if (!broad.has(hostname)) {
        dead.add(hostname);
        continue;
      }
      found.add(url);
      const r = await getFromTestWeb(web.port, hostname, pathname, {}, 'GET', broad.addressOf(broad.domainIndex(hostname)));
      assert.equal(r.status, 200, url);
      for (const h of hrefs(r.body)) if (!found.has(h)) queue.push(h);
    }
    assert.deepEqual([...found].sort(), broad.pageUrls().sort());
    const { nxdomain, refused } = broad.deadHostNames();
    assert.deepEqual([...dead].sort(), [...nxdomain, ...refused].sort());
    const robots = await getFromTestWeb(web.port, broad.domainName(5), '/robots.txt', {}, 'GET', broad.addressOf(5));
    assert.equal(robots.body, BROAD_ROBOTS);
    assert.equal((await getFromTestWeb(web.port, broad.domainName(5), '/p9.html', {}, 'GET', broad.addressOf(5))).status, 404);
  });

  test('20,000 domains: every page within depth 5 of the one seed, the in-links skewed, the same web for the same seed', () => {
    const broad = new BroadHosts({ domains: 20_000 });
    const { depth, inLinks } = walk(broad);
    const pages = broad.pageUrls();
    assert.equal(pages.length, 100_000);
    assert.ok(
      pages.every((p) => depth.has(p)),
      'every page reachable',
    );
    assert.ok(Math.max(...pages.map((p) => depth.get(p)!)) <= 5, 'within the default --max-depth');
    // in-links per domain (its own pages' links included)
    const perDomain = inLinks;
    const counts = [...perDomain.values()].sort((a, b) => b - a);
    const median = counts[Math.floor(counts.length / 2)]!;
    assert.ok(counts[0]! > 100 * median, `the most linked domain has ${counts[0]} in-links, the median ${median}`);
    assert.deepEqual(new BroadHosts({ domains: 20_000 }).links(123, '/p2.html'), broad.links(123, '/p2.html'));
    assert.notDeepEqual(new BroadHosts({ domains: 20_000, seed: 2 }).links(123, '/p2.html'), broad.links(123, '/p2.html'));
  });

  test('bad options are refused with the option named', () => {
    assert.throws(() => new BroadHosts({ domains: 0 }), /domains must be/);
    assert.throws(() => new BroadHosts({ addresses: 5000 }), /addresses must be/);
  });
});
