import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { handleNormalize, decodeNormalizeInput, type NormalizeInput } from '../../stages/normalize/handle.js';
import type { Disposition } from '../../pipeline/stage.js';
import { partitionOf } from '../../pipeline/partition.js';
import {
  decodeCandidate,
  decodeCandidates,
  decodeOutcome,
  encodeDiscoveredLinks,
  encodeSeed,
  type DiscoveredLinks,
  type DiscoveredLink,
} from '../../schemas/index.js';
import { validateJob } from '../../app/service/job-validation.js';
import { JobStore } from '../../app/service/job-store.js';
import { parseSettings } from '../../pipeline/settings.js';
import type { JobRecord } from '../../schemas/index.js';
import { createFakeContext, decodedOn, emitted, onlyOn, stageInput, T0, type FakeContext, type FakeContextOptions } from '../support/fake-context.js';

const seed = (url: string, depth?: number): NormalizeInput => ({ kind: 'seed', seed: depth === undefined ? { url } : { url, depth } });
const links = (depth: number, urls: Array<string | DiscoveredLink>, via: DiscoveredLinks['via'] = 'link'): NormalizeInput => ({
  kind: 'links',
  links: { v: 1, source_url: 'https://example.com/', depth, via, links: urls.map((u) => (typeof u === 'string' ? { url: u } : u)) },
});

const run = (ctx: FakeContext, input: NormalizeInput) => handleNormalize(stageInput(input), ctx);
/** every candidate published, in order (a message holds one, or a partition's batch) */
const candidatesOn = (out: Disposition) => decodedOn(out, 'crawl.normalized', decodeCandidates).flat();

/** a context whose scope already holds example.com (as after seeding https://example.com/) */
async function seeded(opts: FakeContextOptions = {}): Promise<FakeContext> {
  const ctx = createFakeContext(opts);
  await run(ctx, seed('https://example.com/'));
  return ctx;
}

describe('normalize: seeds', () => {
  const cases: Array<{ input: string; url: string; host: string; domain: string }> = [
    { input: 'HTTP://WWW.Example.COM:80/a/../b?utm_source=x&b=2&a=1#frag', url: 'http://www.example.com/b?a=1&b=2', host: 'www.example.com', domain: 'example.com' },
    { input: 'https://blog.example.co.uk', url: 'https://blog.example.co.uk/', host: 'blog.example.co.uk', domain: 'example.co.uk' },
    { input: 'example.org/x//y', url: 'http://example.org/x/y', host: 'example.org', domain: 'example.org' },
    { input: 'http://h01.site.test:8080/', url: 'http://h01.site.test:8080/', host: 'h01.site.test', domain: 'site.test' },
  ];
  for (const c of cases) {
    test(`seed ${c.input} → ${c.url}, scope += ${c.domain}`, async () => {
      const ctx = createFakeContext();
      const out = await run(ctx, seed(c.input));
      const cand = onlyOn(out, 'crawl.normalized', decodeCandidate);
      assert.deepEqual(cand, { v: 1, url: c.url, host: c.host, domain: c.domain, depth: 0, source_url: null, via: 'seed' });
      assert.equal(emitted(out)[0]!.subject, `crawl.normalized.${partitionOf(c.host, ctx.settings.partitions)}`);
      assert.ok(await ctx.kv.scope.get(c.domain), `scope bucket holds ${c.domain}`);
    });
  }

  test('a seed keeps its given depth', async () => {
    const ctx = createFakeContext();
    const cand = onlyOn(await run(ctx, seed('https://example.com/', 2)), 'crawl.normalized', decodeCandidate);
    assert.equal(cand.depth, 2);
  });

  const invalid: Array<{ input: string; reason: string }> = [
    { input: 'ftp://example.com/file', reason: 'unsupported_scheme' },
    { input: 'mailto:someone@example.com', reason: 'unsupported_scheme' },
    { input: 'http://exa mple.com/', reason: 'invalid_url' },
    { input: 'not a url', reason: 'invalid_url' },
    { input: `https://example.com/${'a'.repeat(3000)}`, reason: 'too_long' },
  ];
  for (const c of invalid) {
    test(`invalid seed ${c.input.slice(0, 40)} → filtered (${c.reason})`, async () => {
      const ctx = createFakeContext();
      const out = await run(ctx, seed(c.input));
      assert.equal(candidatesOn(out).length, 0);
      const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
      assert.equal(o.outcome, 'filtered');
      assert.equal(o.url, c.input);
      assert.ok(o.reason.startsWith(`${c.reason}: `), o.reason);
      assert.equal(o.fetch_id, null);
      assert.equal(o.fetch_time, T0);
      assert.equal(emitted(out)[0]!.subject, `crawl.outcomes.${partitionOf('invalid', ctx.settings.partitions)}`);
      assert.ok(emitted(out)[0]!.msgId, 'a filtered outcome carries a msgId');
      const keys: string[] = [];
      for await (const k of ctx.kv.scope.keys()) keys.push(k);
      assert.deepEqual(keys, [], 'an invalid seed adds nothing to the scope');
    });
  }

  test('decode: plain-text seed and JSON seed on crawl.seeds, links elsewhere', () => {
    assert.deepEqual(decodeNormalizeInput('crawl.seeds', new TextEncoder().encode('https://example.com/')), seed('https://example.com/'));
    assert.deepEqual(decodeNormalizeInput('crawl.seeds', encodeSeed({ url: 'https://example.com/', depth: 1 })), seed('https://example.com/', 1));
    const l = links(1, ['https://example.com/a']);
    assert.deepEqual(decodeNormalizeInput('crawl.links.3', encodeDiscoveredLinks((l as { links: DiscoveredLinks }).links)), l);
  });
});

describe('normalize: links', () => {
  const filteredCases: Array<{ name: string; settings?: FakeContextOptions['settings']; depth: number; url: string; reason: string }> = [
    { name: 'out of scope', depth: 1, url: 'https://other.org/page', reason: 'out_of_scope' },
    { name: 'excluded pattern', settings: { exclude: ['/private/*'] }, depth: 1, url: 'https://example.com/private/x', reason: 'excluded_pattern' },
    { name: 'not included', settings: { include: ['https://example.com/docs/*'] }, depth: 1, url: 'https://example.com/blog/x', reason: 'not_included' },
    { name: 'beyond max depth', settings: { maxDepth: 2 }, depth: 3, url: 'https://example.com/deep', reason: 'max_depth' },
    { name: 'mailto', depth: 1, url: 'mailto:a@example.com', reason: 'unsupported_scheme' },
    { name: 'javascript', depth: 1, url: 'javascript:void(0)', reason: 'unsupported_scheme' },
    { name: 'ftp', depth: 1, url: 'ftp://example.com/f', reason: 'unsupported_scheme' },
    { name: 'unparseable', depth: 1, url: 'http://[::1/', reason: 'invalid_url' },
  ];
  for (const c of filteredCases) {
    test(`${c.name} → filtered with reason ${c.reason}`, async () => {
      const ctx = await seeded({ settings: c.settings });
      const out = await run(ctx, links(c.depth, [c.url]));
      assert.equal(candidatesOn(out).length, 0);
      const o = onlyOn(out, 'crawl.outcomes', decodeOutcome);
      assert.equal(o.outcome, 'filtered');
      assert.ok(o.reason.startsWith(`${c.reason}: `), o.reason);
      assert.equal(o.depth, c.depth);
    });
  }

  test('in scope: canonical candidate with source, depth and via', async () => {
    const ctx = await seeded();
    const out = await run(ctx, links(1, ['https://WWW.example.com/a?utm_medium=x#top'], 'redirect'));
    assert.deepEqual(onlyOn(out, 'crawl.normalized', decodeCandidate), {
      v: 1,
      url: 'https://www.example.com/a',
      host: 'www.example.com',
      domain: 'example.com',
      depth: 1,
      source_url: 'https://example.com/',
      via: 'redirect',
    });
  });

  test('depth equal to maxDepth is still in scope', async () => {
    const ctx = await seeded({ settings: { maxDepth: 2 } });
    assert.equal(candidatesOn(await run(ctx, links(2, ['https://example.com/x']))).length, 1);
  });

  test('duplicate links in one message are emitted once (after canonicalisation)', async () => {
    const ctx = await seeded();
    const out = await run(ctx, links(1, ['https://example.com/a', 'https://EXAMPLE.com/a#x', 'https://example.com:443/a', 'https://example.com/b', 'https://example.com/a']));
    assert.deepEqual(
      candidatesOn(out).map((c) => c.url),
      ['https://example.com/a', 'https://example.com/b'],
    );
    assert.equal(emitted(out).length, 1, 'one message: the batch of their partition');
  });

  test('links published are skipped when they come again; links whose publish failed are forwarded again by the redelivery', async () => {
    const ctx = await seeded();
    const input = links(1, ['https://example.com/a', 'https://example.com/b']);
    const failed = await run(ctx, input); // the runner could not publish: no after-publish step
    assert.equal(candidatesOn(failed).length, 2);
    const redelivered = await run(ctx, input);
    assert.deepEqual(candidatesOn(redelivered).map((c) => c.url), ['https://example.com/a', 'https://example.com/b']);
    if (redelivered.kind === 'emit') await redelivered.afterPublish?.([]);
    assert.deepEqual(candidatesOn(await run(ctx, input)), [], 'once published, already on their way');
  });

  test('a filtered link found twice in one message is reported once', async () => {
    const ctx = await seeded();
    const out = await run(ctx, links(1, ['https://other.org/x', 'https://other.org/x#y']));
    assert.equal(decodedOn(out, 'crawl.outcomes', decodeOutcome).length, 1);
  });

  test('the same filtered URL and reason always gets the same event id and msgId', async () => {
    const ctx = await seeded();
    const a = emitted(await run(ctx, links(1, ['https://other.org/x'])))[0]!;
    ctx.clock.advance(5000);
    const b = emitted(await run(ctx, links(1, ['https://other.org/x'])))[0]!;
    assert.equal(a.msgId, b.msgId);
    assert.equal(decodeOutcome(a.data).event_id, decodeOutcome(b.data).event_id);
  });

  test('a mixed message: each link gets its own verdict, in order', async () => {
    const ctx = await seeded({ settings: { exclude: ['*.pdf'] } });
    const out = await run(ctx, links(1, ['https://example.com/ok', 'https://other.org/', 'https://example.com/doc.pdf', 'tel:+123', 'https://sub.example.com/ok2']));
    assert.deepEqual(
      candidatesOn(out).map((c) => c.url),
      ['https://example.com/ok', 'https://sub.example.com/ok2'],
    );
    assert.deepEqual(
      decodedOn(out, 'crawl.outcomes', decodeOutcome).map((o) => o.reason.split(':')[0]),
      ['out_of_scope', 'excluded_pattern', 'unsupported_scheme'],
    );
  });

  test('scope written by another process (shared bucket) is seen', async () => {
    const ctx = createFakeContext();
    await ctx.kv.scope.put('example.net', new TextEncoder().encode('1'));
    assert.equal(candidatesOn(await run(ctx, links(1, ['https://example.net/']))).length, 1);
  });

  test('empty links message → empty emit', async () => {
    const ctx = await seeded();
    assert.deepEqual(emitted(await run(ctx, links(1, []))), []);
  });
});

describe('normalize: partitions', () => {
  const hosts = ['example.com', 'www.example.com', 'a.example.com', 'b.example.com', 'h01.site.test', 'h02.site.test', 'xn--bcher-kva.de', '127.0.0.1'];
  for (const partitions of [1, 7, 16]) {
    test(`subject = crawl.normalized.partitionOf(host, ${partitions})`, async () => {
      const ctx = createFakeContext({ settings: { partitions } });
      for (const host of hosts) {
        const out = await run(ctx, seed(`http://${host}/`));
        const [e] = emitted(out);
        assert.equal(e!.subject, `crawl.normalized.${partitionOf(host, partitions)}`, host);
        assert.ok(partitionOf(host, partitions) < partitions);
      }
      // links travel the same partition as seeds of the same host
      const out = await run(ctx, links(1, hosts.map((h) => `http://${h}/x`)));
      for (const e of emitted(out)) {
        for (const c of decodeCandidates(e.data)) assert.equal(e.subject, `crawl.normalized.${partitionOf(c.host, partitions)}`);
      }
    });
  }
});

describe('normalize: scope modes, seed batches and seeds that move', () => {
  const verdicts = async (ctx: FakeContext, urls: string[], input = links(1, urls)) => {
    const out = await run(ctx, input);
    const got = new Map<string, string>();
    for (const c of candidatesOn(out)) got.set(c.url, 'in');
    for (const o of decodedOn(out, 'crawl.outcomes', decodeOutcome)) got.set(o.url, o.reason.split(':')[0]!);
    return urls.map((u) => got.get(u));
  };
  const probe = ['https://www.example.co.uk/docs/a.html', 'https://www.example.co.uk/blog/', 'https://shop.example.co.uk/docs/', 'https://elsewhere.org/docs/'];

  for (const [mode, expected] of [
    ['domain', ['in', 'in', 'in', 'out_of_scope']],
    ['host', ['in', 'in', 'out_of_scope', 'out_of_scope']],
    ['prefix', ['in', 'out_of_scope', 'out_of_scope', 'out_of_scope']],
    ['open', ['in', 'in', 'in', 'in']],
  ] as const) {
    test(`--scope ${mode}, seeded with https://www.example.co.uk/docs/`, async () => {
      const ctx = createFakeContext({ settings: { scope: mode } });
      await run(ctx, seed('https://www.example.co.uk/docs/'));
      assert.deepEqual(await verdicts(ctx, probe), expected);
    });
  }

  test('include patterns widen beyond the mode and narrow within it; exclude wins', async () => {
    const ctx = createFakeContext({ settings: { scope: 'host', include: ['*/docs/*'], exclude: ['*.org/*'] } });
    await run(ctx, seed('https://www.example.co.uk/docs/'));
    assert.deepEqual(await verdicts(ctx, probe), ['in', 'not_included', 'in', 'excluded_pattern']);
  });

  test('a crawl resumed with another mode finds its earlier seeds in it', async () => {
    const ctx = createFakeContext();
    await run(ctx, seed('https://www.example.co.uk/docs/'));
    ctx.settings.scope = 'prefix';
    assert.deepEqual(await verdicts(ctx, probe), ['in', 'out_of_scope', 'out_of_scope', 'out_of_scope']);
  });

  test('a message of seeds, one URL a line, puts every seed in the scope before passing any on', async () => {
    const ctx = createFakeContext();
    const input = decodeNormalizeInput('crawl.seeds', new TextEncoder().encode('https://a.example/\n# a comment\n\nhttps://b.example/x\nftp://c.example/\n'));
    assert.equal(input.kind, 'seeds');
    const puts: string[] = [];
    const put = ctx.kv.scope.put.bind(ctx.kv.scope);
    ctx.kv.scope.put = async (k, v) => {
      puts.push(k);
      return put(k, v);
    };
    const out = await run(ctx, input);
    assert.deepEqual(candidatesOn(out).map((c) => c.url).sort(), ['https://a.example/', 'https://b.example/x']);
    assert.ok(puts.includes('a.example') && puts.includes('b.example'), 'both seeds are in the scope');
    assert.deepEqual(decodedOn(out, 'crawl.outcomes', decodeOutcome).map((o) => o.url), ['ftp://c.example/'], 'the bad line is filtered under its own text');
    assert.throws(() => decodeNormalizeInput('crawl.seeds', new TextEncoder().encode('https://a.example/\nhttps://b.example/ x\n')), /one URL a line/);
    assert.deepEqual(await verdicts(ctx, ['https://www.a.example/', 'https://www.b.example/']), ['in', 'in']);
  });

  const redirect = (target: string, fromSeed: boolean, depth = 0): NormalizeInput => ({
    kind: 'links',
    links: { v: 1, source_url: 'https://example.com/', depth, via: 'redirect', links: [{ url: target }], redirect_chain: ['https://example.com/'], ...(fromSeed ? { from_seed: true as const } : {}) },
  });

  for (const [mode, inside, outside] of [
    ['domain', 'https://shop.example.co.uk/', 'https://other.co.uk/'],
    ['host', 'https://www.example.co.uk/x', 'https://shop.example.co.uk/'],
    ['prefix', 'https://www.example.co.uk/en/more/', 'https://www.example.co.uk/fr/'],
  ] as const) {
    test(`--scope ${mode}: a seed that redirects to another domain takes its scope along`, async () => {
      const ctx = createFakeContext({ settings: { scope: mode } });
      await run(ctx, seed('https://example.com/'));
      const out = await run(ctx, redirect('https://www.example.co.uk/en/', true));
      const [c] = candidatesOn(out);
      assert.equal(c?.url, 'https://www.example.co.uk/en/');
      assert.equal(c?.from_seed, true, 'the target carries it on, for its own redirect');
      assert.deepEqual(await verdicts(ctx, [inside, outside]), ['in', 'out_of_scope']);
    });
  }

  test("a link's redirect to another domain stays out of scope", async () => {
    const ctx = await seeded();
    assert.deepEqual(await verdicts(ctx, ['https://www.example.co.uk/'], redirect('https://www.example.co.uk/', false, 1)), ['out_of_scope']);
    assert.deepEqual(await verdicts(ctx, ['https://www.example.co.uk/']), ['out_of_scope']);
  });
});

describe("normalize: a job's scope mode", () => {
  async function withJob(scope: unknown): Promise<FakeContext> {
    const ctx = createFakeContext();
    const v = validateJob({ seeds: ['https://www.example.co.uk/docs/'], scope }, parseSettings({ crawlId: 't' }));
    assert.ok(v.ok, JSON.stringify(v));
    const record: JobRecord = { id: 'job-1', spec: v.spec, state: 'active', created_at: 1, runs: 1, last_run_at: null, next_run_at: null, via: 'http', scope_domains: v.scopeDomains, min_delay_ms: 0 };
    await new JobStore(ctx.kv.jobs).create(record);
    return ctx;
  }
  const jobLinks = (urls: string[], extra: Partial<DiscoveredLinks> = {}): NormalizeInput => ({
    kind: 'links',
    links: { v: 1, source_url: 'https://www.example.co.uk/docs/', depth: 1, via: 'link', links: urls.map((url) => ({ url })), job: 'job-1', ...extra },
  });
  const admitted = async (ctx: FakeContext, input: NormalizeInput) => candidatesOn(await run(ctx, input)).map((c) => c.url);
  const probe = ['https://www.example.co.uk/docs/a', 'https://www.example.co.uk/blog/', 'https://shop.example.co.uk/', 'https://elsewhere.org/'];

  for (const [scope, expected] of [
    [undefined, probe.slice(0, 3)],
    ['host', probe.slice(0, 2)],
    [{ mode: 'prefix' }, probe.slice(0, 1)],
    ['open', probe],
    [{ mode: 'open', include: ['*.org/*'] }, probe.slice(3)],
  ] as const) {
    test(`scope ${JSON.stringify(scope)}`, async () => {
      assert.deepEqual(await admitted(await withJob(scope), jobLinks(probe)), expected);
    });
  }

  test("a job's seed that redirects to another domain takes the job's scope along, for that job only", async () => {
    const ctx = await withJob('host');
    const moved = jobLinks(['https://docs.moved.example/start'], { depth: 0, via: 'redirect', redirect_chain: ['https://www.example.co.uk/docs/'], from_seed: true });
    assert.deepEqual(await admitted(ctx, moved), ['https://docs.moved.example/start']);
    assert.deepEqual(await admitted(ctx, jobLinks(['https://docs.moved.example/next', 'https://www.moved.example/'])), ['https://docs.moved.example/next']);
    // the deployment's own crawl did not gain it
    ctx.settings.scope = 'host';
    assert.deepEqual(await admitted(ctx, links(1, ['https://docs.moved.example/next'])), []);
  });
});
