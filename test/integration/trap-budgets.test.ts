/**
 * Trap budgets at the scale of a real ID-routed site, without HTTP: the gate's intake, its
 * check before a fetch and simhash's novelty feedback, with default trap settings, sharing
 * their tallies in the `crawl-traps` bucket of a real nats-server through two connections
 * (a gate process and a simhash process; simhash's near-duplicate index is kept in memory),
 * over the test web's 5,000-product shop, its 1,000-topic forum and the trap hosts whose
 * pages lead to more of themselves (the infinite calendar, endless identical pagination, the
 * soft-404 site).
 *
 * The crawl around them is a stand-in (normalize, the seen-filter, fetch and extract cost an
 * end-to-end crawl ~70 ms a page on one host, minutes for 5,000 pages): pages come straight
 * from the test web's hosts, links are read from their HTML and kept when new, one page per
 * host in turn, and simhash hears of each page only after a few more were fetched, as
 * in a crawl whose later stages lag behind fetch. No depth limit, so the gate's defences are
 * all that stops a trap. test/e2e/crawl-traps.test.ts crawls both for real at a smaller scale.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { openKvStores } from '../../pipeline/adapters/nats-kv.js';
import { applyCrawlTopology } from '../../ops/nats/crawl-topology.js';
import type { StageContext } from '../../pipeline/stage.js';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { checkBeforeFetch } from '../../stages/politeness-gate/trap-check.js';
import { handleSimhash } from '../../stages/simhash/handle.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';
import { decodeAdmitted, decodeOutcome, type AdmittedUrl, type ExtractedPage } from '../../schemas/index.js';
import { CALENDAR_TRAP_HOST, IdRoutedHosts, PAGES_TRAP_HOST, SOFT404_TRAP_HOST, TrapHosts, FORUM_HOST, SHOP_HOST } from '../../testweb/index.js';
import { createFakeContext, decodedOn, stageInput } from '../support/fake-context.js';
import { startTestNats } from '../support/nats-server.js';

/** pages fetched after a page before simhash's verdict on it reaches the tally */
const LAG = 8;
const HOSTS = [SHOP_HOST, FORUM_HOST, CALENDAR_TRAP_HOST, PAGES_TRAP_HOST, SOFT404_TRAP_HOST];

interface Site {
  respond(host: string, method: string, target: string): { status: number; type: string; body: string };
}

const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();

describe('trap budgets over a real nats-server: a 5,000-product shop and a 1,000-topic forum crawled whole, the traps beside them stopped', () => {
  let server: Awaited<ReturnType<typeof startTestNats>>;
  let gateConn: NatsConnection;
  let simhashConn: NatsConnection;
  let gate: StageContext;
  let simhash: StageContext;

  before(async () => {
    server = await startTestNats();
    gateConn = await connectNats(server.url, 'politeness-gate');
    simhashConn = await connectNats(server.url, 'simhash');
    await applyCrawlTopology(gateConn);
    const base = createFakeContext();
    // default trap settings; everything but the two buckets in memory
    gate = { ...base, kv: { ...base.kv, traps: (await openKvStores(gateConn)).traps } };
    const forSimhash = createFakeContext();
    const stores = await openKvStores(simhashConn);
    simhash = { ...forSimhash, kv: { ...forSimhash.kv, traps: stores.traps } };
  });
  after(async () => {
    await gateConn?.close();
    await simhashConn?.close();
    await server?.cleanup();
  });

  it('with default trap settings', async () => {
    const shop = new IdRoutedHosts();
    const traps = new TrapHosts();
    const siteOf = (host: string): Site => (shop.has(host) ? shop : traps);
    const queues = new Map<string, AdmittedUrl[]>(HOSTS.map((h) => [h, []]));
    const seen = new Set<string>();
    const fetched = new Map<string, string[]>(HOSTS.map((h) => [h, []]));
    const dropped = new Map<string, string[]>(); // reason's defence -> URLs
    const drop = (defence: string, url: string) => dropped.set(defence, [...(dropped.get(defence) ?? []), url]);
    let frontierSeq = 0;
    let fetchSeq = 0;

    /** the gate's intake of one page's new links (or a seed), as the seen-filter hands them on */
    const intake = async (urls: string[], source: string | null, depth: number) => {
      const fresh = urls.filter((u) => HOSTS.includes(new URL(u).hostname) && !seen.has(u));
      if (fresh.length === 0) return;
      for (const u of fresh) seen.add(u);
      const batch = fresh.map(
        (url, i): AdmittedUrl => ({
          v: 1,
          url,
          host: new URL(url).hostname,
          domain: new URL(url).hostname,
          depth,
          source_url: source,
          via: source === null ? 'seed' : 'link',
          fetch_id: `f${frontierSeq + 1}.${i}`,
          admitted_at: 0,
        }),
      );
      const outcome = await handleGateIntake(stageInput(batch, { subject: 'crawl.frontier.0', streamSeq: ++frontierSeq }), gate);
      for (const m of decodedOn(outcome, 'crawl.hostq', decodeAdmitted)) queues.get(m.host)!.push(m);
      for (const o of decodedOn(outcome, 'crawl.outcomes', decodeOutcome)) drop(o.reason!.split(':')[0]!, o.url);
    };

    const pending: ExtractedPage[] = [];
    const fingerprint = async (page: ExtractedPage) => void (await handleSimhash(stageInput(page), simhash));

    for (const host of HOSTS) await intake([`http://${host}/`], null, 0);
    const started = Date.now();
    for (let busy = true; busy; ) {
      busy = false;
      for (const host of HOSTS) {
        const m = queues.get(host)!.shift();
        if (!m) continue;
        busy = true;
        const verdict = await checkBeforeFetch(m, gate);
        if (!verdict.admit) {
          drop(verdict.defence, m.url);
          continue;
        }
        fetched.get(host)!.push(m.url);
        const { pathname, search } = new URL(m.url);
        const r = siteOf(host).respond(host, 'GET', `${pathname}${search}`);
        if (r.status !== 200) continue;
        const text = textOf(r.body);
        fetchSeq += 1;
        pending.push({
          v: 1,
          fetch_id: `fetch${fetchSeq}`,
          url: m.url,
          host,
          domain: host,
          depth: m.depth,
          fetch_time: fetchSeq,
          fetch_status: 200,
          duration_ms: 1,
          content_type: 'text/html',
          charset: 'utf-8',
          truncated: false,
          content_length: r.body.length,
          content_digest: contentDigest(r.body),
          title: '',
          text,
          description: null,
          language: 'en',
          canonical_url: null,
          noindex: false,
          nofollow: false,
          links: [],
        });
        if (pending.length > LAG) await fingerprint(pending.shift()!);
        await intake(
          hrefs(r.body).map((h) => new URL(h, m.url).href),
          m.url,
          m.depth + 1,
        );
      }
      if (!busy) while (pending.length > 0) await fingerprint(pending.shift()!);
    }
    const count = (host: string, re: RegExp) => fetched.get(host)!.filter((u) => re.test(new URL(u).pathname + new URL(u).search)).length;
    console.log(
      `${[...fetched.values()].reduce((n, f) => n + f.length, 0)} pages in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        HOSTS.map((h) => `${h}: ${fetched.get(h)!.length}`).join(', ') +
        `; dropped: ${[...dropped].map(([d, urls]) => `${d} ${urls.length}`).join(', ')}`,
    );

    // the shop and the forum: every page, nothing of theirs dropped
    assert.deepEqual([...fetched.get(SHOP_HOST)!, ...fetched.get(FORUM_HOST)!].sort(), shop.expectedUrls().sort());
    for (const urls of dropped.values()) assert.ok(!urls.some((u) => shop.has(new URL(u).hostname)), 'no page of the shop or the forum dropped');
    assert.equal(count(SHOP_HOST, /^\/product\//), 5000);
    assert.equal(count(FORUM_HOST, /^\/viewtopic\.php/), 1000);

    // the calendar's days lead to more days: held at the pattern budget (1,000), as before
    assert.equal(count(CALENDAR_TRAP_HOST, /^\/cal\//), gate.settings.maxUrlsPerPattern);
    assert.ok(dropped.get('trap_pattern_budget')!.every((u) => new URL(u).hostname === CALENDAR_TRAP_HOST));
    // identical pagination and the soft-404 site: cut off by content novelty once enough of
    // their pages were compared; what was fetched is those pages and the ones in flight
    for (const [host, re] of [
      [PAGES_TRAP_HOST, /^\/list\?page=/],
      [SOFT404_TRAP_HOST, /^\/item\//],
    ] as const) {
      assert.ok(count(host, re) <= gate.settings.noveltyMinPages + 2 * LAG, `${host}: ${count(host, re)} pages of its trap fetched`);
      assert.ok(dropped.get('trap_low_novelty')!.some((u) => new URL(u).hostname === host), `${host} cut off for low novelty`);
    }
  });
});
