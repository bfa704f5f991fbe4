import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostQueueSubject } from '../../pipeline/partition.js';
import { stableId } from '../../stages/shared/messages/stage-ids.js';
import { patternKey } from '../../stages/shared/traps/trap-tally.js';
import { sha1Hex } from '../../stages/archive/warc-record.js';
import { readValidators, storeValidators } from '../../stages/shared/conditional-get.js';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';

/**
 * These keys name things that outlive a process: retained host-queue subjects, fetch ids and
 * msgIds in streams and Parquet, trap tallies and validators in KV. A crawl resumed by a newer build must
 * compute the same ones, so their values are pinned here (computed by the build before
 * crypto.hash replaced createHash).
 */
describe('stable keys do not change between builds', () => {
  test('host-queue subjects', () => {
    assert.equal(hostQueueSubject('www.example.com', 16), 'crawl.hostq.11.068503358dddd23cf6cf');
    assert.equal(hostQueueSubject('[::1]', 16, 'p2'), 'crawl.hostq.0.28603805304972baef26.p2');
  });

  test('stable ids', () => {
    assert.equal(stableId('crawl-1', 'https://www.example.com/a?b=c'), 'f1e57c649c4ebcdace87003f10383c0a');
    assert.equal(stableId('fetch', 42), '7d29d20e93a9fcd588cce7cead721564');
  });

  test('URL pattern keys, non-ASCII hashed as UTF-8', () => {
    assert.equal(patternKey('/a/*/b'), 'daad2dac91af');
    assert.equal(patternKey('é/ü'), '172f7ec3f2c5');
  });

  test("validators' keys in crawl-validators (kept across crawls)", async () => {
    const store = new MemoryKvStore();
    await storeValidators(store, 'https://www.example.com/a?b=c', { etag: '"x"' }, 1, []);
    const keys: string[] = [];
    for await (const k of store.keys()) keys.push(k);
    assert.deepEqual(keys, ['98366a282d7b8f58ad6b682fb75a3327521e98e4']);
    assert.equal((await readValidators(store, 'https://www.example.com/a?b=c'))?.etag, '"x"');
  });

  test('SHA-1 hex (RFC 3174 test vector)', () => {
    assert.equal(sha1Hex('abc'), 'a9993e364706816aba3e25717850c26c9cd0d89d');
  });
});
