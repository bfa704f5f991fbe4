import { crawlIdOf } from '../shared/jobs/job-fields.js';
import { SUBJECTS } from '../../topology/index.js';
import { decodeFinal, decodeOutcome, type FinalPage, type UrlOutcome } from '../../schemas/index.js';
import { emit, type Disposition, type StageContext, type StageInput } from '../../pipeline/stage.js';
import type { DurableBatcher } from '../../pipeline/durable-batcher.js';
import { outcomeRows, pageRows, type RowBatch } from './rows.js';

export type PersistInput = { kind: 'page'; page: FinalPage } | { kind: 'outcome'; outcome: UrlOutcome };

export function decodePersistInput(subject: string, data: Uint8Array): PersistInput {
  if (subject.startsWith(`${SUBJECTS.pages}.`)) return { kind: 'page', page: decodeFinal(data) };
  return { kind: 'outcome', outcome: decodeOutcome(data) };
}

/** `batcher` resolves a message's rows once the files holding them are written: only then is it acked. */
export function createPersistHandler(batcher: DurableBatcher<RowBatch>) {
  return async function handlePersist(input: StageInput<PersistInput>, ctx: StageContext): Promise<Disposition> {
    const m = input.message;
    const rows = m.kind === 'page' ? pageRows(m.page, crawlIdOf(ctx, m.page)) : outcomeRows(m.outcome, crawlIdOf(ctx, m.outcome));
    await batcher.add(rows);
    ctx.metrics.count('persist', 'rows', m.kind === 'page' ? 'page' : m.outcome.outcome);
    return emit();
  };
}
