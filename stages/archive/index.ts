import type { DurableBatchLimits } from '../../pipeline/durable-batcher.js';
import type { ConsumerStage } from '../../pipeline/stage.js';
import type { WarcSink } from '../../ports/warc-sink.js';
import { decodeExchange, type ArchivedExchange } from '../../schemas/index.js';
import { createArchiveHandler } from './handle.js';
import { ArchiveSink, type CapturesSink } from './sink.js';
import { archiveEmits, archiveInput } from './spec.js';

export { warcinfoHeader } from './warcinfo.js';

/** What the archive stage writes to: set up by the composition root (app/outputs.ts) for an output. */
export interface ArchiveOutput {
  /** where the records go, each file opening with `warcinfoHeader`'s record */
  warc: WarcSink;
  /** where the `captures` rows go */
  captures: CapturesSink;
  batch: DurableBatchLimits;
  /** exchanges handled at once (the runner's concurrency for this stage; default ARCHIVE_CONCURRENCY) */
  concurrency?: number;
}

export const ARCHIVE_SOFTWARE = 'jetstream-crawler/0.1 (archive stage)';

/** Exchanges the archive stage handles at once unless `--concurrency` says otherwise. */
export const ARCHIVE_CONCURRENCY = 200;

export function createArchiveStage(out: ArchiveOutput): ConsumerStage<ArchivedExchange> {
  const concurrency = out.concurrency ?? ARCHIVE_CONCURRENCY;
  // a batch is made durable when it holds every exchange that can be in flight: waiting for
  // more (up to maxRows) would only wait for the timer, since each holds a handler's slot
  const sink = new ArchiveSink(out.warc, out.captures, { ...out.batch, maxRows: Math.min(out.batch.maxRows, concurrency) });
  return {
    name: 'archive',
    input: archiveInput,
    emits: archiveEmits,
    // many exchanges wait together for their batch to be made durable; each holds its body
    // (up to --max-page-bytes) until then, so this bounds the stage's memory
    defaultConcurrency: concurrency,
    counts: ['records'],
    decode: (_subject, data) => decodeExchange(data),
    handle: createArchiveHandler(sink),
    close: () => sink.close(),
  };
}
