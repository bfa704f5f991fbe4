import { DurableBatcher, type DurableBatchLimits } from '../../pipeline/durable-batcher.js';
import type { ConsumerStage } from '../../pipeline/stage.js';
import { createPersistHandler, decodePersistInput, type PersistInput } from './handle.js';
import { mergeRows, rowCount, type OutputWriter, type RowBatch } from './rows.js';
import { persistEmits, persistInput } from './spec.js';

// for `crawl replay`, which turns replayed results into rows without the batching stage
export { decodePersistInput } from './handle.js';
export { emptyBatch, outcomeRows, pageRows, type OutputWriter, type RowBatch } from './rows.js';

export function createPersistStage(writer: OutputWriter, limits: DurableBatchLimits): ConsumerStage<PersistInput> {
  // the rows of many messages go into one file per table
  const batcher = new DurableBatcher<RowBatch>((batches) => writer.write(mergeRows(batches)), limits, rowCount);
  return {
    name: 'persist',
    input: persistInput,
    emits: persistEmits,
    // many messages wait together for their batch's file to be written
    defaultConcurrency: 1_000,
    counts: ['rows'],
    decode: decodePersistInput,
    handle: createPersistHandler(batcher),
    close: async () => {
      await batcher.flush();
      await writer.close();
    },
  };
}
