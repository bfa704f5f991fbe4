import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkOutcome, defineStage, emit, fail, retry, stageTestContext, StageDefinitionError } from '../../pipeline/custom-stage.js';
import { customStageInput, loadStageModules, queuedUrlMessages, runHandler } from '../../app/custom-stages.js';
import { customStagePermissions } from '../../ops/nats/permissions.js';
import { decodeDiscoveredLinks } from '../../schemas/index.js';
import { subjectMatches } from '../../topology/index.js';

const products = defineStage({
  name: 'products',
  input: 'extracted',
  table: { columns: { name: 'VARCHAR', price: 'DOUBLE', in_stock: 'BOOLEAN' } },
  handle: ({ message }) => emit({ rows: [{ name: message.title, price: 9.5 }] }),
});

describe('defineStage and what a handler returns (pipeline/custom-stage.ts)', () => {
  test('a definition gets its defaults; its table is named after it', () => {
    assert.equal(products.table!.name, 'products');
    assert.equal(products.ackWaitMs, 30_000);
    assert.equal(defineStage({ name: 'link-scorer', input: 'extracted', table: { columns: { url: 'VARCHAR' } }, handle: () => emit() }).table!.name, 'link_scorer');
  });

  test('bad definitions are refused with what is wrong', () => {
    const cases: Array<[object, RegExp]> = [
      [{ name: 'Bad Name', input: 'extracted', handle: () => emit() }, /stage name must be lower-case/],
      [{ name: 'fetch', input: 'extracted', handle: () => emit() }, /built-in stage/],
      [{ name: 'x', input: 'frontier', handle: () => emit() }, /input must be one of fetched, extracted, pages, outcomes/],
      [{ name: 'x', input: 'pages' }, /handle must be a function/],
      [{ name: 'x', input: 'pages', table: { name: 'pages', columns: { a: 'VARCHAR' } }, handle: () => emit() }, /table name "pages" is not allowed/],
      [{ name: 'x', input: 'pages', table: { name: 'urls', columns: { a: 'VARCHAR' } }, handle: () => emit() }, /table name "urls" is not allowed/],
      [{ name: 'x', input: 'pages', table: { columns: { source_url: 'VARCHAR' } }, handle: () => emit() }, /added by the crawler/],
      [{ name: 'x', input: 'pages', table: { columns: { a: 'TEXT' } }, handle: () => emit() }, /column a has type "TEXT"/],
      [{ name: 'x', input: 'pages', ackWaitMs: 10, handle: () => emit() }, /ackWaitMs/],
    ];
    for (const [spec, message] of cases) assert.throws(() => defineStage(spec as never), (err: Error) => err instanceof StageDefinitionError && message.test(err.message));
  });

  test('outcomes pass; anything else, rows that do not fit the table and bad URLs are named', () => {
    assert.deepEqual(checkOutcome(emit({ rows: [{ name: 'a', price: 1, in_stock: null }] }), products), { kind: 'emit', rows: [{ name: 'a', price: 1, in_stock: null }], urls: [] });
    assert.deepEqual(checkOutcome(retry(100, 'later'), products), { kind: 'retry', afterMs: 100, reason: 'later' });
    assert.deepEqual(checkOutcome(fail('no'), products), { kind: 'fail', reason: 'no' });
    assert.match(checkOutcome(undefined, products) as string, /returned undefined, not an outcome/);
    assert.match(checkOutcome({ ok: true }, products) as string, /returned \{"ok":true\}, not an outcome/);
    assert.match(checkOutcome(emit({ rows: [{ nme: 'a' }] }), products) as string, /row 0: unknown column "nme"/);
    assert.match(checkOutcome(emit({ rows: [{ price: '9.99' }] }), products) as string, /column price \(DOUBLE\) got "9.99"/);
    assert.match(checkOutcome(emit({ urls: [{ url: 'http://a/', depth: -1 }] }), products) as string, /depth/);
    assert.match(checkOutcome(emit({ urls: [{ url: 'http://a/', priority: 'urgent' as never }] }), products) as string, /priority must be high, normal or low/);
    const noTable = defineStage({ name: 'scorer', input: 'extracted', handle: () => emit() });
    assert.match(checkOutcome(emit({ rows: [{}] }), noTable) as string, /declares no table/);
  });
});

describe('running a module stage (app/custom-stages.ts)', () => {
  test('its consumer is named after it, on its input stream, reading only its subjects', () => {
    const fetched = customStageInput(defineStage({ name: 'raw', input: 'fetched', handle: () => emit() }));
    assert.deepEqual([fetched.stream, fetched.durable, fetched.filterSubject], ['CRAWL_FETCHED', 'raw', 'crawl.fetched.>']);
    const outcomes = customStageInput(defineStage({ name: 'o', input: 'outcomes', handle: () => emit() }));
    assert.deepEqual([outcomes.stream, outcomes.filterSubject], ['CRAWL_RESULTS', 'crawl.outcomes.*']);
  });

  test('queued URLs become discovered links, one message per depth, with the page as their source', () => {
    const page = { url: 'http://a.test/x', host: 'a.test', depth: 2 };
    const msgs = queuedUrlMessages('scorer', 7, page, [{ url: 'http://a.test/1', priority: 'normal' }, { url: 'http://a.test/2', anchor: 'two', priority: 'high' }, { url: 'http://b.test/', depth: 0 }], 4);
    assert.equal(msgs.length, 2);
    assert.ok(msgs.every((m) => subjectMatches('crawl.links.*', m.subject)));
    const [deeper, seed] = msgs.map((m) => decodeDiscoveredLinks(m.data));
    assert.deepEqual(deeper, { v: 1, source_url: 'http://a.test/x', depth: 3, via: 'link', links: [{ url: 'http://a.test/1' }, { url: 'http://a.test/2', anchor: 'two', priority: 'high' }] });
    assert.equal(seed!.depth, 0);
    assert.deepEqual(msgs.map((m) => m.msgId), ['custom-links:scorer:7:3', 'custom-links:scorer:7:0']);
  });

  test('a handler that throws, hangs or returns nonsense gives a reason naming the module', async () => {
    const run = (handle: () => unknown, ackWaitMs = 1000) =>
      runHandler({ module: './m.js', stage: defineStage({ name: 'm', input: 'pages', ackWaitMs, handle: handle as never }) }, { subject: 's', message: {}, seq: 1, deliveryCount: 1 }, stageTestContext(), {} as never);
    assert.deepEqual(await run(() => { throw new Error('boom'); }), { problem: 'stage module ./m.js: the handler threw: boom' });
    assert.deepEqual(await run(() => new Promise(() => {})), { problem: "stage module ./m.js: the handler did not finish within the stage's ack wait (1000 ms)" });
    assert.match((await run(() => 42)).problem!, /^stage module \.\/m\.js: the handler returned number 42, not an outcome/);
    assert.deepEqual(await run(() => Promise.resolve(emit())), { outcome: { kind: 'emit', rows: [], urls: [] } });
  });

  test('loading: a missing module, one without a stage, two stages of one name', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'stage-modules-'));
    try {
      const api = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../pipeline/custom-stage.js');
      writeFileSync(path.join(dir, 'a.mjs'), `import { defineStage, emit } from ${JSON.stringify(api)};\nexport const stage = defineStage({ name: 'a', input: 'pages', handle: () => emit() });\n`);
      writeFileSync(path.join(dir, 'none.mjs'), 'export const x = 1;\n');
      writeFileSync(path.join(dir, 'broken.mjs'), 'export const = ;\n');
      assert.equal((await loadStageModules(['a.mjs'], dir))[0]!.stage.name, 'a');
      await assert.rejects(loadStageModules(['gone.mjs'], dir), /stage module gone\.mjs: not found/);
      await assert.rejects(loadStageModules(['none.mjs'], dir), /stage module none\.mjs: exports no stage \(its exports: x\)/);
      await assert.rejects(loadStageModules(['broken.mjs'], dir), /stage module broken\.mjs: failed to load/);
      await assert.rejects(loadStageModules(['a.mjs', './a.mjs'], dir), /has the name of the stage in a\.mjs/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a module stage's role reads its own consumer only", () => {
    const p = customStagePermissions('products', 'extracted');
    assert.ok(p.publish.includes('$JS.API.CONSUMER.MSG.NEXT.CRAWL_EXTRACTED.products'));
    assert.ok(p.publish.includes('crawl.links.*'));
    assert.ok(p.publish.includes('crawl.dlq.products'));
    assert.ok(!p.publish.some((s) => s.includes('CRAWL_EXTRACTED.simhash') || s === '>' || s.startsWith('$KV.')), 'nothing of other stages, no bucket writes');
    assert.ok(!p.publish.some((s) => s.includes('CRAWL_BODIES')), 'bodies only for a stage on fetched pages');
    assert.ok(customStagePermissions('raw', 'fetched').publish.includes('$JS.API.DIRECT.GET.CRAWL_BODIES'));
    assert.throws(() => customStagePermissions('x', 'frontier'), /input "frontier"/);
  });
});
