import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { addSettingsOptions, mergeSettings, type SettingsFlags } from '../../cli/settings-flags.js';
import type { CrawlSettings } from '../../pipeline/settings.js';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { serveHost } from '../../stages/politeness-gate/serve-host.js';
import { sitemapsOfSeed } from '../../stages/politeness-gate/seed-sitemaps.js';
import { decodeDiscoveredLinks, decodeGrant, decodeOutcome, JobSpec, type AdmittedUrl, type JobRecord } from '../../schemas/index.js';
import type { HttpRequest } from '../../ports/http.js';
import { PACING_GUARD_MS } from '../../stages/shared/politeness/host-pacing.js';
import { createFakeContext, httpResponse, queuedOnly, settleLikeRunner, stageInput, type FakeContext, type Responder } from '../support/fake-context.js';

const HOST = 'docs.example.com';
let frontierSeq = 0;

const seed = (path = '/', host = HOST): AdmittedUrl => ({
  v: 1,
  url: `https://${host}${path}`,
  host,
  domain: 'example.com',
  depth: 0,
  source_url: null,
  via: 'seed',
  fetch_id: `fid-${host}${path}`,
  admitted_at: 0,
});

/** robots.txt answers; the gate fetches nothing else */
const robots =
  (status: number, body = ''): Responder =>
  (req: HttpRequest) => {
    assert.equal(new URL(req.url).pathname, '/robots.txt', `the gate fetched ${req.url}`);
    return httpResponse(status, { body, headers: { 'content-type': 'text/plain' } });
  };

async function queue(ctx: FakeContext, m: AdmittedUrl): Promise<void> {
  const outcome = await handleGateIntake(stageInput([m], { streamSeq: ++frontierSeq, subject: 'crawl.frontier.0' }), ctx);
  assert.ok(queuedOnly(outcome));
  await settleLikeRunner(ctx, outcome);
}

/** Queues the URL, lets the gate fetch robots.txt and wait its delay, then grants it. */
async function grantOne(ctx: FakeContext, m: AdmittedUrl): Promise<void> {
  await queue(ctx, m);
  assert.equal((await serveHost(ctx, m.host)).kind, 'wait', 'robots.txt first');
  ctx.clock.advance(ctx.settings.minDelayMs + PACING_GUARD_MS);
  assert.deepEqual(await serveHost(ctx, m.host), { kind: 'granted' });
  assert.equal(decodeGrant(ctx.streams.on('crawl.ready').at(-1)!.data).url, m.url);
}

const sitemapMessages = (ctx: FakeContext) =>
  ctx.streams.messages.filter((m) => m.subject.startsWith('crawl.links.')).map((m) => ({ msgId: m.msgId, ...decodeDiscoveredLinks(m.data) }));

const gateContext = (respond: Responder, sitemaps?: boolean) =>
  createFakeContext({ respond, settings: { minDelayMs: 1000, adaptiveDelayFactor: 0, ...(sitemaps === undefined ? {} : { sitemaps }) } });

describe('crawl run reads its seed hosts\' sitemaps', () => {
  test("a seed's grant sends the sitemaps its robots.txt names to normalize, to be fetched as sitemaps (no job: the crawl's own)", async () => {
    const ctx = gateContext(robots(200, `User-agent: *\nDisallow: /private/\nSitemap: https://${HOST}/sitemap_index.xml\nSitemap: https://${HOST}/news/sitemap.xml.gz\n`));
    await grantOne(ctx, seed());
    const sent = sitemapMessages(ctx);
    assert.equal(sent.length, 1);
    const m = sent[0]!;
    assert.deepEqual(
      { source_url: m.source_url, depth: m.depth, via: m.via, job: m.job, links: m.links },
      {
        source_url: `https://${HOST}/`,
        depth: 0,
        via: 'sitemap',
        job: undefined,
        links: [
          { url: `https://${HOST}/sitemap_index.xml`, fetch_as: 'sitemap' },
          { url: `https://${HOST}/news/sitemap.xml.gz`, fetch_as: 'sitemap' },
        ],
      },
    );
    assert.equal(m.msgId, `sitemaps:${seed().fetch_id}`, 'a grant served again sends them once');
  });

  test('a robots.txt that names no sitemap (or none at all): /sitemap.xml', async () => {
    for (const respond of [robots(200, 'User-agent: *\nDisallow:\n'), robots(404)]) {
      const ctx = gateContext(respond);
      await grantOne(ctx, seed('/start.html'));
      assert.deepEqual(sitemapMessages(ctx)[0]!.links, [{ url: `https://${HOST}/sitemap.xml`, fetch_as: 'sitemap' }]);
    }
  });

  test('a seed robots.txt keeps out ends robots_disallowed, and its host\'s sitemaps are still read', async () => {
    const ctx = gateContext(robots(200, `User-agent: *\nDisallow: /\nAllow: /docs/\nSitemap: https://${HOST}/docs/sitemap.xml\n`));
    await queue(ctx, seed());
    // robots.txt, then the seed is settled without a request in the same turn
    assert.deepEqual(await serveHost(ctx, HOST), { kind: 'idle' });
    assert.deepEqual(ctx.streams.on('crawl.ready'), [], 'no request for the seed');
    const ended = ctx.streams.on('crawl.outcomes').map((m) => decodeOutcome(m.data));
    assert.deepEqual(ended.map((o) => [o.url, o.outcome]), [[seed().url, 'robots_disallowed']]);
    assert.deepEqual(sitemapMessages(ctx).map((m) => m.links), [[{ url: `https://${HOST}/docs/sitemap.xml`, fetch_as: 'sitemap' }]]);
  });

  test('--no-sitemaps: the seed is granted and nothing else is sent', async () => {
    const ctx = gateContext(robots(200, `Sitemap: https://${HOST}/sitemap.xml\n`), false);
    await grantOne(ctx, seed());
    assert.deepEqual(sitemapMessages(ctx), []);
  });

  test('only a seed reads sitemaps: not a link, a redirect target, a sitemap URL, or a URL found in a sitemap', async () => {
    for (const m of [
      { ...seed('/a'), depth: 1, source_url: `https://${HOST}/`, via: 'link' as const },
      { ...seed('/b'), source_url: `http://${HOST}/b`, via: 'redirect' as const },
      { ...seed('/sitemap.xml'), via: 'sitemap' as const, fetch_as: 'sitemap' as const },
      { ...seed('/listed.html'), via: 'sitemap' as const },
    ]) {
      const ctx = gateContext(robots(200, `Sitemap: https://${HOST}/sitemap.xml\n`));
      await grantOne(ctx, m);
      assert.deepEqual(sitemapMessages(ctx), [], m.url);
    }
  });
});

describe("a job's seeds follow the job's own sitemaps field, whatever the crawl's setting", () => {
  const job = (sitemaps: boolean): JobRecord => ({
    id: 'job-1',
    spec: JobSpec.parse({ seeds: [`https://${HOST}/`], sitemaps }),
    state: 'active',
    created_at: 0,
    runs: 1,
    last_run_at: 0,
    next_run_at: null,
    via: 'http',
    scope_domains: ['example.com'],
    min_delay_ms: 1000,
  });
  const jobSeed = { ...seed(), job: 'job-1' };
  const listed = [`https://${HOST}/sitemap.xml`];

  test('a job that reads sitemaps, in a crawl that does not', () => {
    const [m] = sitemapsOfSeed(jobSeed, job(true), false, listed, 4);
    assert.equal(decodeDiscoveredLinks(m!.data).job, 'job-1');
  });
  test('a job that does not, in a crawl that does', () => {
    assert.deepEqual(sitemapsOfSeed(jobSeed, job(false), true, listed, 4), []);
  });
  test("a job's URL whose job record is gone reads none", () => {
    assert.deepEqual(sitemapsOfSeed(jobSeed, null, true, listed, 4), []);
  });
  test("the crawl's own seed reads them by the crawl's setting", () => {
    assert.equal(sitemapsOfSeed(seed(), null, true, listed, 4).length, 1);
    assert.deepEqual(sitemapsOfSeed(seed(), null, false, listed, 4), []);
  });
});

describe('--no-sitemaps is a crawl setting, stored with the crawl', () => {
  const parse = (args: string[], stored: CrawlSettings | null = null) => {
    const cmd = addSettingsOptions(new Command('run').exitOverride());
    cmd.parse(args, { from: 'user' });
    return mergeSettings(stored, cmd.opts<SettingsFlags>());
  };

  test('on unless turned off', () => {
    assert.equal(parse([]).sitemaps, true);
    assert.equal(parse(['--no-sitemaps']).sitemaps, false);
  });

  test('a resumed crawl keeps what it was started with unless the flag is given again', () => {
    const off = parse(['--no-sitemaps', '--crawl-id', 'c1']);
    assert.equal(parse([], off).sitemaps, false);
    assert.equal(parse(['--sitemaps'], off).sitemaps, true);
  });
});
