/**
 * Stages of the user's own, loaded from a module (`--stage-module ./my-stage.js`) and run by
 * the same runner as the built-in stages: a durable consumer of their own on the edge they
 * name, ack once their rows are written and their URLs published, dead letters with the
 * reason, metrics under their name. A stage's code is the user's: whatever it does wrong
 * (throws, hangs, returns something that is not an outcome) costs that message (it is
 * dead-lettered with the error), never the crawl.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { decodeExtracted, decodeFetched, decodeFinal, decodeOutcome, encodeDiscoveredLinks } from '../schemas/index.js';
import { customStageInputOf, type StageInputSpec } from '../topology/index.js';
import { checkOutcome, isCustomStage, type CustomInputName, type CustomStage, type CustomStageContext, type QueuedUrl } from '../pipeline/custom-stage.js';
import { DurableBatcher } from '../pipeline/durable-batcher.js';
import { subjectFor } from '../pipeline/partition.js';
import { fail, retryAfter, type ConsumerStage, type Disposition, type Emit, type StageContext, type StageName } from '../pipeline/stage.js';
import { openCustomTable, type CustomRow, type CustomTableWriter } from '../pipeline/adapters/parquet/custom-table.js';
import { bodyOf } from '../stages/shared/messages/page-body.js';
import { isRemoteOutput } from '../pipeline/adapters/output-layout.js';

/** A stage module that cannot be used: exit 2 with this message, before anything is crawled. */
export class StageModuleError extends Error {
  override name = 'StageModuleError';
}

export interface LoadedStage {
  /** the module as given on the command line, for messages */
  module: string;
  stage: CustomStage;
}

/** Loads each module and takes its stage (the default export, `stage`, or the one export that is a stage). */
export async function loadStageModules(specs: readonly string[], cwd = process.cwd()): Promise<LoadedStage[]> {
  const loaded: LoadedStage[] = [];
  for (const spec of specs) {
    const file = path.resolve(cwd, spec);
    if (!existsSync(file)) throw new StageModuleError(`stage module ${spec}: not found (looked for ${file})`);
    let exports: Record<string, unknown>;
    try {
      exports = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (err) {
      throw new StageModuleError(`stage module ${spec}: failed to load: ${(err as Error).message.split('\n')[0]}`);
    }
    const stage = stageExportOf(exports);
    if (!stage) {
      const names = Object.keys(exports);
      throw new StageModuleError(
        `stage module ${spec}: exports no stage (its exports: ${names.length ? names.join(', ') : 'none'}); export default defineStage({ name, input, handle }) from 'jetstream-crawler'`,
      );
    }
    const twin = loaded.find((l) => l.stage.name === stage.name);
    if (twin) throw new StageModuleError(`stage module ${spec}: its stage "${stage.name}" has the name of the stage in ${twin.module}`);
    const sameTable = stage.table && loaded.find((l) => l.stage.table?.name === stage.table!.name);
    if (sameTable) throw new StageModuleError(`stage module ${spec}: its table "${stage.table!.name}" is also the table of ${sameTable.module}`);
    loaded.push({ module: spec, stage });
  }
  return loaded;
}

function stageExportOf(exports: Record<string, unknown>): CustomStage | null {
  if (isCustomStage(exports['default'])) return exports['default'];
  if (isCustomStage(exports['stage'])) return exports['stage'];
  const stages = Object.values(exports).filter(isCustomStage);
  return stages.length === 1 ? stages[0]! : null;
}

/** How each input's messages decode (its subjects: topology/stages.ts). */
const DECODE: Record<CustomInputName, (data: Uint8Array) => unknown> = {
  fetched: decodeFetched,
  extracted: decodeExtracted,
  pages: decodeFinal,
  outcomes: decodeOutcome,
};

/** The stage's durable consumer: named after it, on the stream of its input. */
export function customStageInput(stage: CustomStage): StageInputSpec {
  // a user's handler may be slow (a model, a service of theirs): a short queue per stage
  return customStageInputOf(stage.name, stage.input, stage.ackWaitMs, Math.max(64, stage.concurrency * 4));
}

export const decodeCustomInput = (stage: CustomStage, _subject: string, data: Uint8Array): unknown => DECODE[stage.input](data);

class HandlerTimeout extends Error {}

/**
 * Runs the user's handler on one message and checks what it returned: the outcome, or the
 * reason the message is to be dead-lettered (the handler threw, hung past the stage's ack
 * wait, or returned something else). A fetched page's body stored beside its message is read first.
 */
export async function runHandler(loaded: LoadedStage, input: { subject: string; message: unknown; seq: number; deliveryCount: number }, userCtx: CustomStageContext, ctx: Pick<StageContext, 'bodies'>) {
  const { stage, module } = loaded;
  let message = input.message;
  if (stage.input === 'fetched') {
    const page = message as Parameters<typeof bodyOf>[0];
    message = { ...page, body: await bodyOf(page, ctx as StageContext), body_ref: undefined };
  }
  let timer: NodeJS.Timeout | undefined;
  let returned: unknown;
  try {
    const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new HandlerTimeout()), stage.ackWaitMs)));
    returned = await Promise.race([Promise.resolve().then(() => stage.handle({ ...input, message } as never, userCtx)), hang]);
  } catch (err) {
    if (err instanceof HandlerTimeout) return { problem: `stage module ${module}: the handler did not finish within the stage's ack wait (${stage.ackWaitMs} ms)` };
    return { problem: `stage module ${module}: the handler threw: ${(err as Error)?.message ?? String(err)}` };
  } finally {
    clearTimeout(timer);
  }
  const outcome = checkOutcome(returned, stage);
  if (typeof outcome === 'string') return { problem: `stage module ${module}: the handler ${outcome}` };
  return { outcome };
}

/** The input message's URL and crawl, for its rows and the URLs it sends. */
function sourceOf(message: unknown): { url: string | null; host: string | null; depth: number | null; job?: string } {
  const m = message as { url?: unknown; host?: unknown; depth?: unknown; job?: unknown };
  return {
    url: typeof m.url === 'string' ? m.url : null,
    host: typeof m.host === 'string' ? m.host : null,
    depth: typeof m.depth === 'number' ? m.depth : null,
    ...(typeof m.job === 'string' ? { job: m.job } : {}),
  };
}

/** The URLs a handler queued, as discovered links into normalize: one message per depth. */
export function queuedUrlMessages(stage: string, seq: number, message: unknown, urls: readonly QueuedUrl[], partitions: number): Emit[] {
  const source = sourceOf(message);
  const byDepth = new Map<number, QueuedUrl[]>();
  for (const u of urls) {
    const depth = u.depth ?? (source.depth ?? -1) + 1;
    byDepth.set(depth, [...(byDepth.get(depth) ?? []), u]);
  }
  const host = source.host ?? (URL.canParse(urls[0]?.url ?? '') ? new URL(urls[0]!.url).hostname : stage);
  return [...byDepth].map(([depth, list]) => ({
    subject: subjectFor('links', host, partitions),
    msgId: `custom-links:${stage}:${seq}:${depth}`,
    data: encodeDiscoveredLinks({
      v: 1,
      source_url: source.url,
      depth,
      via: 'link',
      links: list.map((u) => ({
        url: u.url,
        ...(u.anchor !== undefined ? { anchor: u.anchor } : {}),
        ...(u.priority === 'high' || u.priority === 'low' ? { priority: u.priority } : {}),
      })),
      ...(source.job !== undefined ? { job: source.job } : {}),
    }),
  }));
}

export function customRows(message: unknown, seq: number, rows: readonly Record<string, unknown>[]): CustomRow[] {
  const url = sourceOf(message).url;
  return rows.map((values, row) => ({ values, sourceUrl: url, seq, row }));
}

export interface CustomStageOptions {
  /** where the table is written (needed when the stage declares one) */
  outDir?: string;
  crawlId: string;
  partitions: number;
  batch: { maxRows: number; maxDelayMs: number };
}

/** The stage as the runner runs it. */
export async function customConsumerStage(loaded: LoadedStage, o: CustomStageOptions): Promise<ConsumerStage<unknown>> {
  const { stage } = loaded;
  let table: CustomTableWriter | null = null;
  if (stage.table) {
    if (!o.outDir) throw new StageModuleError(`stage module ${loaded.module}: its table ${stage.table.name} needs an output directory (--out)`);
    if (isRemoteOutput(o.outDir)) throw new StageModuleError(`stage module ${loaded.module}: its table ${stage.table.name} is written to a local output directory only, not ${o.outDir}`);
    table = await openCustomTable(o.outDir, { table: stage.table.name, stage: stage.name, columns: stage.table.columns });
  }
  const writer = table;
  // rows of many messages go into one file; a message is acked once the file holding its rows is written
  const batcher = new DurableBatcher<{ crawlId: string; rows: CustomRow[] }>(
    async (items) => {
      const byCrawl = new Map<string, CustomRow[]>();
      for (const i of items) byCrawl.set(i.crawlId, [...(byCrawl.get(i.crawlId) ?? []), ...i.rows]);
      for (const [crawlId, rows] of byCrawl) await writer!.write(crawlId, rows);
    },
    o.batch,
    (i) => i.rows.length,
  );
  const name = stage.name as StageName;
  return {
    name,
    input: customStageInput(stage),
    emits: ['discovered'],
    defaultConcurrency: stage.concurrency,
    counts: ['rows', 'urls'],
    decode: (subject, data) => decodeCustomInput(stage, subject, data),
    async handle(input, ctx): Promise<Disposition> {
      const userCtx: CustomStageContext = { stage: stage.name, crawlId: o.crawlId, replaying: false, now: () => ctx.clock.now(), log: ctx.log.child({ stage: stage.name }) };
      const ran = await runHandler(loaded, { subject: input.subject, message: input.message, seq: input.streamSeq, deliveryCount: input.deliveryCount }, userCtx, ctx);
      if (!ran.outcome) return fail(ran.problem);
      const outcome = ran.outcome;
      if (outcome.kind === 'retry') return retryAfter(outcome.afterMs, outcome.reason);
      if (outcome.kind === 'fail') return fail(outcome.reason);
      if (outcome.rows.length > 0) {
        const crawlId = sourceOf(input.message).job ?? o.crawlId;
        // a write that fails throws: the runner retries the message (the user's code was fine)
        await batcher.add({ crawlId, rows: customRows(input.message, input.streamSeq, outcome.rows) });
        ctx.metrics.count(stage.name, 'rows', 'written', outcome.rows.length);
      }
      if (outcome.urls.length > 0) ctx.metrics.count(stage.name, 'urls', 'queued', outcome.urls.length);
      const messages = queuedUrlMessages(stage.name, input.streamSeq, input.message, outcome.urls, o.partitions);
      return { kind: 'emit', messages, ...(outcome.rows.length > 0 ? { stored: true as const } : {}) };
    },
    async close() {
      await batcher.flush();
      await writer?.close();
    },
  };
}
