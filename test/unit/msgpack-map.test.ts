import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { MsgpackFormatError, readMapExcept, skipValue, withFieldsAdded } from '../../schemas/msgpack-map.js';

const packr = new Packr({ useRecords: false, moreTypes: false });

/** values of every msgpack type msgpackr writes: ints of each width, floats, strings and bytes of each length class, nesting */
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, false, 0, -1, 127, 128, -33, 255, 256, 65535, 65536, -129, -32769, 2 ** 32, -(2 ** 31) - 1, 2 ** 53 - 1, 0.5, -1.25e300),
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.string({ maxLength: 40 }),
    fc.constantFrom('x'.repeat(31), 'y'.repeat(32), 'z'.repeat(255), 'w'.repeat(256), 'é'.repeat(70000)),
    fc.uint8Array({ maxLength: 300 }),
    fc.array(tie('v'), { maxLength: 20 }),
    fc.dictionary(fc.string({ maxLength: 8 }).filter((k) => k !== '__proto__'), tie('v'), { maxKeys: 20, noNullPrototype: true }),
  ),
})).v;

describe('msgpack map fields', () => {
  test('skipValue ends exactly where each value msgpackr wrote ends', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 5 }), (values) => {
        const parts = values.map((v) => packr.pack(v));
        const all = Buffer.concat(parts);
        let pos = 0;
        for (const p of parts) {
          const end = skipValue(all, pos);
          assert.equal(end - pos, p.length);
          pos = end;
        }
      }),
      { numRuns: 300 },
    );
  });

  test('reading a map but some fields, and adding fields, gives what decoding the whole map would', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }).filter((k) => k !== '__proto__'), value, { maxKeys: 40, noNullPrototype: true }), fc.dictionary(fc.constantFrom('added1', 'added2'), value, { noNullPrototype: true }), (map, extra) => {
        for (const k of Object.keys(extra)) delete map[k];
        const bytes = packr.pack(map);
        const skip = new Set(Object.keys(map).filter((_, i) => i % 2 === 0));
        const { fields, layout } = readMapExcept(bytes, skip);
        const whole = packr.unpack(bytes) as Record<string, unknown>;
        assert.deepEqual(fields, Object.fromEntries(Object.entries(whole).filter(([k]) => !skip.has(k))));
        assert.deepEqual([...layout.keys].sort(), Object.keys(map).sort());
        assert.deepEqual(packr.unpack(withFieldsAdded(bytes, layout, extra)), packr.unpack(packr.pack({ ...whole, ...extra })));
      }),
      { numRuns: 300 },
    );
  });

  test('truncated or malformed bytes are a format error, never a wrong answer', () => {
    const bytes = packr.pack({ a: 'x'.repeat(100), b: [1, 2, 3], c: { d: 1 } });
    for (let n = 0; n < bytes.length; n++) assert.throws(() => readMapExcept(bytes.subarray(0, n), new Set()), MsgpackFormatError);
    assert.throws(() => readMapExcept(packr.pack([1, 2]), new Set()), /not a map/);
    assert.throws(() => readMapExcept(Uint8Array.from([0x81, 0x01, 0x02]), new Set()), /not a string/);
    assert.throws(() => skipValue(Uint8Array.from([0xc1]), 0), /starts no value/);
  });

  test('a field the map has already is not added twice', () => {
    const bytes = packr.pack({ a: 1 });
    const { layout } = readMapExcept(bytes, new Set());
    assert.throws(() => withFieldsAdded(bytes, layout, { a: 2 }), /has a already/);
  });
});
