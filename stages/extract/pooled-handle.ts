import { SchemaError } from '../../schemas/index.js';
import type { Disposition, StageContext, StageInput } from '../../pipeline/stage.js';
import { WorkerPool } from '../../pipeline/worker-pool.js';
import { ownedCopy } from '../../pipeline/worker-jobs.js';
import type { BodyRef } from '../../schemas/index.js';
import type { ExtractSettings, PageExtraction } from './extraction.js';
import { extractionDisposition, extractSettings, type ExtractOptions } from './handle.js';
import { bodyOf } from '../shared/messages/page-body.js';

/** One fetched-page message as it came from the stream, still encoded: the worker decodes it. */
export interface PooledExtractJob {
  data: Uint8Array;
  settings: ExtractSettings;
  /** the page's body when it is stored beside the message (the worker asked for it) */
  body?: Uint8Array;
}

/** `needsBody`: the page's body is stored beside its message; the job is sent again with it. */
export type PooledExtractReply = { extraction: PageExtraction } | { schemaError: string } | { needsBody: BodyRef; url: string };

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
  return async function handleExtractInPool(input: StageInput<Uint8Array>, ctx: StageContext): Promise<Disposition> {
    const settings = extractSettings(opts, ctx);
    // msg.data stays whole for a dead letter; the worker gets a copy it may own
    const data = ownedCopy(input.message);
    let reply = await pool.run({ data, settings }, [data.buffer]);
    if ('needsBody' in reply) {
      // a body stored beside its message is read here, where the connection is, and the page
      // extracted again with it: a second trip to the worker only for pages larger than a message
      const body = ownedCopy(await bodyOf({ url: reply.url, body: new Uint8Array(0), body_ref: reply.needsBody }, ctx));
      const again = ownedCopy(input.message);
      reply = await pool.run({ data: again, settings, body }, [again.buffer, body.buffer]);
    }
    if ('needsBody' in reply) throw new Error(`extracting ${reply.url}: the worker asked again for the body it was given`);
    if ('schemaError' in reply) throw new SchemaError(reply.schemaError);
    return extractionDisposition(reply.extraction, ctx);
  };
}
