import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pathOf, repeatedSegments } from '../../stages/normalize/traps.js';
import { handleNormalize } from '../../stages/normalize/handle.js';
import { decodeOutcome } from '../../schemas/index.js';
import { createFakeContext, decodedOn, stageInput } from '../support/fake-context.js';

describe('crawl traps: repeated path segments', () => {
  const cases: Array<[string, string | null]> = [
    ['/a/b/c/d/', null],
    ['/docs/guide/docs/guide/', null],
    ['/a/b/a/b/a/b/', '/a/b repeated 3 times in a row'],
    ['/x/x/x', '/x repeated 3 times in a row'],
    ['/shop/x/x/x/x/item', '/x repeated 4 times in a row'],
    ['/p/q/r/p/q/r/p/q/r/z', '/p/q/r repeated 3 times in a row'],
    ['/2024/01/2024/01/', null],
    ['/', null],
    ['', null],
  ];
  for (const [path, why] of cases) {
    test(`${path || '(empty)'} → ${why ?? 'fine'}`, () => assert.equal(repeatedSegments(path), why));
  }

  test('normalize filters such a link with the reason, and keeps the rest', async () => {
    const ctx = createFakeContext();
    await handleNormalize(stageInput({ kind: 'seed', seed: { url: 'https://example.com/' } }), ctx);
    const out = await handleNormalize(
      stageInput({
        kind: 'links',
        links: { v: 1, source_url: 'https://example.com/', depth: 1, via: 'link', links: [{ url: 'https://example.com/a/b/a/b/a/b/' }, { url: 'https://example.com/a/b/' }] },
      }),
      ctx,
    );
    const outcomes = decodedOn(out, 'crawl.outcomes', decodeOutcome);
    assert.deepEqual(outcomes.map((o) => [o.url, o.reason]), [['https://example.com/a/b/a/b/a/b/', 'trap_repeated_segments: /a/b repeated 3 times in a row']]);
    assert.equal(decodedOn(out, 'crawl.normalized', (d) => d).length, 1);
  });
});

test('pathOf reads the path of a canonical URL as WHATWG URL does', () => {
  for (const u of ['https://example.com/', 'https://example.com/a/b?x=1', 'http://example.com:8080/a/a/a', 'https://[::1]:9/p?q', 'https://example.com/?q=/a/a/a']) {
    assert.equal(pathOf(u), new URL(u).pathname, u);
  }
});
