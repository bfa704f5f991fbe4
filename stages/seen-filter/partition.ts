import { decodeCandidates, type CandidateUrl } from '../../schemas/index.js';
import { type OpenPartition, type PartitionedStage, type StageContext } from '../../pipeline/stage.js';
import { partitionInput } from '../../topology/index.js';
import { handleSeenFilter } from './handle.js';
import { seenKeyOf } from './confirm-hits.js';
import { exactKeyOf } from './exact-key.js';
import { PartitionSeenSet } from './partition-seen-set.js';
import { decodeSnapshot, encodeSnapshot } from './snapshot-codec.js';
import { SnapshotStore, type SnapshotManifest } from './snapshot-store.js';
import { seenFilterInput, SNAPSHOT_EVERY_MS, SNAPSHOT_EVERY_URLS } from './spec.js';

/**
 * Opens partition N of the crawl's seen set for the process that just won its lease:
 * loads the last snapshot (or starts an empty set for a new crawl id, saved at once so a
 * later takeover knows where this crawl's set begins), then replays `crawl.normalized.<N>`
 * from the snapshot's settled sequence up to the last message the consumer delivered, so
 * every URL the previous owner handled is in the set before the first new message is.
 */
export async function openSeenPartition(
  base: Omit<PartitionedStage<CandidateUrl[]>, 'openPartition' | 'kind'>,
  partition: number,
  ctx: StageContext,
): Promise<OpenPartition<CandidateUrl[]> & { seen: PartitionSeenSet; replayed: number }> {
  const input = partitionInput(seenFilterInput, partition);
  const store = new SnapshotStore(ctx.kv.seen, ctx.settings.crawlId);
  const position = await ctx.streams.consumerPosition(input.stream, input.durable);
  const loaded = await store.load(partition);
  let saved: { revision: number; manifest: SnapshotManifest } | null = loaded;
  let seen: PartitionSeenSet;
  if (loaded) {
    seen = decodeSnapshot(loaded.data, partition);
  } else {
    seen = PartitionSeenSet.empty(Math.ceil(ctx.settings.seenExpectedUrls / ctx.settings.partitions), position.ackFloor);
    saved = await store.save(partition, encodeSnapshot(partition, seen), null, ctx.clock.now());
  }
  let replayed = 0;
  for await (const m of ctx.streams.replay(input.stream, input.filterSubject, seen.settledSeq + 1, position.delivered)) {
    let candidates: CandidateUrl[];
    try {
      candidates = decodeCandidates(m.data);
    } catch {
      continue; // undecodable: dead-lettered when it was delivered, never admitted
    }
    for (const [index, c] of candidates.entries()) {
      if (c.via === 'revisit') continue; // never checked against the set
      const key = seenKeyOf(c);
      // above the ack floor the message may come again, and its URLs count as being decided
      seen.replay(key, m.seq, position.ackFloor, index, m.seq > position.ackFloor ? exactKeyOf(ctx.settings.crawlId, key) : undefined);
      replayed += 1;
    }
  }
  seen.settle(position.ackFloor);
  let savedAt = ctx.clock.now();

  const save = async () => {
    const added = seen.addedSinceSnapshot;
    // the floor is read before encoding: every message at or below it was handled, so it is in the filter
    const { ackFloor } = await ctx.streams.consumerPosition(input.stream, input.durable);
    seen.settle(ackFloor);
    saved = await store.save(partition, encodeSnapshot(partition, seen), saved, ctx.clock.now());
    seen.addedSinceSnapshot -= added;
    savedAt = ctx.clock.now();
  };

  return {
    seen,
    replayed,
    def: {
      name: base.name,
      input,
      emits: base.emits,
      defaultConcurrency: base.defaultConcurrency,
      decode: base.decode,
      handle: (i, c) => handleSeenFilter(i, c, seen),
    },
    async checkpoint() {
      // a partition that handled nothing since has nothing to settle or save: an idle crawl
      // asks the server nothing for it
      if (seen.unsettledCount === 0 && seen.addedSinceSnapshot === 0) return;
      // every round (5 s): forget messages the server will not deliver again, so the
      // unsettled map holds only the last few seconds of new URLs
      seen.settle((await ctx.streams.consumerPosition(input.stream, input.durable)).ackFloor);
      const due = seen.addedSinceSnapshot >= SNAPSHOT_EVERY_URLS || (seen.addedSinceSnapshot > 0 && ctx.clock.now() - savedAt >= SNAPSHOT_EVERY_MS);
      if (due) await save();
    },
    close: save,
  };
}
