import { SchemaError } from '../../schemas/index.js';
import type { Outcome, StageContext, StageInput } from '../../pipeline/stage.js';
import { WorkerPool } from '../../pipeline/worker-pool.js';
import { ownedCopy } from '../../pipeline/worker-jobs.js';
import type { ExtractSettings, PageExtraction } from './extraction.js';
import { extractionOutcome, extractSettings, type ExtractOptions } from './handle.js';

/** One fetched-page message as it came from the stream, still encoded: the worker decodes it. */
export interface PooledExtractJob {
  data: Uint8Array;
  settings: ExtractSettings;
}

export type PooledExtractReply = { extraction: PageExtraction } | { schemaError: string };

export type ExtractPool = WorkerPool<PooledExtractJob, PooledExtractReply>;

export function createExtractPool(threads: number): ExtractPool {
  return new WorkerPool(new URL('./extract-worker.js', import.meta.url), { size: threads, name: 'extract' });
}

/**
 * Extracts in the pool: the stage's `decode` passes the message bytes through, so decoding
 * the page (msgpack) is off the main thread too. A message the worker cannot decode throws
 * a SchemaError here, which the runner dead-letters as it does for a failed inline decode.
 */
export function createPooledExtractHandler(pool: ExtractPool, opts: ExtractOptions = { titles: true }) {
  return async function handleExtractInPool(input: StageInput<Uint8Array>, ctx: StageContext): Promise<Outcome> {
    // msg.data stays whole for a dead letter; the worker gets a copy it may own
    const data = ownedCopy(input.message);
    const reply = await pool.run({ data, settings: extractSettings(opts, ctx) }, [data.buffer]);
    if ('schemaError' in reply) throw new SchemaError(reply.schemaError);
    return extractionOutcome(reply.extraction, ctx);
  };
}
