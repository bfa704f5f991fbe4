import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { handleSimhash } from '../../stages/simhash/handle.js';
import { hammingDistance, simhash64, simhashToHex } from '../../stages/shared/content-identity/simhash.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';
import { partitionOf } from '../../pipeline/partition.js';
import { decodeExtracted, decodeFinal, decodeRevisit, encodeExtracted, encodeFinal, JobSpec, type ExtractedPage, type JobRecord } from '../../schemas/index.js';
import { jsonValue } from '../../pipeline/kv-store.js';
import { jobKey } from '../../stages/shared/jobs/job-records.js';
import { simhashStage } from '../../stages/simhash/index.js';
import { createFakeContext, emitted, onlyOn, stageInput, subjectsOf, type FakeContext } from '../support/fake-context.js';

/** deterministic pseudo-random prose: `n` words from a small vocabulary */
function prose(seed: number, n: number): string {
  const vocab = ('lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore ' +
    'magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute ' +
    'irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident').split(' ');
  let x = seed >>> 0;
  const words: string[] = [];
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    words.push(vocab[x % vocab.length]!);
  }
  return words.join(' ');
}

const LONG = prose(1, 400);
const WORDS = LONG.split(' ');
/** the same text with one word changed in the middle */
const NEAR = [...WORDS.slice(0, 200), 'completelydifferentword', ...WORDS.slice(201)].join(' ');
const OTHER = prose(99, 400);

function extracted(url: string, text: string, fetchTime: number): ExtractedPage {
  const host = new URL(url).hostname;
  return {
    v: 1,
    fetch_id: `fid:${url}`,
    url,
    host,
    domain: host,
    depth: 0,
    fetch_time: fetchTime,
    fetch_status: 200,
    duration_ms: 10,
    content_type: 'text/html',
    charset: 'utf-8',
    truncated: false,
    content_length: text.length,
    // the body's digest in the real pipeline; the text stands in for the body here
    content_digest: contentDigest(text),
    title: 't',
    text,
    description: null,
    language: null,
    canonical_url: null,
    noindex: false,
    nofollow: false,
    links: [{ url: 'https://a.example/', anchor: 'a', rel: '', source: 'a' }],
    text_full: text,
    headings: [],
    opengraph: {},
    json_ld: [],
    hreflang: [],
  };
}

const run = async (ctx: FakeContext, p: ExtractedPage) => {
  const out = await handleSimhash(stageInput(p, { subject: 'crawl.extracted.0' }), ctx);
  return onlyOn(out, 'crawl.pages', decodeFinal);
};

async function kvKeys(ctx: FakeContext): Promise<string[]> {
  const keys: string[] = [];
  for await (const k of ctx.kv.fingerprints.keys()) keys.push(k);
  return keys;
}

describe('simhash', () => {
  test('precondition: the near-identical text is within the configured distance, the other is far', () => {
    const k = createFakeContext().settings.nearDuplicateDistance;
    assert.ok(hammingDistance(simhash64(LONG), simhash64(NEAR)) <= k);
    assert.ok(hammingDistance(simhash64(LONG), simhash64(OTHER)) > k);
  });

  test('a page passes through with its simhash on crawl.pages.<p>', async () => {
    const ctx = createFakeContext();
    const p = extracted('https://a.example.com/1', LONG, 1000);
    const out = await handleSimhash(stageInput(p), ctx);
    assert.deepEqual(subjectsOf(out), [`crawl.pages.${partitionOf('a.example.com', ctx.settings.partitions)}`]);
    assert.equal(emitted(out)[0]!.msgId, `page:${p.fetch_id}`);
    const f = decodeFinal(emitted(out)[0]!.data);
    assert.deepEqual(f, { ...p, simhash: simhashToHex(simhash64(LONG)), near_duplicate_of: null });
    assert.match(f.simhash, /^[0-9a-f]{16}$/);
  });

  const pairs: Array<{ name: string; second: string; duplicate: boolean }> = [
    { name: 'near-identical text', second: NEAR, duplicate: true },
    { name: 'identical text', second: LONG, duplicate: true },
    { name: 'a totally different text', second: OTHER, duplicate: false },
  ];
  for (const c of pairs) {
    test(`${c.name} on another host → near_duplicate_of ${c.duplicate ? 'the earlier page' : 'null'}`, async () => {
      const ctx = createFakeContext();
      const first = await run(ctx, extracted('https://one.example.com/a', LONG, 1000));
      assert.equal(first.near_duplicate_of, null);
      const second = await run(ctx, extracted('https://two.example.org/b', c.second, 2000));
      assert.equal(second.near_duplicate_of, c.duplicate ? 'https://one.example.com/a' : null);
      assert.equal(ctx.metrics.total('simhash', 'pages', 'near_duplicate'), c.duplicate ? 1 : 0);
    });
  }

  test('the fingerprint extract made is used as is; a message without one (an older stream) gets the same one made here', async () => {
    const ctx = createFakeContext();
    const made = decodeFinal(emitted(await handleSimhash(stageInput(extracted('https://a.example/old', LONG, 1)), ctx))[0]!.data);
    assert.equal(made.simhash, simhashToHex(simhash64(LONG)));
    const given = { ...extracted('https://b.example/new', LONG, 2), simhash: '00000000000000ff', text_words: 400 };
    const carried = decodeFinal(emitted(await handleSimhash(stageInput(given), ctx))[0]!.data);
    assert.equal(carried.simhash, '00000000000000ff', 'not made again');
  });

  test('a page read from its bytes (text and links left undecoded) comes out as the whole page with the verdict', async () => {
    const ctx = createFakeContext();
    await run(ctx, extracted('https://one.example.com/a', LONG, 1000));
    const page = { ...extracted('https://two.example.org/b', NEAR, 2000), text: NEAR.slice(0, 400), simhash: simhashToHex(simhash64(NEAR)), text_words: 400 };
    const bytes = encodeExtracted(page);
    const out = await handleSimhash(stageInput(simhashStage.decode('crawl.extracted.0', bytes)), ctx);
    const final = decodeFinal(emitted(out)[0]!.data);
    assert.deepEqual(final, { ...decodeExtracted(bytes), near_duplicate_of: 'https://one.example.com/a' });
    // the same bytes as the page decoded whole and encoded again would give, but for the order of keys
    assert.deepEqual(decodeFinal(encodeFinal(final)), final);
  });

  test("a job's page carries its next revisit on to persist: the due time the revisit record has, and no change estimate at the first fetch", async () => {
    const ctx = createFakeContext();
    const record: JobRecord = { id: 'j1', spec: JobSpec.parse({ seeds: ['https://a.example/'], revisit: {} }), state: 'active', created_at: 1, runs: 1, last_run_at: null, next_run_at: null, via: 'http', scope_domains: ['a.example'], min_delay_ms: 0 };
    await ctx.kv.jobs.put(jobKey('j1'), jsonValue(record));
    const page = { ...extracted('https://a.example/p', LONG, 1), job: 'j1', simhash: simhashToHex(simhash64(LONG)), text_words: 400 };
    const out = await handleSimhash(stageInput(simhashStage.decode('crawl.extracted.0', encodeExtracted(page))), ctx);
    const final = onlyOn(out, 'crawl.pages', decodeFinal);
    const scheduled = onlyOn(out, 'crawl.revisit', decodeRevisit).state;
    assert.equal(final.next_due_at, scheduled.due_at);
    assert.equal(final.change_rate, null);
    assert.match(final.revisit_note ?? '', /^next revisit in /);
  });

  test('an extracted message without its fingerprint (an older stream) is decoded whole and fingerprinted here', async () => {
    const ctx = createFakeContext();
    const old = extracted('https://a.example/old', LONG, 1);
    const input = simhashStage.decode('crawl.extracted.0', encodeExtracted(old));
    assert.equal((input as ExtractedPage).text, LONG);
    const final = decodeFinal(emitted(await handleSimhash(stageInput(input), ctx))[0]!.data);
    assert.equal(final.simhash, simhashToHex(simhash64(LONG)));
  });

  test('an extracted message whose small fields do not fit the schema is refused by the decode (dead-lettered)', () => {
    const bad = encodeExtracted({ ...extracted('https://a.example/x', LONG, 1), simhash: 'ff', text_words: 4, depth: -1 });
    assert.throws(() => simhashStage.decode('crawl.extracted.0', bad), /depth/);
    assert.throws(() => simhashStage.decode('crawl.extracted.0', bad.subarray(0, 40)), /not valid msgpack/);
  });

  // /docs/latest-v18.x/api/ and /docs/latest-v18.x/api/index.html serve the same body; the
  // copy fetched second reached simhash first. Both were once stored unmarked.
  test('exact copies, the later-fetched one processed first: it is the original, the earlier fetch is marked', async () => {
    const ctx = createFakeContext();
    const later = extracted('https://nodejs.example/docs/latest-v18.x/api/index.html', LONG, 5000);
    const earlier = extracted('https://nodejs.example/docs/latest-v18.x/api/', LONG, 1000);
    assert.equal((await run(ctx, later)).near_duplicate_of, null);
    assert.equal((await run(ctx, earlier)).near_duplicate_of, later.url);
    // a third copy points at the same original; redeliveries of either get their first verdict again
    assert.equal((await run(ctx, extracted('https://mirror.example/api/', LONG, 9000))).near_duplicate_of, later.url);
    assert.equal((await run(ctx, later)).near_duplicate_of, null);
    assert.equal((await run(ctx, earlier)).near_duplicate_of, later.url);
  });

  test('exact copies in fetch order: the earlier fetch is the original', async () => {
    const ctx = createFakeContext();
    assert.equal((await run(ctx, extracted('https://a.example.com/', LONG, 1000))).near_duplicate_of, null);
    assert.equal((await run(ctx, extracted('https://b.example.com/', LONG, 5000))).near_duplicate_of, 'https://a.example.com/');
  });

  test('near-duplicates, the later-fetched one processed first: exactly one of the two is marked', async () => {
    const ctx = createFakeContext();
    assert.equal((await run(ctx, extracted('https://late.example.com/', NEAR, 5000))).near_duplicate_of, null);
    assert.equal((await run(ctx, extracted('https://early.example.com/', LONG, 1000))).near_duplicate_of, 'https://late.example.com/');
    // a third page near both (the same text as the second, in other bytes) points at one of
    // them: the earliest fetch among those indexed before it
    const third = { ...extracted('https://third.example.com/', LONG, 9000), content_digest: contentDigest('other markup, same text') };
    assert.equal((await run(ctx, third)).near_duplicate_of, 'https://early.example.com/');
  });

  test('a redelivered page is not its own duplicate and is not indexed twice', async () => {
    const ctx = createFakeContext();
    const p = extracted('https://one.example.com/a', LONG, 1000);
    await run(ctx, p);
    const keysBefore = await kvKeys(ctx);
    const revisions = await Promise.all(keysBefore.map(async (k) => (await ctx.kv.fingerprints.get(k))!.revision));
    assert.equal((await run(ctx, p)).near_duplicate_of, null);
    assert.deepEqual(await kvKeys(ctx), keysBefore);
    assert.deepEqual(await Promise.all(keysBefore.map(async (k) => (await ctx.kv.fingerprints.get(k))!.revision)), revisions);
  });

  const shortTexts = ['', 'one two three', prose(3, 20)];
  for (const text of shortTexts) {
    test(`short texts (${text.split(/\s+/).filter(Boolean).length} words) are not compared nor indexed`, async () => {
      const ctx = createFakeContext();
      assert.equal((await run(ctx, extracted('https://one.example.com/', text, 1000))).near_duplicate_of, null);
      assert.equal((await run(ctx, extracted('https://two.example.com/', text, 2000))).near_duplicate_of, null);
      assert.deepEqual(await kvKeys(ctx), []);
    });
  }

  test('21 words are compared', async () => {
    const ctx = createFakeContext();
    const text = prose(3, 21);
    await run(ctx, extracted('https://one.example.com/', text, 1000));
    assert.equal((await run(ctx, extracted('https://two.example.com/', text, 2000))).near_duplicate_of, 'https://one.example.com/');
  });

  test('nearDuplicateDistance 0: only exact fingerprints match', async () => {
    const ctx = createFakeContext({ settings: { nearDuplicateDistance: 0 } });
    const d = hammingDistance(simhash64(LONG), simhash64(NEAR));
    await run(ctx, extracted('https://one.example.com/', LONG, 1000));
    assert.equal((await run(ctx, extracted('https://two.example.com/', NEAR, 2000))).near_duplicate_of, d === 0 ? 'https://one.example.com/' : null);
    assert.equal((await run(ctx, extracted('https://three.example.com/', LONG, 3000))).near_duplicate_of, 'https://one.example.com/');
  });
});
