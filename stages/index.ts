import type { StageDefinition, StageName } from '../pipeline/stage.js';
import { normalizeStage } from './normalize/index.js';
import { seenFilterStage } from './seen-filter/index.js';
import { politenessGateStage } from './politeness-gate/index.js';
import { fetchStage } from './fetch/index.js';
import { createExtractStage, type ExtractStageOptions } from './extract/index.js';
import { simhashStage } from './simhash/index.js';
import { createPersistStage, type OutputWriter } from './persist/index.js';
import { normalizeInput } from './normalize/spec.js';
import { seenFilterInput } from './seen-filter/spec.js';
import { gateInput } from './politeness-gate/spec.js';
import { fetchInput } from './fetch/spec.js';
import { extractInput } from './extract/spec.js';
import { simhashInput } from './simhash/spec.js';
import { persistInput } from './persist/spec.js';
import { createArchiveStage, type ArchiveOutput } from './archive/index.js';
import { archiveInput } from './archive/spec.js';

/** Every stage's consumer, for the topology: derived from the stage specs, declared once. */
export const STAGE_INPUTS = [normalizeInput, seenFilterInput, gateInput, fetchInput, extractInput, simhashInput, persistInput, archiveInput];

export interface StageFactoryOptions {
  /** where persist writes; only the persist stage needs it */
  openOutput?: () => Promise<OutputWriter>;
  persist?: { maxRows: number; maxDelayMs: number };
  /** extract's options; without `threads` it parses on the calling thread */
  extract?: ExtractStageOptions;
  /** where archive writes WARC files and `captures`; only the archive stage needs it */
  openArchive?: () => Promise<ArchiveOutput>;
}

export async function buildStage(name: StageName, opts: StageFactoryOptions): Promise<StageDefinition<any>> {
  switch (name) {
    case 'normalize':
      return normalizeStage;
    case 'seen-filter':
      return seenFilterStage;
    case 'politeness-gate':
      return politenessGateStage;
    case 'fetch':
      return fetchStage;
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
