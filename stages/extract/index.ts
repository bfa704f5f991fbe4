import { decodeFetched, type FetchedPage } from '../../schemas/index.js';
import type { StageDefinition } from '../../pipeline/stage.js';
import { createExtractHandler, type ExtractOptions } from './handle.js';
import { extractEmits, extractInput } from './spec.js';

export function createExtractStage(opts?: ExtractOptions): StageDefinition<FetchedPage> {
  return {
    name: 'extract',
    input: extractInput,
    emits: extractEmits,
    // parsing is CPU-bound: a few at once only overlap the publishes
    defaultConcurrency: 8,
    decode: (_subject, data) => decodeFetched(data),
    handle: createExtractHandler(opts),
  };
}
