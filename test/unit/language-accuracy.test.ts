import { it } from 'node:test';
import assert from 'node:assert/strict';
import { measureLanguageAccuracy } from '../../scripts/language-accuracy.js';

it('language identification on the UDHR: the major scripts right on 400-character passages', async () => {
  const { rows } = await measureLanguageAccuracy(400);
  const by = new Map(rows.map((r) => [r.script, r]));
  for (const [script, least] of [['Latin', 0.93], ['Cyrillic', 0.85], ['Arabic', 0.95], ['Devanagari', 0.95], ['CJK', 0.9], ['Greek', 0.95], ['Thai', 0.95]] as const) {
    const row = by.get(script);
    assert.ok(row !== undefined && row.passages > 0, `${script}: no passages`);
    assert.ok(row.correct / row.passages >= least, `${script}: ${row.correct}/${row.passages} right`);
  }
});
