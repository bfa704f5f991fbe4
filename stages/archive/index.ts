import type { ConsumerStage } from '../../pipeline/stage.js';
import { decodeExchange, type ArchivedExchange } from '../../schemas/index.js';
import { createArchiveHandler } from './handle.js';
import { ArchiveSink, type CapturesWriter } from './sink.js';
import { archiveEmits, archiveInput } from './spec.js';
import { WarcFileWriter, type WarcWriter } from './warc-file.js';
import { UploadedWarcWriter } from './uploaded-warc.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { repairAbandonedWarcs, type Repaired } from './warc-repair.js';

export { readWarcRecord, type WarcRecordRead } from './read-record.js';

/** What the archive stage writes to: set up by the composition root (app/outputs.ts) for an output directory. */
export interface ArchiveOutput {
  /** a local directory; with `store`, the local spool the WARC files are written to before upload */
  outDir: string;
  /** an object store the WARC files go to, one per batch (see uploaded-warc.ts) */
  store?: ObjectStore;
  crawlId: string;
  /** a WARC file is closed and the next one started before it would pass this size */
  maxWarcBytes: number;
  captures: CapturesWriter;
  batch: { maxRows: number; maxDelayMs: number };
  /** exchanges handled at once (the runner's concurrency for this stage; default ARCHIVE_CONCURRENCY) */
  concurrency?: number;
  /** called with the files left by dead writers and sealed at start */
  onRepaired?: (r: Repaired[]) => void;
}

export const ARCHIVE_SOFTWARE = 'jetstream-crawler/0.1 (archive stage)';

/** Exchanges the archive stage handles at once unless `--concurrency` says otherwise. */
export const ARCHIVE_CONCURRENCY = 200;

export async function createArchiveStage(out: ArchiveOutput): Promise<ConsumerStage<ArchivedExchange>> {
  const opts = { crawlId: out.crawlId, maxBytes: out.maxWarcBytes, software: ARCHIVE_SOFTWARE };
  let warc: WarcWriter;
  if (out.store) {
    warc = new UploadedWarcWriter(out.outDir, opts, out.store);
  } else {
    const local = new WarcFileWriter(out.outDir, opts);
    // before this process writes anything: files whose writer died are cut back to whole records
    out.onRepaired?.(await repairAbandonedWarcs(local.dir));
    warc = local;
  }
  const concurrency = out.concurrency ?? ARCHIVE_CONCURRENCY;
  // a batch is made durable when it holds every exchange that can be in flight: waiting for
  // more (up to maxRows) would only wait for the timer, since each holds a handler's slot
  const sink = new ArchiveSink(warc, out.captures, { ...out.batch, maxRows: Math.min(out.batch.maxRows, concurrency) });
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
