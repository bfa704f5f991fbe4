import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { collectGarbage } from '../../cli/collect-garbage.js';

test('collectGarbage runs a full collection: an object only a WeakRef holds is gone after it', async () => {
  // made in a turn of its own: an object created or dereferenced in the current turn is kept to its end
  const ref = await (async () => {
    const r = new WeakRef({ payload: new Array(100_000).fill('x') });
    await nextTurn();
    return r;
  })();
  assert.equal(collectGarbage(), true);
  await nextTurn();
  assert.equal(ref.deref(), undefined);
});

test('collectGarbage leaves no gc function behind in the program', () => {
  collectGarbage();
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
});
