import { decodeExtracted, type ExtractedPage } from '../../schemas/index.js';
import type { ConsumerStage } from '../../pipeline/stage.js';
import { handleSimhash } from './handle.js';
import { simhashEmits, simhashInput } from './spec.js';

export const simhashStage: ConsumerStage<ExtractedPage> = {
  name: 'simhash',
  input: simhashInput,
  emits: simhashEmits,
  defaultConcurrency: 32,
  counts: ['pages'],
  decode: (_subject, data) => decodeExtracted(data),
  handle: handleSimhash,
};
