import type { ConsumerStage } from '../../pipeline/stage.js';
import { RowBatcher, type OutputWriter } from './batcher.js';
import { createPersistHandler, decodePersistInput, type PersistInput } from './handle.js';
import { persistEmits, persistInput } from './spec.js';

export type { OutputWriter } from './batcher.js';
// for `crawl replay`, which turns replayed results into rows without the batching stage
export { decodePersistInput } from './handle.js';
export { emptyBatch, outcomeRows, pageRows, type RowBatch } from './rows.js';

export function createPersistStage(writer: OutputWriter, opts: { maxRows: number; maxDelayMs: number }): ConsumerStage<PersistInput> {
  const batcher = new RowBatcher(writer, opts);
  return {
    name: 'persist',
    input: persistInput,
    emits: persistEmits,
    // many messages wait together for their batch's file to be written
    defaultConcurrency: 1_000,
    counts: ['rows'],
    decode: decodePersistInput,
    handle: createPersistHandler(batcher),
    close: () => batcher.close(),
  };
}
