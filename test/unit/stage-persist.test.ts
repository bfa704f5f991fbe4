import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPersistStage } from '../../stages/persist/index.js';
import type { RowSink } from '../../ports/row-sink.js';
import { decodePersistInput, type PersistInput } from '../../stages/persist/handle.js';
import type { RowBatch } from '../../stages/persist/rows.js';
import { encodeFinal, encodeOutcome, type FinalPage, type UrlOutcome } from '../../schemas/index.js';
import type { Disposition, ConsumerStage } from '../../pipeline/stage.js';
import { createFakeContext, stageInput, type FakeContext } from '../support/fake-context.js';

/** A row sink that records batches; each write waits until the test lets it finish (or fail). */
class FakeWriter implements RowSink<RowBatch> {
  readonly batches: RowBatch[] = [];
  closed = false;
  /** when true, writes finish at once; otherwise they wait for `finish()` / `failNext()` */
  auto: boolean;
  private pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  private failWith: Error | null = null;

  constructor(auto = true) {
    this.auto = auto;
  }
  async write(batch: RowBatch): Promise<unknown> {
    this.batches.push(structuredClone(batch));
    if (this.failWith) {
      const e = this.failWith;
      this.failWith = null;
      throw e;
    }
    if (this.auto) return;
    await new Promise<void>((resolve, reject) => this.pending.push({ resolve, reject }));
    return;
  }
  async close(): Promise<void> {
    this.closed = true;
  }
  /** finishes the oldest write in progress */
  finish(): void {
    const p = this.pending.shift();
    assert.ok(p, 'a write is in progress');
    p.resolve();
  }
  failNext(err: Error): void {
    this.failWith = err;
  }
  get writesInProgress(): number {
    return this.pending.length;
  }
}

/** Tracks a promise's state without awaiting it. */
function track<T>(p: Promise<T>) {
  const s: { state: 'pending' | 'resolved' | 'rejected'; value?: T; error?: unknown } = { state: 'pending' };
  p.then(
    (value) => Object.assign(s, { state: 'resolved', value }),
    (error) => Object.assign(s, { state: 'rejected', error }),
  );
  return s;
}

/** lets every ready promise callback run */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function finalPage(n: number, over: Partial<FinalPage> = {}): FinalPage {
  return {
    v: 1,
    fetch_id: `fid-${n}`,
    url: `https://www.example.com/p${n}`,
    host: 'www.example.com',
    domain: 'example.com',
    depth: 2,
    fetch_time: 1_700_000_000_000 + n,
    fetch_status: 200,
    duration_ms: 42,
    content_type: 'text/html',
    charset: 'utf-8',
    truncated: false,
    content_length: 1234,
    content_digest: 'sha1:ABC',
    title: 'Title',
    text: 'Some text',
    description: 'desc',
    language: 'en',
    canonical_url: null,
    noindex: false,
    nofollow: true,
    links: [
      { url: 'https://www.example.com/a', anchor: 'A', rel: '', source: 'a' },
      { url: 'https://other.org/b', anchor: 'B', rel: 'nofollow', source: 'iframe' },
    ],
    text_full: 'Menu Some text Footer',
    headings: [{ level: 1, text: 'Title' }],
    opengraph: { 'og:title': 'Title' },
    json_ld: [{ '@type': 'Article', headline: 'Title' }],
    hreflang: [],
    text_source: 'main',
    author: 'Jane Doe',
    published_at: 1_699_000_000_000,
    site_name: 'Example News',
    robots_directives: 'x-robots-tag: nofollow',
    importance: 12,
    text_markdown: '# Title\n\nSome [text](https://www.example.com/a)',
    simhash: '0123456789abcdef',
    near_duplicate_of: 'https://mirror.example.org/p',
    ...over,
  };
}

function urlOutcome(n: number, over: Partial<UrlOutcome> = {}): UrlOutcome {
  return {
    v: 1,
    event_id: `ev-${n}`,
    fetch_id: `fid-${n}`,
    url: `https://www.example.com/o${n}`,
    host: 'www.example.com',
    outcome: 'http_error',
    reason: 'http 404',
    fetch_status: 404,
    fetch_time: 1_700_000_000_000 + n,
    duration_ms: 7,
    depth: 1,
    ...over,
  };
}

const pageIn = (p: FinalPage): PersistInput => ({ kind: 'page', page: p });
const outcomeIn = (o: UrlOutcome): PersistInput => ({ kind: 'outcome', outcome: o });

function setup(opts: { maxRows: number; maxDelayMs: number }, auto = true) {
  const writer = new FakeWriter(auto);
  const stage = createPersistStage(writer, opts);
  const ctx = createFakeContext();
  let seq = 0;
  const handle = (m: PersistInput) => stage.handle(stageInput(m, { streamSeq: ++seq }), ctx);
  return { writer, stage, ctx, handle };
}

describe('persist', () => {
  test('size-triggered: handlers resolve only once the batch holding their rows is written', async () => {
    const { writer, handle } = setup({ maxRows: 4, maxDelayMs: 60_000 }, false);
    const a = track(handle(outcomeIn(urlOutcome(1))));
    const b = track(handle(outcomeIn(urlOutcome(2))));
    await settle();
    assert.equal(writer.batches.length, 0, 'below maxRows and before the timer: nothing written');
    assert.deepEqual([a.state, b.state], ['pending', 'pending']);

    // a page is two rows (pages + fetch_log): 4 rows reached → flush
    const c = track(handle(pageIn(finalPage(3))));
    await settle();
    assert.equal(writer.batches.length, 1);
    assert.equal(writer.batches[0]!.fetch_log.length, 3);
    assert.deepEqual([a.state, b.state, c.state], ['pending', 'pending', 'pending'], 'the write is still in progress');

    writer.finish();
    await settle();
    assert.deepEqual([a.state, b.state, c.state], ['resolved', 'resolved', 'resolved']);
    assert.deepEqual(a.value, { kind: 'emit', messages: [] } satisfies Disposition, 'persist emits nothing');
  });

  test('timer-triggered: a partial batch is written after maxDelayMs', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { writer, handle } = setup({ maxRows: 1000, maxDelayMs: 500 });
    const a = track(handle(outcomeIn(urlOutcome(1))));
    t.mock.timers.tick(300);
    const b = track(handle(outcomeIn(urlOutcome(2))));
    t.mock.timers.tick(199);
    await settle();
    assert.equal(writer.batches.length, 0);
    assert.deepEqual([a.state, b.state], ['pending', 'pending']);
    // the timer started with the first row of the batch, not the last
    t.mock.timers.tick(1);
    await settle();
    assert.equal(writer.batches.length, 1);
    assert.deepEqual(writer.batches[0]!.fetch_log.map((r) => r.event_id), ['ev-1', 'ev-2']);
    assert.deepEqual([a.state, b.state], ['resolved', 'resolved']);

    // a new batch starts a new timer
    const c = track(handle(outcomeIn(urlOutcome(3))));
    t.mock.timers.tick(499);
    await settle();
    assert.equal(c.state, 'pending');
    t.mock.timers.tick(1);
    await settle();
    assert.equal(c.state, 'resolved');
    assert.equal(writer.batches.length, 2);
  });

  test('a size-triggered flush cancels the timer (no empty write later)', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { writer, handle } = setup({ maxRows: 2, maxDelayMs: 500 });
    const a = track(handle(outcomeIn(urlOutcome(1))));
    const b = track(handle(outcomeIn(urlOutcome(2))));
    await settle();
    assert.deepEqual([a.state, b.state], ['resolved', 'resolved']);
    t.mock.timers.tick(10_000);
    await settle();
    assert.equal(writer.batches.length, 1);
  });

  test('a writer error rejects the handlers of that batch (the runner retries them); the next batch works', async () => {
    const { writer, handle } = setup({ maxRows: 2, maxDelayMs: 60_000 });
    writer.failNext(new Error('disk full'));
    const a = track(handle(outcomeIn(urlOutcome(1))));
    const b = track(handle(outcomeIn(urlOutcome(2))));
    await settle();
    assert.deepEqual([a.state, b.state], ['rejected', 'rejected']);
    assert.match(String((a.error as Error).message), /disk full/);

    const c = track(handle(outcomeIn(urlOutcome(1))));
    const d = track(handle(outcomeIn(urlOutcome(2))));
    await settle();
    assert.deepEqual([c.state, d.state], ['resolved', 'resolved']);
    assert.equal(writer.batches.length, 2);
  });

  test('files are written one at a time: a second batch waits for the first write', async () => {
    const { writer, handle } = setup({ maxRows: 1, maxDelayMs: 60_000 }, false);
    const a = track(handle(outcomeIn(urlOutcome(1))));
    const b = track(handle(outcomeIn(urlOutcome(2))));
    await settle();
    assert.equal(writer.batches.length, 1, 'the second write has not started');
    writer.finish();
    await settle();
    assert.deepEqual([a.state, b.state], ['resolved', 'pending']);
    assert.equal(writer.batches.length, 2);
    writer.finish();
    await settle();
    assert.equal(b.state, 'resolved');
  });

  test('page → one pages row, its links rows and a fetched fetch_log row', async () => {
    const { writer, handle } = setup({ maxRows: 1, maxDelayMs: 60_000 });
    const p = finalPage(7);
    await handle(pageIn(p));
    assert.equal(writer.batches.length, 1);
    const batch = writer.batches[0]!;
    assert.deepEqual(batch.pages, [
      {
        fetch_id: 'fid-7',
        url: 'https://www.example.com/p7',
        url_host_name: 'www.example.com',
        url_host_registered_domain: 'example.com',
        depth: 2,
        fetch_time: p.fetch_time,
        fetch_status: 200,
        content_mime_type: 'text/html',
        content_charset: 'utf-8',
        content_length: 1234,
        content_digest: 'sha1:ABC',
        content_truncated: false,
        title: 'Title',
        text: 'Some text',
        description: 'desc',
        content_languages: 'en',
        canonical_url: null,
        simhash: '0123456789abcdef',
        near_duplicate_of: 'https://mirror.example.org/p',
        noindex: false,
        nofollow: true,
        outlinks: 2,
        duration_ms: 42,
        redirected_from: null,
        redirect_chain: null,
        crawl_id: 'test',
        text_full: 'Menu Some text Footer',
        headings: '[{"level":1,"text":"Title"}]',
        opengraph: '{"og:title":"Title"}',
        json_ld: '[{"@type":"Article","headline":"Title"}]',
        hreflang: null,
        text_source: 'main',
        author: 'Jane Doe',
        published_at: 1_699_000_000_000,
        site_name: 'Example News',
        rendered: false,
        robots_directives: 'x-robots-tag: nofollow',
        importance: 12,
        text_markdown: '# Title\n\nSome [text](https://www.example.com/a)',
      },
    ]);
    assert.deepEqual(batch.links, [
      { fetch_id: 'fid-7', src_url: p.url, dst_url: 'https://www.example.com/a', anchor_text: 'A', rel: '', crawl_id: 'test', source: 'a' },
      { fetch_id: 'fid-7', src_url: p.url, dst_url: 'https://other.org/b', anchor_text: 'B', rel: 'nofollow', crawl_id: 'test', source: 'iframe' },
    ]);
    assert.deepEqual(batch.fetch_log, [
      {
        event_id: 'fetched:fid-7',
        fetch_id: 'fid-7',
        url: p.url,
        url_host_name: 'www.example.com',
        outcome: 'fetched',
        reason: 'stored',
        fetch_status: 200,
        fetch_time: p.fetch_time,
        duration_ms: 42,
        depth: 2,
        fetch_redirect: null,
        crawl_id: 'test',
        next_due_at: null,
        change_rate: null,
      },
    ]);
  });

  test('a rendered page: rendered is true and fetch_log says what rendering did; a failed render keeps its reason', async () => {
    const { writer, handle } = setup({ maxRows: 1, maxDelayMs: 60_000 });
    await handle(pageIn(finalPage(1, { rendered: true, render_note: 'rendered (--render pattern): settled after 812 ms, 3 requests' })));
    await handle(pageIn(finalPage(2, { rendered: false, render_note: 'not rendered: the render timed out 3 times' })));
    // a job's rendered page: its revisit note follows the render note
    await handle(pageIn(finalPage(3, { rendered: true, render_note: 'rendered (--render pattern): settled after 500 ms', revisit_note: 'revisit: changed since the fetch of x; next in 1h' })));
    const [rendered, failed] = writer.batches.flatMap((b) => b.pages);
    assert.deepEqual([rendered!.rendered, failed!.rendered], [true, false]);
    assert.deepEqual(
      writer.batches.flatMap((b) => b.fetch_log).map((r) => r.reason),
      [
        'stored; rendered (--render pattern): settled after 812 ms, 3 requests',
        'stored; not rendered: the render timed out 3 times',
        'stored; rendered (--render pattern): settled after 500 ms; revisit: changed since the fetch of x; next in 1h',
      ],
    );
  });

  test("a job's URL scheduled for revisit: its fetch_log row says when it is due and how often it changes", async () => {
    const { writer, handle } = setup({ maxRows: 1, maxDelayMs: 60_000 });
    const due = 1_700_000_600_000;
    await handle(pageIn(finalPage(1, { revisit_note: 'next revisit in 10 min', next_due_at: due, change_rate: null })));
    await handle(outcomeIn(urlOutcome(2, { outcome: 'not_modified', reason: 'not modified', fetch_status: 304, next_due_at: due + 1, change_rate: 0.25 })));
    await handle(outcomeIn(urlOutcome(3)));
    const rows = writer.batches.flatMap((b) => b.fetch_log).map((r) => [r.outcome, r.next_due_at, r.change_rate]);
    assert.deepEqual(rows, [
      ['fetched', due, null],
      ['not_modified', due + 1, 0.25],
      ['http_error', null, null],
    ]);
  });

  test('a page reached through redirects records where it came from', async () => {
    const { writer, handle } = setup({ maxRows: 1, maxDelayMs: 60_000 });
    await handle(pageIn(finalPage(1, { redirect_chain: ['https://www.example.com/old', 'https://www.example.com/older'] })));
    const row = writer.batches[0]!.pages[0]!;
    assert.equal(row.redirected_from, 'https://www.example.com/old');
    assert.deepEqual(JSON.parse(row.redirect_chain!), ['https://www.example.com/old', 'https://www.example.com/older']);
  });

  test('a page extracted before text_source, the article fields and markdown existed gets NULLs there', async () => {
    const { writer, handle } = setup({ maxRows: 1, maxDelayMs: 60_000 });
    const { text_source: _s, author: _a, published_at: _p, site_name: _n, text_markdown: _m, ...older } = finalPage(1);
    await handle(pageIn(older));
    const row = writer.batches[0]!.pages[0]!;
    assert.deepEqual([row.text_source, row.author, row.published_at, row.site_name, row.text_markdown], [null, null, null, null, null]);
  });

  test('a truncated page is logged as such', async () => {
    const { writer, handle } = setup({ maxRows: 1, maxDelayMs: 60_000 });
    await handle(pageIn(finalPage(1, { truncated: true })));
    assert.equal(writer.batches[0]!.pages[0]!.content_truncated, true);
    assert.match(writer.batches[0]!.fetch_log[0]!.reason, /truncated/);
  });

  const outcomeCases: UrlOutcome[] = [
    urlOutcome(1),
    urlOutcome(2, { outcome: 'filtered', reason: 'out_of_scope: x', fetch_id: null, fetch_status: null, duration_ms: null, depth: null }),
    urlOutcome(3, { outcome: 'network_error', reason: 'dns: ENOTFOUND', fetch_status: null }),
    urlOutcome(4, { outcome: 'robots_disallowed', reason: 'robots.txt: Disallow: /', fetch_status: null, duration_ms: null }),
  ];
  for (const o of outcomeCases) {
    test(`outcome ${o.outcome} → one fetch_log row`, async () => {
      const { writer, handle, ctx } = setup({ maxRows: 1, maxDelayMs: 60_000 });
      await handle(outcomeIn(o));
      assert.deepEqual(writer.batches, [
        {
          pages: [],
          links: [],
          fetch_log: [
            {
              event_id: o.event_id,
              fetch_id: o.fetch_id,
              url: o.url,
              url_host_name: o.host,
              outcome: o.outcome,
              reason: o.reason,
              fetch_status: o.fetch_status,
              fetch_time: o.fetch_time,
              duration_ms: o.duration_ms,
              depth: o.depth,
              fetch_redirect: null,
              crawl_id: 'test',
              next_due_at: null,
              change_rate: null,
            },
          ],
        },
      ]);
      assert.equal(ctx.metrics.total('persist', 'rows', o.outcome), 1);
    });
  }

  test('close() writes what is pending, then closes the writer', async () => {
    const { writer, handle, stage, ctx } = setup({ maxRows: 1000, maxDelayMs: 60_000 });
    const a = track(handle(outcomeIn(urlOutcome(1))));
    await settle();
    assert.equal(a.state, 'pending');
    await (stage as ConsumerStage<PersistInput>).close!(ctx as FakeContext);
    await settle();
    assert.equal(a.state, 'resolved');
    assert.equal(writer.batches.length, 1);
    assert.equal(writer.closed, true);
  });

  test('decode: crawl.pages.* → page, crawl.outcomes.* → outcome', () => {
    const p = finalPage(1);
    const o = urlOutcome(1);
    assert.deepEqual(decodePersistInput('crawl.pages.3', encodeFinal(p)), pageIn(p));
    assert.deepEqual(decodePersistInput('crawl.outcomes.3', encodeOutcome(o)), outcomeIn(o));
  });
});
