import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJsonValue } from '../../pipeline/kv-store.js';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { type KvEntry, type KvStore, type KvWatch } from '../../ports/kv.js';
import { addAndFindOriginal, findWithin, fingerprintKeys, type FingerprintEntry } from '../../stages/simhash/fingerprint-index.js';
import { digestKey, findExactOriginal } from '../../stages/simhash/exact-duplicates.js';
import { findOriginal } from '../../stages/simhash/find-original.js';
import { MAX_ENTRIES_PER_KEY } from '../../stages/simhash/spec.js';
import { hammingDistance, simhashToHex } from '../../stages/shared/content-identity/simhash.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';

const BASE = 0x9e3779b97f4a7c15n;

const flip = (h: bigint, bits: readonly number[]) => bits.reduce((g, b) => g ^ (1n << BigInt(b)), h);

const entry = (h: bigint, url: string, t: number): FingerprintEntry => ({ h: simhashToHex(h), url, t });

/** Lowest bit (0 = least significant) of each of the k+1 blocks, most significant block first, as blockKeys splits them. */
function blockStarts(k: number): number[] {
  const blocks = k + 1;
  const starts: number[] = [];
  let remaining = 64;
  for (let i = 0; i < blocks; i++) {
    remaining -= Math.floor(64 / blocks) + (i < 64 % blocks ? 1 : 0);
    starts.push(remaining);
  }
  return starts;
}

/** Bit patterns of `n` flipped bits, for k: where near-duplicates differ decides which keys they share. */
function patterns(k: number, n: number): Record<string, number[]> {
  const starts = blockStarts(k);
  const tops = starts.map((s, i) => (i === 0 ? 63 : starts[i - 1]! - 1));
  const borders = starts.slice(0, -1); // a block's lowest bit; the bit below it is the next block's highest
  const acrossBorders: number[] = [];
  for (let i = 0; acrossBorders.length < n; i++) {
    const b = borders[i % borders.length]!;
    const pair = [b, b - 1].map((x) => x + 2 * Math.floor(i / borders.length));
    for (const x of pair) if (acrossBorders.length < n && !acrossBorders.includes(x)) acrossBorders.push(x);
  }
  return {
    'all in the lowest block': Array.from({ length: n }, (_, i) => i),
    'the top bits': Array.from({ length: n }, (_, i) => 63 - i),
    'either side of block borders': acrossBorders,
    // one bit per block (and the rest in block 0): leaves as few blocks equal as n allows
    'spread over the blocks': Array.from({ length: n }, (_, i) => (i < tops.length ? tops[i]! : tops[0]! - i)),
  };
}

describe('fingerprint index: every fingerprint within k is found, none beyond', () => {
  for (const k of [1, 2, 3, 4, 6]) {
    for (const n of [k, k + 1]) {
      for (const [name, bits] of Object.entries(patterns(k, n))) {
        test(`k=${k}: ${n} bits flipped, ${name} (${bits.join(',')}) → ${n <= k ? 'found' : 'not found'}`, async () => {
          assert.equal(new Set(bits).size, n);
          const store = new MemoryKvStore();
          const query = flip(BASE, bits);
          assert.equal(hammingDistance(BASE, query), n);
          await addAndFindOriginal(store, entry(BASE, 'https://a.test/original', 1), k);
          const found = (await findWithin(store, query, k)).map((e) => e.url);
          assert.deepEqual(found, n <= k ? ['https://a.test/original'] : []);
          const verdict = await addAndFindOriginal(store, entry(query, 'https://b.test/copy', 2), k);
          assert.equal(verdict, n <= k ? 'https://a.test/original' : null);
        });
      }
    }
  }

  test('k+1 bits, one in each block: no key is shared, so it is not even a candidate', () => {
    const bits = patterns(3, 4)['spread over the blocks']!;
    const keys = new Set(fingerprintKeys(BASE, 3));
    assert.ok(fingerprintKeys(flip(BASE, bits), 3).every((key) => !keys.has(key)));
  });

  test('k+1 bits in one block: three keys shared, rejected by the distance check', async () => {
    const store = new MemoryKvStore();
    await addAndFindOriginal(store, entry(BASE, 'https://a.test/', 1), 3);
    const query = flip(BASE, [0, 1, 2, 3]);
    const shared = fingerprintKeys(query, 3).filter((key) => fingerprintKeys(BASE, 3).includes(key));
    assert.equal(shared.length, 3);
    assert.deepEqual(await findWithin(store, query, 3), []);
  });

  test('finds every stored fingerprint within k among many, the earliest is the original', async () => {
    const store = new MemoryKvStore();
    const near = [[5], [20, 40], [1, 33, 60], [2, 3, 4]];
    for (const [i, bits] of near.entries()) await addAndFindOriginal(store, entry(flip(BASE, bits!), `https://n${i}.test/`, 10 + i), 3);
    await addAndFindOriginal(store, entry(flip(BASE, [7, 8, 9, 10]), 'https://far.test/', 1), 3);
    const found = (await findWithin(store, BASE, 3)).map((e) => e.url).sort();
    assert.deepEqual(found, ['https://n0.test/', 'https://n1.test/', 'https://n2.test/', 'https://n3.test/']);
    assert.equal(await addAndFindOriginal(store, entry(BASE, 'https://q.test/', 100), 3), 'https://n0.test/');
  });

  test('a malformed fingerprint is refused before anything is written', async () => {
    const store = new MemoryKvStore();
    await assert.rejects(addAndFindOriginal(store, { h: 'not-hex', url: 'https://a.test/', t: 1 }, 3), SyntaxError);
    assert.equal((await keysOf(store)).length, 0);
  });
});

async function keysOf(store: KvStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const k of store.keys()) keys.push(k);
  return keys;
}

async function listAt(store: KvStore, key: string): Promise<FingerprintEntry[]> {
  const e = await store.get(key);
  return e ? parseJsonValue<FingerprintEntry[]>(e.value) : [];
}

describe('fingerprint index: bounded growth per key', () => {
  // Fillers share block 0 with BASE (its top 16 bits) and nothing else: they fill BASE's first key only.
  const filler = (i: number) => (BASE & 0xffff000000000000n) | (BigInt(i + 1) * 0x0000_1111_2222_3333n & 0x0000ffffffffffffn);

  test('a full key evicts its oldest entry; a near-duplicate sharing only that block is then missed (the recall cost)', async () => {
    const store = new MemoryKvStore();
    const max = 4;
    await addAndFindOriginal(store, entry(BASE, 'https://old.test/', 1), 3, { maxEntriesPerKey: max });
    for (let i = 0; i < max; i++) await addAndFindOriginal(store, entry(filler(i), `https://f${i}.test/`, 10 + i), 3, { maxEntriesPerKey: max });
    const [hotKey] = fingerprintKeys(BASE, 3);
    const hot = await listAt(store, hotKey!);
    assert.equal(hot.length, max);
    assert.ok(!hot.some((e) => e.url === 'https://old.test/'), 'the oldest entry was evicted');
    // differs in blocks 1, 2 and 3: shares only the full key with the old page
    const onlyHotShared = flip(BASE, [47, 31, 15]);
    assert.deepEqual(await findWithin(store, onlyHotShared, 3), []);
    // differs in block 0 only: still found through the three other keys
    const othersShared = flip(BASE, [63, 62, 61]);
    assert.deepEqual((await findWithin(store, othersShared, 3)).map((e) => e.url), ['https://old.test/']);
  });

  test(`with the default bound a key never holds more than ${MAX_ENTRIES_PER_KEY} entries`, async () => {
    const store = new MemoryKvStore();
    for (let i = 0; i < MAX_ENTRIES_PER_KEY + 20; i++) await addAndFindOriginal(store, entry(filler(i), `https://f${i}.test/`, i), 3);
    const hot = await listAt(store, fingerprintKeys(BASE, 3)[0]!);
    assert.equal(hot.length, MAX_ENTRIES_PER_KEY);
    assert.equal(hot[0]!.url, 'https://f20.test/', 'the newest are kept');
  });
});

/**
 * One simhash process's view of a shared store: its own object, so casUpdate keeps a
 * separate per-key queue for it (as for another process), and its writes wait for `gate`.
 */
class ProcessView implements KvStore {
  constructor(
    private readonly shared: MemoryKvStore,
    private readonly gate: () => Promise<void>,
    private readonly onGet: () => void = () => {},
  ) {}
  get(key: string): Promise<KvEntry | null> {
    this.onGet();
    return this.shared.get(key);
  }
  // not held back: the keys exist, so a create (casUpdate's guess that a key is new) fails at
  // once, and the read and compare-and-set that follow are what the interleaving orders
  create(key: string, value: Uint8Array): Promise<number> {
    return this.shared.create(key, value);
  }
  async update(key: string, value: Uint8Array, revision: number): Promise<number> {
    await this.gate();
    return this.shared.update(key, value, revision);
  }
  put(key: string, value: Uint8Array): Promise<number> {
    return this.shared.put(key, value);
  }
  delete(key: string): Promise<void> {
    return this.shared.delete(key);
  }
  keys(): AsyncIterable<string> {
    return this.shared.keys();
  }
  watch(): Promise<KvWatch> {
    return this.shared.watch();
  }
}

describe('fingerprint index: two processes adding near-duplicates at the same time', () => {
  const A = entry(BASE, 'https://a.test/', 1); // fetched first
  const B = entry(flip(BASE, [0, 20]), 'https://b.test/', 2); // distance 2: shares the keys of blocks 0 and 1

  /** Both processes read every key before either writes; then `first` writes, then the other. */
  async function interleaved(first: 'A' | 'B'): Promise<{ a: string | null; b: string | null; shared: MemoryKvStore }> {
    const shared = new MemoryKvStore();
    let gets = 0;
    let allRead!: () => void;
    const readsDone = new Promise<void>((resolve) => (allRead = resolve));
    const onGet = () => {
      if (++gets === 8) allRead();
    };
    let firstDone!: () => void;
    const firstFinished = new Promise<void>((resolve) => (firstDone = resolve));
    const viewFor = (who: 'A' | 'B') => new ProcessView(shared, () => (who === first ? readsDone : firstFinished), onGet);
    // the stores start non-empty so that every append is a read, then a compare-and-set
    for (const key of [...fingerprintKeys(BASE, 3), ...fingerprintKeys(simhashFromEntry(B), 3)]) {
      if (!(await shared.get(key))) await shared.put(key, new TextEncoder().encode('[]'));
    }
    const run = (who: 'A' | 'B') => {
      const p = addAndFindOriginal(viewFor(who), who === 'A' ? A : B, 3);
      if (who === first) void p.then(() => firstDone());
      return p;
    };
    const [a, b] = await Promise.all([run('A'), run('B')]);
    return { a, b, shared };
  }

  const simhashFromEntry = (e: FingerprintEntry) => BigInt(`0x${e.h}`);

  test('the original writes first: the copy conflicts, re-reads, and is marked a duplicate of it', { timeout: 5000 }, async () => {
    const { a, b, shared } = await interleaved('A');
    assert.equal(a, null);
    assert.equal(b, 'https://a.test/');
    for (const key of fingerprintKeys(BASE, 3).filter((k) => fingerprintKeys(simhashFromEntry(B), 3).includes(k))) {
      assert.deepEqual((await listAt(shared, key)).map((e) => e.url), ['https://a.test/', 'https://b.test/'], `no lost update on ${key}`);
    }
  });

  test('the copy writes first: it is the original, and the earlier fetch is marked; the verdict is that of processing B then A', { timeout: 5000 }, async () => {
    const { a, b, shared } = await interleaved('B');
    assert.deepEqual({ a, b }, { a: 'https://b.test/', b: null });
    const serial = new MemoryKvStore();
    const serialB = await addAndFindOriginal(serial, B, 3);
    const serialA = await addAndFindOriginal(serial, A, 3);
    assert.deepEqual({ a, b }, { a: serialA, b: serialB });
    for (const key of fingerprintKeys(BASE, 3)) {
      assert.ok((await listAt(shared, key)).some((e) => e.url === 'https://a.test/'), `A stored under ${key}`);
    }
  });

  test('each lands first on one of the keys they share (added at the same moment): the earlier fetch is the original, for both', async () => {
    // the lists as two processes leave them when A's append lands first on key 0 and B's on key 3;
    // each page's own append then changes nothing and returns its list (as on a redelivery)
    const shared = new MemoryKvStore();
    const put = (key: string, list: FingerprintEntry[]) => shared.put(key, new TextEncoder().encode(JSON.stringify(list)));
    const keysB = fingerprintKeys(simhashFromEntry(B), 3);
    const both = fingerprintKeys(BASE, 3).filter((k) => keysB.includes(k));
    assert.equal(both.length, 2);
    await put(both[0]!, [A, B]);
    await put(both[1]!, [B, A]);
    for (const key of fingerprintKeys(BASE, 3).filter((k) => !both.includes(k))) await put(key, [A]);
    for (const key of keysB.filter((k) => !both.includes(k))) await put(key, [B]);
    assert.equal(await addAndFindOriginal(shared, A, 3), null);
    assert.equal(await addAndFindOriginal(shared, B, 3), 'https://a.test/');
    // with the fetch times the other way round, the other way round
    const later = { ...A, t: 3 };
    const shared2 = new MemoryKvStore();
    for (const key of await keysOf(shared)) {
      const list = await listAt(shared, key);
      await shared2.put(key, new TextEncoder().encode(JSON.stringify(list.map((e) => (e.url === A.url ? later : e)))));
    }
    assert.equal(await addAndFindOriginal(shared2, later, 3), 'https://b.test/');
    assert.equal(await addAndFindOriginal(shared2, B, 3), null);
  });

  test('many near-duplicate pairs added at once by two processes: no update is lost, and a later copy finds each original', async () => {
    const shared = new MemoryKvStore();
    const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
    const one = new ProcessView(shared, tick);
    const two = new ProcessView(shared, async () => {
      await tick();
      await tick();
    });
    const pairs = Array.from({ length: 50 }, (_, i) => {
      const h = BASE * BigInt(2 * i + 3) & 0xffffffffffffffffn;
      return [entry(h, `https://orig${i}.test/`, 1), entry(flip(h, [i % 64, (i * 7 + 1) % 64]), `https://copy${i}.test/`, 2)] as const;
    });
    const verdicts = await Promise.all(pairs.flatMap(([o, c]) => [addAndFindOriginal(one, o, 3), addAndFindOriginal(two, c, 3)]));
    for (const [i, [o, c]] of pairs.entries()) {
      // exactly one of the two is marked, as a duplicate of the other
      const [vo, vc] = [verdicts[2 * i], verdicts[2 * i + 1]];
      assert.ok((vo === null && vc === o.url) || (vo === c.url && vc === null), `pair ${i}: ${o.url} → ${vo}, ${c.url} → ${vc}`);
      for (const key of fingerprintKeys(BigInt(`0x${o.h}`), 3)) assert.ok((await listAt(shared, key)).some((e) => e.url === o.url), `${o.url} under ${key}`);
      // once both are stored, a third copy finds the original
      assert.equal(await addAndFindOriginal(shared, { ...c, url: `${c.url}again`, t: 3 }, 3), o.url);
    }
  });
});

/** Counts the operations a store receives. */
class CountingStore extends MemoryKvStore {
  ops = 0;
  override async get(key: string) {
    this.ops++;
    return super.get(key);
  }
  override async create(key: string, value: Uint8Array) {
    this.ops++;
    return super.create(key, value);
  }
  override async update(key: string, value: Uint8Array, revision: number) {
    this.ops++;
    return super.update(key, value, revision);
  }
}

describe('exact duplicates by content digest, before SimHash', () => {
  const digest = contentDigest('<html>the same body</html>');

  test('a new body costs one KV operation (create-if-absent) and names its page', async () => {
    const store = new CountingStore();
    assert.equal(await findExactOriginal(store, digest, { url: 'https://a.test/', t: 1 }), null);
    assert.equal(store.ops, 1);
    assert.deepEqual(await keysOf(store), [digestKey(digest)]);
    assert.match(digestKey(digest), /^dg\.sha1\.[A-Z2-7]{32}$/);
  });

  test('the same body again is a duplicate of the first page, and is not added to the SimHash index', async () => {
    const store = new MemoryKvStore();
    const h = simhashToHex(BASE);
    assert.equal(await findOriginal(store, { h, url: 'https://a.test/', t: 1 }, digest, 3), null);
    const keysBefore = (await keysOf(store)).sort();
    assert.equal(keysBefore.length, 1 + 4);
    // a different fingerprint on purpose: the digest alone decides
    assert.equal(await findOriginal(store, { h: simhashToHex(~BASE), url: 'https://b.test/', t: 2 }, digest, 3), 'https://a.test/');
    assert.deepEqual((await keysOf(store)).sort(), keysBefore);
  });

  test('processed out of order: the copy processed first stays the original; the earlier fetch processed later is marked', async () => {
    const store = new MemoryKvStore();
    assert.equal(await findExactOriginal(store, digest, { url: 'https://late.test/', t: 50 }), null);
    assert.equal(await findExactOriginal(store, digest, { url: 'https://early.test/', t: 10 }), 'https://late.test/');
    assert.equal(await findExactOriginal(store, digest, { url: 'https://third.test/', t: 90 }), 'https://late.test/');
    // and each keeps its verdict when redelivered
    assert.equal(await findExactOriginal(store, digest, { url: 'https://late.test/', t: 50 }), null);
    assert.equal(await findExactOriginal(store, digest, { url: 'https://early.test/', t: 10 }), 'https://late.test/');
  });

  test('two copies processed at the same moment: one original, the other marked as its duplicate', async () => {
    for (let i = 0; i < 20; i++) {
      const shared = new MemoryKvStore();
      const d = contentDigest(`body ${i}`);
      const [x, y] = await Promise.all([
        findExactOriginal(new ProcessView(shared, async () => {}), d, { url: 'https://x.test/', t: 2 }),
        findExactOriginal(new ProcessView(shared, async () => {}), d, { url: 'https://y.test/', t: 1 }),
      ]);
      assert.ok((x === null && y === 'https://x.test/') || (x === 'https://y.test/' && y === null), `${x}, ${y}`);
    }
  });

  test('a redelivered page is not its own duplicate and writes nothing', async () => {
    const store = new CountingStore();
    await findExactOriginal(store, digest, { url: 'https://a.test/', t: 1 });
    const revision = (await store.get(digestKey(digest)))!.revision;
    assert.equal(await findExactOriginal(store, digest, { url: 'https://a.test/', t: 1 }), null);
    assert.equal((await store.get(digestKey(digest)))!.revision, revision);
  });

  test('different bodies do not match', async () => {
    const store = new MemoryKvStore();
    await findExactOriginal(store, digest, { url: 'https://a.test/', t: 1 });
    assert.equal(await findExactOriginal(store, contentDigest('<html>another body</html>'), { url: 'https://b.test/', t: 2 }), null);
  });
});
