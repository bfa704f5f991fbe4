import { decodeExtracted, decodeExtractedHead } from '../../schemas/index.js';
import type { ConsumerStage } from '../../pipeline/stage.js';
import { handleSimhash, type SimhashInput } from './handle.js';
import { simhashEmits, simhashInput } from './spec.js';

export const simhashStage: ConsumerStage<SimhashInput> = {
  name: 'simhash',
  input: simhashInput,
  emits: simhashEmits,
  defaultConcurrency: 32,
  counts: ['pages'],
  // the page's text and links are handed on undecoded (decodeExtractedHead)
  decode: (_subject, data) => decodeExtractedHead(data) ?? decodeExtracted(data),
  handle: handleSimhash,
};
