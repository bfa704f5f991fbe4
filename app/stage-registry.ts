import type { ConsumerStage, PartitionedStage, StageDefinition, StageName } from '../pipeline/stage.js';
import { normalizeStage } from '../stages/normalize/index.js';
import { seenFilterStage } from '../stages/seen-filter/index.js';
import { politenessGateStage } from '../stages/politeness-gate/index.js';
import { fetchStage } from '../stages/fetch/index.js';
import { createExtractStage, type ExtractStageOptions } from '../stages/extract/index.js';
import { simhashStage } from '../stages/simhash/index.js';
import { createPersistStage, type RowBatch } from '../stages/persist/index.js';
import { createArchiveStage, type ArchiveOutput } from '../stages/archive/index.js';
import { createRenderStage } from '../stages/render/index.js';
import type { Renderer } from '../ports/browser.js';
import type { RowSink } from '../ports/row-sink.js';

export interface StageFactoryOptions {
  /** where persist writes; only the persist stage needs it */
  openOutput?: () => Promise<RowSink<RowBatch>>;
  persist?: { maxRows: number; maxDelayMs: number };
  /** extract's options; without `threads` it parses on the calling thread */
  extract?: ExtractStageOptions;
  /** where archive writes WARC files and `captures`; only the archive stage needs it */
  openArchive?: () => Promise<ArchiveOutput>;
  /** the browser the render stage drives, with its pool size; only the render stage needs it */
  openRenderer?: () => { renderer: Renderer; concurrency: number };
}

/** The seen-filter is partitioned (a consumer per partition held); every other stage has one consumer. */
export type BuiltStage<N extends StageName> = N extends 'seen-filter' ? PartitionedStage<any> : ConsumerStage<any>;

export async function buildStage<N extends StageName>(name: N, opts: StageFactoryOptions): Promise<BuiltStage<N>> {
  return (await build(name, opts)) as BuiltStage<N>;
}

async function build(name: StageName, opts: StageFactoryOptions): Promise<StageDefinition<any>> {
  switch (name) {
    case 'normalize':
      return normalizeStage;
    case 'seen-filter':
      return seenFilterStage;
    case 'politeness-gate':
      return politenessGateStage;
    case 'fetch':
      return fetchStage;
    case 'render': {
      if (!opts.openRenderer) throw new Error('the render stage needs a browser');
      return createRenderStage(opts.openRenderer());
    }
    case 'extract':
      return createExtractStage(opts.extract);
    case 'simhash':
      return simhashStage;
    case 'persist': {
      if (!opts.openOutput) throw new Error('the persist stage needs an output directory (--out)');
      return createPersistStage(await opts.openOutput(), opts.persist ?? { maxRows: 1000, maxDelayMs: 1000 });
    }
    case 'archive': {
      if (!opts.openArchive) throw new Error('the archive stage needs an output directory (--out)');
      return createArchiveStage(await opts.openArchive());
    }
  }
}
