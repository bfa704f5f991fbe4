import { decodeCandidate, type CandidateUrl } from '../../schemas/index.js';
import type { StageDefinition } from '../../pipeline/stage.js';
import { openSeenPartition } from './partition.js';
import { seenFilterEmits, seenFilterInput } from './spec.js';

export const seenFilterStage: StageDefinition<CandidateUrl> = {
  name: 'seen-filter',
  input: seenFilterInput,
  emits: seenFilterEmits,
  // per partition held: a process holding all 16 handles up to 256 candidates at once
  defaultConcurrency: 16,
  decode: (_subject, data) => decodeCandidate(data),
  handle: () => Promise.reject(new Error('seen-filter runs one consumer per partition it holds (openPartition), not the stage-wide consumer')),
  openPartition: (partition, ctx) => openSeenPartition(seenFilterStage, partition, ctx),
};
