/**
 * `crawl replay --stage-module FILE`: a stage module, fixed, run again over its input's
 * retained messages into a new version of its table. Nothing is fetched or published: the
 * URLs the handler queues are counted, not sent (its context says `replaying`).
 */
import { subjectMatches } from '../topology/index.js';
import type { StreamRange, StreamWindow } from '../pipeline/adapters/stream-range.js';
import { openCustomTable, type CustomRow } from '../pipeline/adapters/parquet/custom-table.js';
import type { Logger } from '../pipeline/logger.js';
import type { BodyStore } from '../ports/bodies.js';
import type { StageContext } from '../pipeline/stage.js';
import { customRows, customStageInput, decodeCustomInput, runHandler, type LoadedStage } from './custom-stages.js';
import type { ReadRetained } from './replay.js';

export interface CustomReplaySummary {
  messages: number;
  firstSeq: number | null;
  lastSeq: number | null;
  rows: number;
  /** URLs the handler queued, which a replay does not send */
  urlsNotSent: number;
  failed: number;
  failures: string[];
  window: StreamWindow | null;
}

export interface CustomReplayOptions {
  range: StreamRange;
  outDir: string;
  /** the output version the rows go to */
  version: number;
  crawlId: string;
  log: Logger;
  /** a fetched page's body stored beside its message is read from here */
  bodies: BodyStore;
  batchRows?: number;
  onProgress?(s: CustomReplaySummary): void;
}

export async function replayCustomStage(readRetained: ReadRetained, loaded: LoadedStage, o: CustomReplayOptions): Promise<CustomReplaySummary> {
  const { stage } = loaded;
  const input = customStageInput(stage);
  const summary: CustomReplaySummary = { messages: 0, firstSeq: null, lastSeq: null, rows: 0, urlsNotSent: 0, failed: 0, failures: [], window: null };
  const failed = (seq: number, reason: string) => {
    summary.failed += 1;
    if (summary.failures.length < 10) summary.failures.push(`seq ${seq}: ${reason}`);
  };
  const table = stage.table ? await openCustomTable(o.outDir, { table: stage.table.name, stage: stage.name, columns: stage.table.columns }, { version: o.version }) : null;
  const pending = new Map<string, CustomRow[]>();
  let pendingRows = 0;
  const flush = async () => {
    for (const [crawlId, rows] of pending) await table!.write(crawlId, rows);
    pending.clear();
    pendingRows = 0;
  };
  const ctx = { bodies: o.bodies } as Pick<StageContext, 'bodies'>;
  const userCtx = { stage: stage.name, crawlId: o.crawlId, replaying: true, now: () => Date.now(), log: o.log.child({ stage: stage.name }) };
  let lastProgress = Date.now();
  try {
    for await (const m of readRetained(input.stream, o.range, (w) => (summary.window = w))) {
      if (input.filterSubject !== '' && !subjectMatches(input.filterSubject, m.subject)) continue;
      summary.messages += 1;
      summary.firstSeq ??= m.seq;
      summary.lastSeq = m.seq;
      let message: unknown;
      try {
        message = decodeCustomInput(stage, m.subject, m.data);
      } catch (err) {
        failed(m.seq, (err as Error).message);
        continue;
      }
      const ran = await runHandler(loaded, { subject: m.subject, message, seq: m.seq, deliveryCount: 1 }, userCtx, ctx).catch((err: Error) => ({ problem: err.message, outcome: undefined }));
      if (!ran.outcome) {
        failed(m.seq, ran.problem);
        continue;
      }
      if (ran.outcome.kind !== 'emit') {
        failed(m.seq, `${ran.outcome.kind}: ${ran.outcome.reason}`);
        continue;
      }
      summary.urlsNotSent += ran.outcome.urls.length;
      if (ran.outcome.rows.length > 0) {
        const crawlId = (message as { job?: string }).job ?? o.crawlId;
        pending.set(crawlId, [...(pending.get(crawlId) ?? []), ...customRows(message, m.seq, ran.outcome.rows)]);
        pendingRows += ran.outcome.rows.length;
        summary.rows += ran.outcome.rows.length;
        if (pendingRows >= (o.batchRows ?? 1000)) await flush();
      }
      if (o.onProgress && Date.now() - lastProgress > 2000) {
        lastProgress = Date.now();
        o.onProgress(summary);
      }
    }
    if (table) await flush();
  } finally {
    await table?.close();
  }
  return summary;
}
