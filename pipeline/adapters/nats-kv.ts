import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { KvConflictError, type KvEntry, type KvStore, type KvWatch } from '../../ports/kv.js';
import { BUCKETS } from '../../topology/index.js';

const WRONG_LAST_SEQUENCE = new Set([10071, 10164]);

function isConflict(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'number' && WRONG_LAST_SEQUENCE.has(code)) return true;
  return /wrong last sequence/i.test((err as Error)?.message ?? '');
}

/** KV keys allow [-/_=.a-zA-Z0-9]; hosts and hashes fit, anything else is escaped. */
export function kvKey(raw: string): string {
  return raw.replace(/[^-/_=.a-zA-Z0-9]/g, (c) => `_${c.charCodeAt(0).toString(16)}_`);
}

/** A KvStore over a JetStream KV bucket; compare-and-set conflicts become KvConflictError. */
export class NatsKvStore implements KvStore {
  readonly getLatest?: (key: string) => Promise<KvEntry | null>;

  /**
   * `leader`: a handle on the same bucket that reads through its leader (see KvStore.getLatest),
   * used when `replicated()` says the bucket has more than one copy (asked once, when first needed).
   */
  constructor(
    private readonly kv: KV,
    leader?: { kv: KV; replicated: () => Promise<boolean> },
  ) {
    if (leader) {
      let replicated: Promise<boolean> | undefined;
      this.getLatest = async (key) => NatsKvStore.read((await (replicated ??= leader.replicated())) ? leader.kv : kv, key);
    }
  }

  get(key: string): Promise<KvEntry | null> {
    return NatsKvStore.read(this.kv, key);
  }

  private static async read(kv: KV, key: string): Promise<KvEntry | null> {
    const entry = await kv.get(kvKey(key));
    if (!entry || entry.operation !== 'PUT') return null;
    return { value: entry.value, revision: entry.revision };
  }
  async create(key: string, value: Uint8Array): Promise<number> {
    try {
      return await this.kv.create(kvKey(key), value);
    } catch (err) {
      if (isConflict(err)) throw new KvConflictError(`key ${key} exists`);
      throw err;
    }
  }
  async update(key: string, value: Uint8Array, revision: number): Promise<number> {
    try {
      return await this.kv.update(kvKey(key), value, revision);
    } catch (err) {
      if (isConflict(err)) throw new KvConflictError(`key ${key} changed`);
      throw err;
    }
  }
  async put(key: string, value: Uint8Array): Promise<number> {
    return this.kv.put(kvKey(key), value);
  }
  async delete(key: string): Promise<void> {
    await this.kv.delete(kvKey(key));
  }
  async *keys(): AsyncIterable<string> {
    const iter = await this.kv.keys();
    for await (const key of iter) yield key;
  }
  async watch(): Promise<KvWatch> {
    const iter = await this.kv.watch({ key: '>' });
    return {
      stop: () => iter.stop(),
      async *[Symbol.asyncIterator]() {
        for await (const e of iter) yield { key: e.key, value: e.operation === 'PUT' ? e.value : null };
      },
    };
  }
}

export type KvStores = Record<'hosts' | 'traps' | 'robots' | 'seen' | 'seenKeys' | 'fingerprints' | 'scope' | 'validators' | 'config' | 'digests' | 'jobs' | 'importance', KvStore>;

/** Opens (never creates) the crawl's buckets: the topology owns them. */
export async function openKvStores(nc: NatsConnection): Promise<KvStores> {
  const kvm = new Kvm(nc);
  // Direct gets (`$JS.API.DIRECT.GET`) skip the JetStream API layer and its advisory per call:
  // a KV read costs the server about half as much. The topology creates every bucket with
  // allow_direct, but `open` only binds, so it must be told.
  const open = async (name: string) => new NatsKvStore(await kvm.open(name, { allow_direct: true }));
  // any replica answers a direct get, and one that lags answers with an older value: the gate
  // confirms through the leader before it forgets a host (see serve-host.ts)
  const replicated = async () => {
    try {
      return (await (await jetstreamManager(nc)).streams.info(`KV_${BUCKETS.hosts}`)).config.num_replicas > 1;
    } catch {
      return true; // cannot tell: the leader's word is always right
    }
  };
  const hosts = new NatsKvStore(await kvm.open(BUCKETS.hosts, { allow_direct: true }), { kv: await kvm.open(BUCKETS.hosts, { allow_direct: false }), replicated });
  return {
    hosts,
    traps: await open(BUCKETS.traps),
    robots: await open(BUCKETS.robots),
    seen: await open(BUCKETS.seen),
    seenKeys: await open(BUCKETS.seenKeys),
    fingerprints: await open(BUCKETS.fingerprints),
    scope: await open(BUCKETS.scope),
    validators: await open(BUCKETS.validators),
    config: await open(BUCKETS.config),
    digests: await open(BUCKETS.digests),
    jobs: await open(BUCKETS.jobs),
    importance: await open(BUCKETS.importance),
  };
}
