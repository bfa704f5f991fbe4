import { decodeCandidate, type CandidateUrl } from '../../schemas/index.js';
import type { StageDefinition } from '../../pipeline/stage.js';
import { handleSeenFilter } from './handle.js';
import { seenFilterEmits, seenFilterInput } from './spec.js';

export const seenFilterStage: StageDefinition<CandidateUrl> = {
  name: 'seen-filter',
  input: seenFilterInput,
  emits: seenFilterEmits,
  defaultConcurrency: 64,
  decode: (_subject, data) => decodeCandidate(data),
  handle: handleSeenFilter,
};
