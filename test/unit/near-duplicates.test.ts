import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from '../../testweb/prng.js';
import { EDIT_SIZES, NEAR_DUPLICATE_MAX_EDIT_FRACTION, editWords, nearDuplicatePairs } from '../../testweb/near-duplicates.js';

/** Word-level edit distance (substitution, insertion, deletion). */
function editDistance(a: readonly string[], b: readonly string[]): number {
  let prev = Int32Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = new Int32Array(b.length + 1);
    row[0] = i;
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

const words = (text: string) => text.split(' ');

describe('testweb near-duplicate pairs', () => {
  const small = { pairsPerSize: 3, unrelatedPairs: 3, minWords: 250, maxWords: 400 };

  test('the same seed gives the same pairs; another seed other pairs', () => {
    assert.deepEqual(nearDuplicatePairs(7, small), nearDuplicatePairs(7, small));
    assert.notDeepEqual(nearDuplicatePairs(7, small)[0]!.original, nearDuplicatePairs(8, small)[0]!.original);
  });

  // at the bench's sizes (1,000–3,000 words, at most 100 edits); crowded edits in a short
  // text can meet a coincidence (a new word equal to a neighbour) that shortens the path by one
  test('every variant is exactly its stated number of word edits away from its original', () => {
    for (const p of nearDuplicatePairs(3, { pairsPerSize: 1, unrelatedPairs: 0 })) {
      assert.equal(editDistance(words(p.original), words(p.variant)), p.editedWords, p.id);
      assert.equal(words(p.original).length, p.words);
    }
  });

  test('one pair set holds every edit size and the unrelated pairs, labelled by the 2 % rule', () => {
    const pairs = nearDuplicatePairs(3, { pairsPerSize: 2 });
    assert.deepEqual([...new Set(pairs.filter((p) => p.kind === 'edit').map((p) => p.editedWords))], [...EDIT_SIZES]);
    assert.equal(pairs.filter((p) => p.kind === 'unrelated').length, 4);
    for (const p of pairs) {
      assert.ok(p.words >= 1000 && p.words <= 3100, `${p.id}: ${p.words} words`);
      assert.equal(p.nearDuplicate, p.kind === 'edit' && p.editedWords <= NEAR_DUPLICATE_MAX_EDIT_FRACTION * p.words, p.id);
    }
  });

  test('unrelated pairs share the page template, not the article', () => {
    for (const p of nearDuplicatePairs(5, small).filter((p) => p.kind === 'unrelated')) {
      const [a, b] = [words(p.original), words(p.variant)];
      assert.deepEqual(a.slice(0, 5), b.slice(0, 5), 'same chrome at the top');
      assert.deepEqual(a.slice(-3), b.slice(-3), 'same chrome at the bottom');
      assert.ok(editDistance(a, b) > a.length / 2, 'different articles');
    }
  });

  test('asking for more edits than words is refused', () => {
    assert.throws(() => editWords(['a', 'b', 'c'], 3, mulberry32(1), 'en'), RangeError);
  });
});
