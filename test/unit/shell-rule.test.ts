// The --render-auto rule (stages/extract/app-shell.ts) on the pages it is measured on
// (scripts/shell-rule.ts): none of the test web's ordinary pages nor of the 121 real article
// pages of the article-extraction benchmark is taken for an application shell, and every
// page the test web builds with a script is.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { articleCorpus, judgeCorpus, testWebCorpora } from '../../scripts/shell-rule.js';

describe('application-shell rule: measured false positives and recall', () => {
  // 6 site hosts have pages of all three layouts; `npm run quality:shells` judges all 20
  for (const corpus of [...testWebCorpora(6), articleCorpus()]) {
    it(`${corpus.name}: ${corpus.shells ? 'every page a shell' : 'no page a shell'}`, () => {
      const r = judgeCorpus(corpus);
      assert.ok(r.pages > 0);
      assert.deepEqual(r.wrong, []);
    });
  }
});
