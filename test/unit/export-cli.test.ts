import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { runExport } from '../../cli/export.js';

describe('crawl export: bad arguments get one clear line (exit 2) before anything is read', () => {
  const cases: Array<[string, string, { out: string; to?: string }, RegExp]> = [
    ['an unknown format', 'arc', { out: os.tmpdir(), to: path.join(os.tmpdir(), 'x') }, /unknown format "arc" \(wacz, wet or wat\)/],
    ['no --to', 'wet', { out: os.tmpdir() }, /--to FILE is required/],
    ['no output there', 'wacz', { out: path.join(os.tmpdir(), 'no-such-crawl-output'), to: path.join(os.tmpdir(), 'x.wacz') }, /no crawl output at .*no-such-crawl-output/],
    ['--to in a directory that is not there', 'wat', { out: os.tmpdir(), to: path.join(os.tmpdir(), 'no-such-dir', 'x.wat.gz') }, /--to .*: the directory .*no-such-dir does not exist/],
    ['an object store', 'wacz', { out: 's3://bucket/crawl', to: path.join(os.tmpdir(), 'x.wacz') }, /works on a local output directory/],
  ];
  for (const [what, format, o, message] of cases) {
    it(what, async () => {
      await assert.rejects(runExport(format, o), (err: Error) => err.name === 'UsageError' && message.test(err.message));
    });
  }
});
