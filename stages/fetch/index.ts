import { decodeGrant, type FetchGrant } from '../../schemas/index.js';
import type { StageDefinition } from '../../pipeline/stage.js';
import { handleFetch } from './handle.js';
import { fetchEmits, fetchInput } from './spec.js';

export const fetchStage: StageDefinition<FetchGrant> = {
  name: 'fetch',
  input: fetchInput,
  emits: fetchEmits,
  defaultConcurrency: 64,
  decode: (_subject, data) => decodeGrant(data),
  handle: handleFetch,
};
