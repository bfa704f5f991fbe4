import type { ConsumerStage } from '../../pipeline/stage.js';
import { decodeNormalizeInput, handleNormalize, type NormalizeInput } from './handle.js';
import { normalizeEmits, normalizeInput } from './spec.js';

export const normalizeStage: ConsumerStage<NormalizeInput> = {
  name: 'normalize',
  input: normalizeInput,
  emits: normalizeEmits,
  defaultConcurrency: 32,
  counts: ['urls'],
  decode: decodeNormalizeInput,
  handle: handleNormalize,
};
export { canonicalize } from './canonical-url.js';
export { seedScopeKeys } from './scope-keys.js';
