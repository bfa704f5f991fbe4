import { DurableBatcher, type DurableBatchLimits } from '../../pipeline/durable-batcher.js';
import type { ConsumerStage } from '../../pipeline/stage.js';
import type { RowSink } from '../../ports/row-sink.js';
import { createPersistHandler, decodePersistInput, type PersistInput } from './handle.js';
import { mergeRows, rowCount, type RowBatch } from './rows.js';
import { persistEmits, persistInput } from './spec.js';

// for `crawl replay`, which turns replayed results into rows without the batching stage
export { decodePersistInput } from './handle.js';
export { emptyBatch, outcomeRows, pageRows, type RowBatch } from './rows.js';

/** Persist writes the rows of pages and outcomes to `rows` (the crawl's Parquet tables), a batch of many messages at a time. */
export function createPersistStage(rows: RowSink<RowBatch>, limits: DurableBatchLimits): ConsumerStage<PersistInput> {
  const batcher = new DurableBatcher<RowBatch>((batches) => rows.write(mergeRows(batches)), limits, rowCount);
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
      await rows.close();
    },
  };
}
