import { randomBytes } from 'node:crypto';
import { jsonValue, parseJsonValue } from '../../pipeline/kv-store.js';
import { KvConflictError, type KvStore } from '../../ports/kv.js';
import { SnapshotError } from './snapshot-codec.js';

/**
 * Seen-set snapshots in the crawl-seen KV bucket, in chunks (a KV value must fit in one
 * message, 1 MiB by default, and a partition's filter is 1.25 MB at 625k URLs).
 * Chunks of a new generation are written first, then the manifest is switched to them with
 * compare-and-set, then the old generation is deleted: a reader always finds a whole
 * snapshot, and a writer that lost its lease cannot overwrite a newer owner's snapshot.
 * Keyed by crawl id: a new crawl (a recrawl) starts from an empty seen set.
 */
const CHUNK_BYTES = 512 * 1024;

export interface SnapshotManifest {
  generation: number;
  /** random, so two writers of the same generation never write the same chunk keys */
  token: string;
  chunks: number;
  bytes: number;
  written_at: number;
}

const manifestKey = (crawlId: string, partition: number) => `snapshot.${crawlId}.p${partition}`;
const chunkKey = (crawlId: string, partition: number, m: Pick<SnapshotManifest, 'generation' | 'token'>, i: number) =>
  `${manifestKey(crawlId, partition)}.g${m.generation}-${m.token}.c${i}`;

export interface LoadedSnapshot {
  manifest: SnapshotManifest;
  data: Uint8Array;
  /** KV revision of the manifest: the next write must see it unchanged */
  revision: number;
}

export class SnapshotStore {
  constructor(
    private readonly kv: KvStore,
    private readonly crawlId: string,
  ) {}

  async load(partition: number): Promise<LoadedSnapshot | null> {
    const entry = await this.kv.get(manifestKey(this.crawlId, partition));
    if (!entry) return null;
    const manifest = parseJsonValue<SnapshotManifest>(entry.value);
    const data = new Uint8Array(manifest.bytes);
    let at = 0;
    for (let i = 0; i < manifest.chunks; i++) {
      const chunk = await this.kv.get(chunkKey(this.crawlId, partition, manifest, i));
      if (!chunk) throw new SnapshotError(`seen-set snapshot of partition ${partition}: chunk ${i} of generation ${manifest.generation} is missing`);
      data.set(chunk.value, at);
      at += chunk.value.length;
    }
    if (at !== manifest.bytes) throw new SnapshotError(`seen-set snapshot of partition ${partition}: ${at} bytes in chunks, manifest says ${manifest.bytes}`);
    return { manifest, data, revision: entry.revision };
  }

  /**
   * Writes a new generation and switches the manifest to it if it is still at `revision`
   * (null: no snapshot yet). Returns the new revision; throws KvConflictError when another
   * owner wrote in between (this process must then stop serving the partition).
   */
  async save(partition: number, data: Uint8Array, previous: { revision: number; manifest: SnapshotManifest } | null, now: number): Promise<{ revision: number; manifest: SnapshotManifest }> {
    const chunks = Math.max(1, Math.ceil(data.length / CHUNK_BYTES));
    const manifest: SnapshotManifest = {
      generation: (previous?.manifest.generation ?? 0) + 1,
      token: randomBytes(4).toString('hex'),
      chunks,
      bytes: data.length,
      written_at: now,
    };
    for (let i = 0; i < chunks; i++) {
      await this.kv.put(chunkKey(this.crawlId, partition, manifest, i), data.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
    }
    const key = manifestKey(this.crawlId, partition);
    let revision: number;
    try {
      revision = previous ? await this.kv.update(key, jsonValue(manifest), previous.revision) : await this.kv.create(key, jsonValue(manifest));
    } catch (err) {
      if (err instanceof KvConflictError) await this.deleteChunks(partition, manifest);
      throw err;
    }
    if (previous) await this.deleteChunks(partition, previous.manifest);
    return { revision, manifest };
  }

  private async deleteChunks(partition: number, m: SnapshotManifest): Promise<void> {
    // best effort: a chunk left behind costs space, never correctness
    for (let i = 0; i < m.chunks; i++) await this.kv.delete(chunkKey(this.crawlId, partition, m, i)).catch(() => undefined);
  }
}
