import { decodeCandidates, type CandidateUrl } from '../../schemas/index.js';
import type { PartitionedStage } from '../../pipeline/stage.js';
import { openSeenPartition } from './partition.js';
import { seenFilterEmits, seenFilterInput } from './spec.js';

export const seenFilterStage: PartitionedStage<CandidateUrl[]> = {
  kind: 'partitioned',
  name: 'seen-filter',
  input: seenFilterInput,
  emits: seenFilterEmits,
  // per partition held: a process holding all 16 handles up to 256 candidate messages at once
  defaultConcurrency: 16,
  counts: ['urls', 'bloom_hits'],
  // a message holds one candidate or a page's batch of them (schemas/url-batches.ts)
  decode: (_subject, data) => decodeCandidates(data),
  openPartition: (partition, ctx) => openSeenPartition(seenFilterStage, partition, ctx),
};
