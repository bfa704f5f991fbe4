/**
 * Crawling the open web from one seed (issue 41's acceptance): `crawl run --scope open
 * --until-idle` from d00000.test over the broad test web of 2,000 registrable domains (one
 * page each, so the crawl is all breadth: a robots.txt and a page per host), with the
 * crawler's default politeness (1 s between requests to a host, 4 requests in flight an IP;
 * the domains live on 128 loopback addresses) and the default depth. Among the links are dead
 * external hosts: names with no DNS record, and names whose address refuses connections.
 *
 * Checked as a user would: the crawl ends by itself; every domain the web's own link graph
 * reaches from the seed within the depth has its page stored, and nothing else; from the
 * server's log, robots.txt came first on every host and the politeness audit holds; each dead
 * host's URL has one row with its reason, and it ended at once (the crawl is over long before
 * the 20 minutes a failing robots.txt is otherwise waited for).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BROAD_DEAD_ADDRESS, startTestWeb, type BroadHosts, type TestWeb } from '../../testweb/index.js';
import { runCli } from '../support/crawl-cli.js';
import { E2E, PAGES_STORED_TWICE, queryOutput } from '../support/e2e-web.js';
import { assertRequestLogPolite } from '../support/politeness-audit.js';

const DOMAINS = 2000;
/** the crawler's defaults, which the crawl keeps (no flag changes them) */
const DEFAULT_MAX_DEPTH = 5;
const DEFAULT_MIN_DELAY_MS = 1000;
const DEFAULT_MAX_PER_IP = 4;
/** far below --robots-give-up-ms (20 min), which a dead host used to hold the crawl for */
const CRAWL_BOUND_MS = 300_000;

/** The pages the web's link graph reaches from the seed within `maxDepth` hops, and the dead hosts' URLs among the links. */
function reachable(broad: BroadHosts, maxDepth: number): { pages: Set<string>; dead: Set<string> } {
  const pages = new Set<string>([broad.seedUrl()]);
  const dead = new Set<string>();
  let frontier = [broad.seedUrl()];
  for (let depth = 1; depth <= maxDepth && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const from of frontier) {
      const u = new URL(from);
      for (const link of broad.links(broad.domainIndex(u.hostname), u.pathname)) {
        if (!broad.has(new URL(link).hostname)) dead.add(link);
        else if (!pages.has(link)) {
          pages.add(link);
          next.push(link);
        }
      }
    }
    frontier = next;
  }
  return { pages, dead };
}

describe('crawl run --scope open over 2,000 registrable domains from one seed', () => {
  let web: TestWeb;
  let dir: string;
  before(async () => {
    web = await startTestWeb({ hosts: 1, broad: { domains: DOMAINS, pagesPerDomain: 1 } });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-open-'));
  });
  after(async () => {
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches every reachable domain, robots.txt first on every host, politely; dead hosts end at once with their reasons', async () => {
    const broad = web.broad!;
    const out = path.join(dir, 'out');
    // the web's DNS server and loopback let through: without --dns-server, names would go to the machine's resolver
    const args = ['run', '--out', out, '--until-idle', '--scope', 'open', '--seed', broad.seedUrl(), '--user-agent', E2E.userAgent, ...broad.crawlArgs()];
    const started = Date.now();
    const run = await runCli(args, {}, CRAWL_BOUND_MS);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(run.code, 0, run.stderr.slice(-2000));

    const expected = reachable(broad, DEFAULT_MAX_DEPTH);
    const domains = new Set([...expected.pages].map((u) => new URL(u).hostname));
    assert.equal(domains.size, DOMAINS, 'the web makes every domain reachable from the seed');
    const stored = (await queryOutput(out, 'SELECT url FROM pages')).map((r) => String(r[0]));
    // the view shows a URL once however often it was stored: count the stored fetches
    const storedTwice = (await queryOutput(out, PAGES_STORED_TWICE)).map((r) => String(r[0]));
    assert.deepEqual(storedTwice, [], 'each page stored once');
    assert.deepEqual([...expected.pages].filter((u) => !stored.includes(u)).slice(0, 20), [], 'every reachable page is stored');
    assert.deepEqual(stored.filter((u) => !expected.pages.has(u)), [], 'nothing else is stored');
    const storedDomains = Number((await queryOutput(out, 'SELECT count(DISTINCT url_host_registered_domain) FROM pages'))[0]![0]);
    assert.equal(storedDomains, DOMAINS);

    // from the server's side: robots.txt first on every host, and the audit (robots rules, one
    // request a host at a time, the 1 s delay, the per-IP cap) holds
    const log = web.requestLog();
    const firstByHost = new Map<string, string>();
    for (const r of [...log].sort((a, b) => a.start - b.start)) if (!firstByHost.has(r.host)) firstByHost.set(r.host, r.path);
    assert.equal(firstByHost.size, DOMAINS, 'every domain was asked');
    assert.deepEqual([...firstByHost].filter(([, p]) => p !== '/robots.txt').slice(0, 20), [], 'robots.txt first on every host');
    const audit = assertRequestLogPolite(log, { token: E2E.token, minDelayMs: DEFAULT_MIN_DELAY_MS, perIpCap: DEFAULT_MAX_PER_IP });
    assert.equal(audit.counts.robotsRequests, DOMAINS, 'one robots.txt a host');

    // the dead hosts: one row each, with the reason; the refused ones after two tries a few seconds apart
    const { nxdomain, refused } = broad.deadHostNames();
    const deadLinked = [...expected.dead];
    assert.ok(deadLinked.some((u) => nxdomain.includes(new URL(u).hostname)) && deadLinked.some((u) => refused.includes(new URL(u).hostname)), `both kinds of dead host are linked: ${deadLinked.join(' ')}`);
    const list = deadLinked.map((u) => `'${u}'`).join(', ');
    const rows = await queryOutput(out, `SELECT url, outcome, reason FROM fetch_log WHERE url IN (${list}) ORDER BY url`);
    assert.equal(rows.length, deadLinked.length, `one row per dead host's URL: ${JSON.stringify(rows)}`);
    for (const [url, outcome, reason] of rows) {
      const host = new URL(String(url)).hostname;
      assert.equal(outcome, 'network_error', String(url));
      if (nxdomain.includes(host)) assert.equal(reason, `dns_error: ENOTFOUND ${host} (the name does not exist)`);
      else assert.match(String(reason), new RegExp(`^connection_refused: connect ECONNREFUSED ${BROAD_DEAD_ADDRESS.replaceAll('.', '\\.')}:${broad.port} \\(refused twice, \\d+ s apart\\)$`));
    }
    const repeated = await queryOutput(out, 'SELECT url, count(*) FROM fetch_log GROUP BY url HAVING count(*) > 1');
    assert.deepEqual(repeated, [], 'one outcome a URL');
    console.log(`open crawl: ${stored.length} pages of ${storedDomains} domains, ${audit.counts.requests} requests, ${rows.length} dead hosts ended; ${seconds.toFixed(1)} s (process start to exit)`);
  });
});
