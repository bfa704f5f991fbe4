import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { openKvStores } from '../../pipeline/adapters/nats-kv.js';
import { applyCrawlTopology } from '../../ops/nats/crawl-topology.js';
import type { KvStore } from '../../ports/kv.js';
import { findOriginal } from '../../stages/simhash/find-original.js';
import { findWithin, fingerprintKeys } from '../../stages/simhash/fingerprint-index.js';
import { simhashToHex } from '../../stages/shared/content-identity/simhash.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';
import { startTestNats } from '../support/nats-server.js';

/** Fingerprint of pair i and its copy, `bits` apart. */
function pair(i: number, bits: number[]): [bigint, bigint] {
  const h = (0x9e3779b97f4a7c15n * BigInt(2 * i + 1)) & 0xffffffffffffffffn;
  return [h, bits.reduce((g, b) => g ^ (1n << BigInt(b)), h)];
}

describe('near-duplicate index on a real nats-server KV, shared by two processes', () => {
  let server: Awaited<ReturnType<typeof startTestNats>>;
  let one: NatsConnection;
  let two: NatsConnection;
  let storeOne: KvStore;
  let storeTwo: KvStore;

  before(async () => {
    server = await startTestNats();
    one = await connectNats(server.url, 'simhash-1');
    two = await connectNats(server.url, 'simhash-2');
    await applyCrawlTopology(one);
    storeOne = (await openKvStores(one)).fingerprints;
    storeTwo = (await openKvStores(two)).fingerprints;
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await server?.cleanup();
  });

  it('originals and their near-duplicates added at the same time by two connections: none lost, every pair found, exactly one of each marked', async () => {
    const n = 100;
    const pairs = Array.from({ length: n }, (_, i) => pair(i, [i % 64, (i * 13 + 5) % 64, (i * 29 + 7) % 64]));
    // an original and its copy share keys, and both are in flight at once: the two connections race for those keys
    const page = (i: number, which: 'orig' | 'copy') => ({
      h: simhashToHex(pairs[i]![which === 'orig' ? 0 : 1]),
      url: `https://${which}${i}.test/`,
      t: which === 'orig' ? 1 : 2,
    });
    const verdicts = await Promise.all(
      pairs.flatMap((_, i) => [
        findOriginal(storeOne, page(i, 'orig'), contentDigest(`orig${i}`), 3),
        findOriginal(storeTwo, page(i, 'copy'), contentDigest(`copy${i}`), 3),
      ]),
    );
    for (let i = 0; i < n; i++) {
      // whichever the index took first is the original (when each landed first on a key they
      // share, the earlier fetch); the other is marked as its duplicate, never neither
      const [o, c] = [verdicts[2 * i], verdicts[2 * i + 1]];
      assert.ok((o === null && c === `https://orig${i}.test/`) || (o === `https://copy${i}.test/` && c === null), `pair ${i}: ${o}, ${c}`);
      for (const key of fingerprintKeys(pairs[i]![0], 3)) {
        const e = await storeOne.get(key);
        assert.ok(e && new TextDecoder().decode(e.value).includes(`https://orig${i}.test/`), `orig${i} stored under ${key}`);
      }
      const found = (await findWithin(storeTwo, pairs[i]![1], 3)).map((e) => e.url).sort();
      assert.deepEqual(found, [`https://copy${i}.test/`, `https://orig${i}.test/`]);
    }
  });

  it('exact copies processed at the same moment by two connections: one original each, the other marked', async () => {
    const n = 100;
    // a fingerprint of its own per body, so that the originals are not near-duplicates of each other
    const fp = (i: number) => simhashToHex(pair(1000 + i, [])[0]);
    // which copy is sent first alternates, so that each wins some of the races
    const verdicts = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const later = () => findOriginal(storeOne, { h: fp(i), url: `https://later${i}.test/`, t: 20 }, contentDigest(`race ${i}`), 3);
        const earlier = () => findOriginal(storeTwo, { h: fp(i), url: `https://earlier${i}.test/`, t: 10 }, contentDigest(`race ${i}`), 3);
        if (i % 2 === 0) return Promise.all([later(), earlier()]);
        const [e, l] = await Promise.all([earlier(), later()]);
        return [l, e];
      }),
    );
    let laterOriginals = 0;
    for (let i = 0; i < n; i++) {
      const [later, earlier] = verdicts[i]!;
      assert.ok((later === null && earlier === `https://later${i}.test/`) || (later === `https://earlier${i}.test/` && earlier === null), `copy ${i}: ${later}, ${earlier}`);
      if (later === null) laterOriginals++;
      // a redelivery of either gets the verdict it got
      assert.equal(await findOriginal(storeTwo, { h: fp(i), url: `https://later${i}.test/`, t: 20 }, contentDigest(`race ${i}`), 3), later);
      assert.equal(await findOriginal(storeOne, { h: fp(i), url: `https://earlier${i}.test/`, t: 10 }, contentDigest(`race ${i}`), 3), earlier);
    }
    console.log(`exact-copy races: the later fetch was the original in ${laterOriginals} of ${n}`);
  });

  it('an exact duplicate is found by its digest through the real KV (create-if-absent conflict)', async () => {
    const digest = contentDigest('<html>same bytes</html>');
    const h = simhashToHex(0x0123456789abcdefn);
    assert.equal(await findOriginal(storeOne, { h, url: 'https://first.test/', t: 10 }, digest, 3), null);
    assert.equal(await findOriginal(storeTwo, { h, url: 'https://second.test/', t: 20 }, digest, 3), 'https://first.test/');
    assert.equal(await findOriginal(storeOne, { h, url: 'https://first.test/', t: 10 }, digest, 3), null, 'a redelivery is no duplicate');
    // the later fetch processed first, through another connection: it stays the original
    const other = contentDigest('<html>other bytes</html>');
    const h2 = simhashToHex(0x7edcba9876543210n);
    assert.equal(await findOriginal(storeTwo, { h: h2, url: 'https://fetched-later.test/', t: 50 }, other, 3), null);
    assert.equal(await findOriginal(storeOne, { h: h2, url: 'https://fetched-earlier.test/', t: 5 }, other, 3), 'https://fetched-later.test/');
  });
});
