import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Emit, Publisher } from '../../ports/streams.js';
import { publishSeeds } from '../../app/seeding.js';
import { decodeSeeds } from '../../schemas/index.js';

/** A publisher that records what is published, in order; `refuse` fails the publishes it matches. */
function recorder(refuse: (subject: string) => boolean = () => false) {
  const sent: Array<{ subject: string; data: Uint8Array }> = [];
  const js: Publisher = {
    publish: async (messages: readonly Emit[]) => {
      const denied = messages.find((m) => refuse(m.subject));
      if (denied) throw new Error(`denied ${denied.subject}`);
      sent.push(...messages.map(({ subject, data }) => ({ subject, data })));
      return messages.map((m, i) => ({ subject: m.subject, seq: sent.length - messages.length + i + 1, duplicate: false }));
    },
  };
  return { js, sent };
}

test("every seed's scope keys go out before any seed, then the seeds, several to a message", async () => {
  const { js, sent } = recorder();
  const urls = ['https://www.example.co.uk/docs/a.html', 'http://other.example/'];
  assert.deepEqual(await publishSeeds(js, urls), {});
  const firstSeed = sent.findIndex((m) => m.subject === 'crawl.seeds');
  assert.equal(firstSeed, sent.length - 1, 'one seeds message, after every key');
  const keys = sent.slice(0, firstSeed).map((m) => m.subject);
  assert.equal(keys.length, 6, 'a registrable domain, a host and a prefix per seed');
  assert.ok(keys.every((k) => k.startsWith('$KV.crawl-scope.')));
  assert.ok(keys.includes('$KV.crawl-scope.example.co.uk') && keys.includes('$KV.crawl-scope.host=other.example'));
  assert.deepEqual(decodeSeeds(sent[firstSeed]!.data).map((s) => s.url), urls);
});

test('a long seed list goes out 1,000 URLs (or 256 KB) to a message, none lost', async () => {
  const { js, sent } = recorder();
  const short = Array.from({ length: 2_500 }, (_, i) => `http://h${i}.example/`);
  const long = Array.from({ length: 300 }, (_, i) => `http://long.example/${'x'.repeat(2000)}/${i}`);
  await publishSeeds(js, [...short, ...long]);
  const messages = sent.filter((m) => m.subject === 'crawl.seeds');
  assert.ok(messages.every((m) => m.data.length <= 256 * 1024 + 2048), 'each message within the byte bound');
  assert.ok(messages.every((m) => decodeSeeds(m.data).length <= 1_000));
  assert.deepEqual(messages.flatMap((m) => decodeSeeds(m.data).map((s) => s.url)), [...short, ...long]);
});

test('a user who may not put the scope still seeds, and is told why', async () => {
  const { js, sent } = recorder((s) => s.startsWith('$KV.'));
  const answer = await publishSeeds(js, ['http://a.example/']);
  assert.match(answer.scopeNotPut?.message ?? '', /denied \$KV\.crawl-scope\./);
  assert.deepEqual(sent.map((m) => m.subject), ['crawl.seeds']);
});
