/**
 * Replay after a bug fix: the retained input messages of one stage are run through that
 * stage's handler and every downstream stage's handler in this process, and the rows go
 * to a new output version. Nothing is published: a replayed extract's discovered links
 * reach no normalize, and no URL is fetched again (the context's HTTP client and stream
 * publisher refuse to be used). State a stage changes only after publishing
 * (`afterPublish`, e.g. extract's validators for conditional GETs) is left as the live
 * crawl wrote it. Simhash reads the near-duplicate index, where the replayed page is
 * already listed under its own URL, which never makes a page a duplicate of itself.
 */
import { EDGES, subjectMatches, type StageInputSpec } from '../topology/index.js';
import { buildStage, type StageFactoryOptions } from './stage-registry.js';
import { decodePersistInput, emptyBatch, outcomeRows, pageRows, type RowBatch } from '../stages/persist/index.js';
import { persistInput } from '../stages/persist/spec.js';
import type { RetainedMessage, StreamRange, StreamWindow } from '../pipeline/adapters/stream-range.js';
import type { StageContext, ConsumerStage, StageName } from '../pipeline/stage.js';

/** Stages a replay can start from, in dataflow order; persist is the last. */
export const REPLAY_STAGES = ['extract', 'simhash', 'persist'] as const satisfies readonly StageName[];
export type ReplayStage = (typeof REPLAY_STAGES)[number];

export class ReplayRefusedIoError extends Error {
  override name = 'ReplayRefusedIoError';
}

export interface ReplaySummary {
  messages: number;
  firstSeq: number | null;
  lastSeq: number | null;
  rows: { pages: number; links: number; fetch_log: number };
  /** messages a handler could not process (its outcome was retry or fail), with the first reasons */
  failed: number;
  failures: string[];
  /** the stream's retained window when the replay started */
  window: StreamWindow | null;
}

export interface ReplayOptions {
  from: ReplayStage;
  range: StreamRange;
  /**
   * The crawl a replayed row belongs to (messages carry no crawl id): by the fetch or
   * event id it was first written with, else the crawl's current id.
   */
  crawlOf(ids: { fetchId: string | null; eventId?: string }): string;
  /** the live crawl's settings and KV stores; HTTP, host resolution and stream publishing are refused */
  ctx: ReplayContext;
  extract?: StageFactoryOptions['extract'];
  /** receives the rows, in batches */
  write(rows: RowBatch): Promise<void>;
  batchRows?: number;
  onProgress?(s: ReplaySummary): void;
}

function streamHolds(stream: string, subject: string): boolean {
  const edge = Object.values(EDGES).find((e) => e.stream === stream);
  return !!edge && edge.subjects.some((p) => subjectMatches(p, subject));
}

export type ReplayContext = Omit<StageContext, 'http' | 'streams' | 'resolveHost'>;

/** The context with every way out of the process closed: a replay reads, computes and writes files only. */
function sealedContext(ctx: ReplayContext): StageContext {
  const refuse = (what: string) => () => {
    throw new ReplayRefusedIoError(`a replay does not ${what}`);
  };
  return {
    ...ctx,
    http: { request: refuse('fetch URLs'), close: async () => undefined },
    streams: { readNext: refuse('read host queues'), deleteMessage: refuse('delete from host queues'), replay: refuse('read other streams'), consumerPosition: refuse('read consumer positions') },
    // a page's body stored beside its message is read as the live stages read it; nothing is stored
    bodies: { get: (ref) => ctx.bodies.get(ref), put: refuse('store bodies') },
    resolveHost: refuse('resolve hosts'),
  };
}

/** Reads a stream's retained messages in a range, in order (readStreamRange on the crawl's connection). */
export type ReadRetained = (stream: string, range: StreamRange, onWindow: (w: StreamWindow) => void) => AsyncIterable<RetainedMessage>;

export async function runReplay(readRetained: ReadRetained, o: ReplayOptions): Promise<ReplaySummary> {
  const ctx = sealedContext(o.ctx);
  const chain = REPLAY_STAGES.slice(REPLAY_STAGES.indexOf(o.from));
  const defs = new Map<StageName, ConsumerStage<unknown>>();
  for (const name of chain) if (name !== 'persist') defs.set(name, await buildStage(name, { extract: o.extract }));
  const inputOf = (name: ReplayStage): StageInputSpec => (name === 'persist' ? persistInput : defs.get(name)!.input);
  // what the stage's consumer would be given: its stream, and of that only its filter subject
  // (extract reads crawl.fetched.> (pages as fetched and as rendered), not the archive's crawl.exchanges.* beside it)
  const reads = (name: ReplayStage, subject: string): boolean => {
    const input = inputOf(name);
    return streamHolds(input.stream, subject) && (input.filterSubject === '' || subjectMatches(input.filterSubject, subject));
  };

  const summary: ReplaySummary = { messages: 0, firstSeq: null, lastSeq: null, rows: { pages: 0, links: 0, fetch_log: 0 }, failed: 0, failures: [], window: null };
  let batch = emptyBatch();
  let batchSize = 0;
  const flush = async () => {
    if (batchSize === 0) return;
    const b = batch;
    batch = emptyBatch();
    batchSize = 0;
    await o.write(b);
  };
  const addRows = async (rows: RowBatch) => {
    batch.pages.push(...rows.pages);
    batch.links.push(...rows.links);
    batch.fetch_log.push(...rows.fetch_log);
    summary.rows.pages += rows.pages.length;
    summary.rows.links += rows.links.length;
    summary.rows.fetch_log += rows.fetch_log.length;
    batchSize += rows.pages.length + rows.fetch_log.length;
    if (batchSize >= (o.batchRows ?? 1000)) await flush();
  };
  const failed = (seq: number, stage: string, reason: string) => {
    summary.failed += 1;
    if (summary.failures.length < 10) summary.failures.push(`seq ${seq} at ${stage}: ${reason}`);
  };

  /** Runs one message through stage `i` of the chain and what it emits through the rest. */
  const runFrom = async (i: number, subject: string, data: Uint8Array, seq: number): Promise<void> => {
    const name = chain[i]!;
    if (name === 'persist') {
      let m;
      try {
        m = decodePersistInput(subject, data);
      } catch (err) {
        return failed(seq, name, (err as Error).message);
      }
      await addRows(
        m.kind === 'page'
          ? pageRows(m.page, o.crawlOf({ fetchId: m.page.fetch_id }))
          : outcomeRows(m.outcome, o.crawlOf({ fetchId: m.outcome.fetch_id, eventId: m.outcome.event_id })),
      );
      return;
    }
    const def = defs.get(name)!;
    let outcome;
    try {
      outcome = await def.handle({ subject, message: def.decode(subject, data), deliveryCount: 1, streamSeq: seq }, ctx);
    } catch (err) {
      return failed(seq, name, (err as Error).message);
    }
    if (outcome.kind !== 'emit') return failed(seq, name, outcome.reason);
    // only what the next stage reads goes on; discovered links and the like stay unpublished
    for (const m of outcome.messages) if (reads(chain[i + 1]!, m.subject)) await runFrom(i + 1, m.subject, m.data, seq);
  };

  let lastProgress = Date.now();
  for await (const m of readRetained(inputOf(o.from).stream, o.range, (w) => (summary.window = w))) {
    if (!reads(o.from, m.subject)) continue;
    summary.messages += 1;
    summary.firstSeq ??= m.seq;
    summary.lastSeq = m.seq;
    await runFrom(0, m.subject, m.data, m.seq);
    if (o.onProgress && Date.now() - lastProgress > 2000) {
      lastProgress = Date.now();
      o.onProgress(summary);
    }
  }
  await flush();
  return summary;
}
