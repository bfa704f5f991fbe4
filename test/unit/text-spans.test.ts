import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { spansOf, textFromSpans } from '../../schemas/text-spans.js';
import { decodeExtracted, decodeFinal, encodeExtracted, encodeFinal, type ExtractedPage } from '../../schemas/index.js';
import { encodeMessage, SchemaError } from '../../schemas/codec.js';

const line = fc.string({ maxLength: 12 }).map((s) => s.replace(/\n/g, ' '));

/** A full text and a main text made of some of its lines, in order. */
const fullAndMain = fc
  .array(fc.tuple(line, fc.boolean()), { minLength: 1, maxLength: 40 })
  .map((pairs) => ({ full: pairs.map(([l]) => l).join('\n'), main: pairs.filter(([, keep]) => keep).map(([l]) => l).join('\n') }));

function page(text: string, textFull: string): ExtractedPage {
  return {
    v: 1, fetch_id: 'f1', url: 'http://a.test/', host: 'a.test', domain: 'a.test', depth: 0, fetch_time: 1, fetch_status: 200,
    duration_ms: 3, content_type: 'text/html', charset: 'utf-8', truncated: false, content_length: 10, content_digest: 'sha1:X',
    title: 't', text, text_full: textFull, description: null, language: null, canonical_url: null, noindex: false, nofollow: false, links: [],
  };
}

describe('main text as lines of the full text', () => {
  test('any selection of lines round-trips', () => {
    fc.assert(
      fc.property(fullAndMain, ({ full, main }) => {
        const runs = spansOf(main, full);
        if (main === '') return assert.equal(runs, null);
        assert.ok(runs, 'a selection of lines is always found');
        assert.equal(textFromSpans(full, runs), main);
      }),
    );
  });

  test('adjacent lines make one run', () => {
    assert.deepEqual(spansOf('b\nc\ne', 'a\nb\nc\nd\ne'), [2, 3, 8, 1]);
    assert.deepEqual(spansOf('ab', 'xab\nab'), [4, 2], 'a line found inside a longer one is not that line');
    assert.deepEqual(spansOf('a\n\nb', 'a\n\nb'), [0, 4], 'empty lines');
    assert.equal(spansOf('a\n\n', 'a\n'), null, 'more empty lines than the full text has');
  });

  test('a main text that is not a selection of lines is sent as it is', () => {
    assert.equal(spansOf('b\na', 'a\nb'), null, 'order differs');
    assert.equal(spansOf('a cut mid-li', 'a cut mid-line'), null, 'cut to a byte budget');
    const p = page('not in the full text', 'something else');
    assert.deepEqual(decodeExtracted(encodeExtracted(p)), p);
  });

  test('extracted and final messages decode to what was encoded, and are smaller on the wire', () => {
    const full = Array.from({ length: 200 }, (_, i) => `Paragraph ${i} with a few words of body text in it.`).join('\n');
    const main = full.split('\n').slice(20, 180).join('\n');
    const p = page(main, full);
    const wire = encodeExtracted(p);
    assert.deepEqual(decodeExtracted(wire), p);
    assert.ok(wire.length < encodeMessage(p).length - main.length / 2, `${wire.length} bytes vs ${encodeMessage(p).length} literal`);
    const f = { ...p, simhash: '0123456789abcdef', near_duplicate_of: null };
    assert.deepEqual(decodeFinal(encodeFinal(f)), f);
  });

  test('older messages with a literal text still decode', () => {
    const p = page('a', 'a\nb');
    assert.deepEqual(decodeExtracted(encodeMessage(p)), p);
  });

  test('runs that do not fit the full text are a schema error (dead-lettered, not guessed)', () => {
    const bad = encodeMessage({ ...page('', 'a\nb'), text_spans: [1, 5] });
    assert.throws(() => decodeExtracted(bad), SchemaError);
  });
});
