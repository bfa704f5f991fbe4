import os from 'node:os';
import { decodeFetched, type FetchedPage } from '../../schemas/index.js';
import type { ConsumerStage } from '../../pipeline/stage.js';
import { createExtractHandler, type ExtractOptions } from './handle.js';
import { createExtractPool, createPooledExtractHandler } from './pooled-handle.js';
import { extractEmits, extractInput } from './spec.js';

export interface ExtractStageOptions extends Partial<ExtractOptions> {
  /** worker threads that parse pages; 0 (the default here) = on the main thread */
  threads?: number;
}

/** `--extract-threads` unless given: every core but the one the main thread (the other stages) keeps busy. */
export function defaultExtractThreads(): number {
  return Math.max(1, os.availableParallelism() - 1);
}

export function createExtractStage(opts: ExtractStageOptions = {}): ConsumerStage<FetchedPage> | ConsumerStage<Uint8Array> {
  const options: ExtractOptions = { titles: opts.titles ?? true };
  const threads = opts.threads ?? 0;
  const stage = { name: 'extract', input: extractInput, emits: extractEmits } as const;
  if (threads === 0) {
    return {
      ...stage,
      // parsing is CPU-bound: a few at once only overlap the publishes
      defaultConcurrency: 8,
      counts: ['pages', 'json_ld', 'sitemaps'],
      decode: (_subject, data) => decodeFetched(data),
      handle: createExtractHandler(options),
    };
  }
  const pool = createExtractPool(threads);
  return {
    ...stage,
    // two jobs per thread keep the pool busy; the rest overlap publishing and acks
    defaultConcurrency: Math.max(8, 2 * threads + 4),
    counts: ['pages', 'json_ld', 'sitemaps'],
    // the bytes go to a worker as they are: it decodes them (a bad message comes back as a SchemaError)
    decode: (_subject, data) => data,
    handle: createPooledExtractHandler(pool, options),
    close: () => pool.close(),
  };
}
