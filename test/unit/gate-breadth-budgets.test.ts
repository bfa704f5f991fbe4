import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { serveHost } from '../../stages/politeness-gate/serve-host.js';
import { jsonValue, parseJsonValue } from '../../pipeline/kv-store.js';
import { decodeGrant, decodeOutcome, type AdmittedUrl, type CandidateUrl } from '../../schemas/index.js';
import { releaseSlot } from '../../stages/shared/politeness/host-slot.js';
import { firstPassOn, heldByFirstPass, noteStoredDomain } from '../../stages/shared/breadth/first-pass.js';
import { admittedCountKey } from '../../stages/shared/breadth/page-budget.js';
import { createFakeContext, httpResponse, settleLikeRunner, stageInput, type FakeContext, type FakeContextOptions } from '../support/fake-context.js';

let frontierSeq = 0;

const url = (host: string, path: string, extra: Partial<AdmittedUrl> = {}): AdmittedUrl => ({
  v: 1,
  url: `https://${host}${path}`,
  host,
  domain: host.split('.').slice(-2).join('.'),
  depth: 1,
  source_url: `https://${host}/`,
  via: 'link',
  fetch_id: `fid-${host}${path}`,
  admitted_at: 0,
  ...extra,
});

const gateContext = (settings: FakeContextOptions['settings']) =>
  createFakeContext({ respond: () => httpResponse(404), settings: { minDelayMs: 1000, adaptiveDelayFactor: 0, ...settings } });

async function queue(ctx: FakeContext, ...urls: AdmittedUrl[]): Promise<void> {
  for (const m of urls) await settleLikeRunner(ctx, await handleGateIntake(stageInput([m], { streamSeq: ++frontierSeq, subject: 'crawl.frontier.0' }), ctx));
}

const grants = (ctx: FakeContext) => ctx.streams.on('crawl.ready').map((m) => decodeGrant(m.data));
const outcomes = (ctx: FakeContext) => ctx.streams.on('crawl.outcomes').map((m) => decodeOutcome(m.data));

/** Serves the hosts turn after turn as fetch would answer (each request over at once), until all are idle or held. */
async function crawl(ctx: FakeContext, hosts: string[]): Promise<string[]> {
  const last = new Map<string, string>();
  for (let round = 0; round < 100; round++) {
    const turns = [];
    for (const host of hosts) {
      const turn = await serveHost(ctx, host);
      turns.push(turn.kind);
      if (turn.kind === 'granted') {
        const g = grants(ctx).at(-1)!;
        await releaseSlot(ctx.kv.hosts, host, g.lease_id, ctx.clock.now(), { kind: 'ok', durationMs: 10, baseDelayMs: 1000 }, { adaptiveDelayFactor: 0, backoffBaseMs: 1000, maxBackoffMs: 60_000, pauseAfterFailures: 5, pauseMs: 60_000 });
      }
      last.set(host, turn.kind);
    }
    if (turns.every((k) => k === 'idle' || k === 'held')) break;
    ctx.clock.advance(2000);
  }
  return hosts.map((h) => last.get(h)!);
}

describe('--max-pages-per-domain', () => {
  test("a domain's requests stop at the limit across its hosts; each URL past it ends filtered with one row; other domains go on", async () => {
    const ctx = gateContext({ maxPagesPerDomain: 3 });
    await queue(ctx, ...['/1', '/2', '/3'].map((p) => url('a.example.com', p)), ...['/1', '/2'].map((p) => url('b.example.com', p)), ...['/1', '/2', '/3', '/4'].map((p) => url('www.other.org', p)));
    await crawl(ctx, ['a.example.com', 'b.example.com', 'www.other.org']);
    const granted = grants(ctx).map((g) => g.url);
    assert.equal(granted.filter((u) => u.includes('example.com')).length, 3);
    assert.equal(granted.filter((u) => u.includes('other.org')).length, 3, 'other.org is held to 3 as well');
    const refused = outcomes(ctx).filter((o) => o.reason?.startsWith('max_pages_per_domain'));
    assert.equal(refused.length, 3, 'the 2 example.com URLs and 1 other.org URL past the limit');
    assert.ok(refused.every((o) => o.outcome === 'filtered'));
    assert.match(refused.find((o) => o.host.endsWith('example.com'))!.reason!, /^max_pages_per_domain: 3 requests to example.com granted$/);
    assert.equal(new Set(refused.map((o) => o.url)).size, 3, 'one row a URL');
    const counted = await ctx.kv.traps.get(`_dg.${ctx.settings.crawlId}.example.com`);
    assert.equal(parseJsonValue<number>(counted!.value), 3, 'the global count is at the limit, not past it');
  });
});

describe('--target-unique-domains (the first pass)', () => {
  const candidate = (u: string, via: CandidateUrl['via'] = 'link'): CandidateUrl => {
    const host = new URL(u).host;
    return { v: 1, url: u, host, domain: host.split('.').slice(-2).join('.'), depth: via === 'seed' ? 0 : 1, source_url: via === 'seed' ? null : 'https://x.test/', via };
  };

  test('holds links to a domain that already has a URL admitted (not seeds, redirect targets, nor the first link to a new domain)', async () => {
    const ctx = createFakeContext({ settings: { targetUniqueDomains: 2 } });
    const held = await heldByFirstPass(ctx, [
      candidate('https://www.a.test/', 'seed'),
      candidate('https://www.a.test/x'),
      candidate('https://www.b.test/'),
      candidate('https://shop.b.test/y'),
      candidate('https://www.c.test/', 'seed'),
      candidate('https://www.c.test/again', 'seed'),
      candidate('https://www.a.test/moved', 'redirect'),
    ]);
    assert.deepEqual([...held], [1, 3], 'seeds and redirect targets are never held');
    // another process (a fresh context, the same buckets) finds the claims in KV
    const other = createFakeContext({ settings: { targetUniqueDomains: 2 }, kv: ctx.kv });
    assert.deepEqual([...(await heldByFirstPass(other, [candidate('https://www.a.test/z'), candidate('https://www.d.test/')]))], [0]);
  });

  test('ends when the target of domains have a stored page; nothing is held after', async () => {
    const ctx = createFakeContext({ settings: { targetUniqueDomains: 2 } });
    assert.equal(await firstPassOn(ctx), true);
    await noteStoredDomain(ctx, { domain: 'a.test' });
    await noteStoredDomain(ctx, { domain: 'a.test' }); // a second page of a domain counts once
    ctx.clock.advance(1000);
    assert.equal(await firstPassOn(ctx), true);
    await noteStoredDomain(ctx, { domain: 'b.test' });
    ctx.clock.advance(1000);
    assert.equal(await firstPassOn(ctx), false);
    assert.equal((await heldByFirstPass(ctx, [candidate('https://www.a.test/q')])).size, 0);
  });

  test("a held URL waits in its host's held lane until the pass ends, then counts against --max-pages", async () => {
    const ctx = gateContext({ targetUniqueDomains: 1, maxPages: 2 });
    await ctx.kv.seen.put(admittedCountKey(ctx.settings.crawlId), jsonValue(1)); // the page below was counted when admitted
    await queue(ctx, url('www.a.test', '/', { via: 'seed', depth: 0, source_url: null }), url('www.a.test', '/held1', { held: true }), url('www.a.test', '/held2', { held: true }));
    assert.deepEqual(await crawl(ctx, ['www.a.test']), ['held']);
    assert.deepEqual(grants(ctx).map((g) => g.url), ['https://www.a.test/']);
    assert.equal(grants(ctx)[0]!.held, undefined);
    await noteStoredDomain(ctx, { domain: 'a.test' });
    ctx.clock.advance(1000);
    await crawl(ctx, ['www.a.test']);
    assert.deepEqual(grants(ctx).map((g) => g.url), ['https://www.a.test/', 'https://www.a.test/held1']);
    const over = outcomes(ctx).filter((o) => o.url === 'https://www.a.test/held2');
    assert.equal(over.length, 1);
    assert.match(over[0]!.reason!, /^max_pages: the crawl's limit of 2 pages is reached$/);
  });
});
