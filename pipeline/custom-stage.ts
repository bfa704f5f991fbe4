/**
 * The contract of a stage written outside this repository (a user's extraction, filter or
 * link scorer), loaded with `--stage-module`: `defineStage({ name, input, table, handle })`.
 * It reads one edge through a durable consumer of its own, and its handler returns one of
 * the outcomes built-in stages return: emit (rows into its own table, URLs back into the
 * frontier), retry later, or fail (dead-letter the message with the reason). The adapter in
 * app/custom-stages.ts turns that into the runner's Disposition, so ack after write and
 * publish, dead letters and metrics are the runner's, as for every stage.
 *
 * Plain data and checks only: no I/O, so a user's test calls `handle` directly.
 */
import type { ExtractedPage, FetchedPage, FinalPage, UrlOutcome } from '../schemas/index.js';

/** The messages a custom stage may read, by the name it gives as `input`. */
export interface CustomInputs {
  /** pages as fetched (and as rendered), body included: `crawl.fetched.>` on CRAWL_FETCHED */
  fetched: FetchedPage;
  /** what extract made of a page (text, title, links, JSON-LD, OpenGraph): `crawl.extracted.*` */
  extracted: ExtractedPage;
  /** a stored page, with its near-duplicate verdict: `crawl.pages.*` on CRAWL_RESULTS */
  pages: FinalPage;
  /** every URL's terminal outcome (fetched, failed, filtered, robots...): `crawl.outcomes.*` on CRAWL_RESULTS */
  outcomes: UrlOutcome;
}
export type CustomInputName = keyof CustomInputs;
export const CUSTOM_INPUTS: readonly CustomInputName[] = ['fetched', 'extracted', 'pages', 'outcomes'];

/** Column types of a custom table (DuckDB's names). */
export const COLUMN_TYPES = ['VARCHAR', 'DOUBLE', 'BIGINT', 'INTEGER', 'BOOLEAN', 'TIMESTAMP'] as const;
export type CustomColumnType = (typeof COLUMN_TYPES)[number];

/** Columns every custom table has besides its own: the input message's URL and where it sat in its stream. */
export const SYSTEM_COLUMNS = ['source_url', 'crawl_id', 'version', '_seq', '_row'] as const;

/** A URL to send into the crawl: through normalize, the scope, the seen set and politeness, like a link. */
export interface QueuedUrl {
  url: string;
  /** link hops from a seed; default: the input page's depth + 1 */
  depth?: number;
  /** the anchor text it was found under, if any */
  anchor?: string;
  /** which of its host's URLs go first: high ones before normal ones before low ones (default normal) */
  priority?: 'high' | 'normal' | 'low';
}

export type CustomOutcome =
  | { kind: 'emit'; rows: Record<string, unknown>[]; urls: QueuedUrl[] }
  | { kind: 'retry'; afterMs: number; reason: string }
  | { kind: 'fail'; reason: string };

/** Rows into the stage's table and URLs into the frontier (both optional: nothing = filtered). */
export const emit = (out: { rows?: Record<string, unknown>[]; urls?: QueuedUrl[] } = {}): CustomOutcome => ({ kind: 'emit', rows: out.rows ?? [], urls: out.urls ?? [] });
/** The message is redelivered after `afterMs` (a service of yours was down, say). */
export const retry = (afterMs: number, reason: string): CustomOutcome => ({ kind: 'retry', afterMs, reason });
/** The message cannot be handled: it goes to the stage's dead letters with `reason`. */
export const fail = (reason: string): CustomOutcome => ({ kind: 'fail', reason });

export interface CustomStageLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** What a custom stage's handler gets besides its message. */
export interface CustomStageContext {
  /** the stage's name */
  stage: string;
  /** the crawl the rows belong to */
  crawlId: string;
  /** true when `crawl replay --stage-module` runs it: URLs it emits are not sent */
  replaying: boolean;
  now(): number;
  log: CustomStageLog;
}

export interface CustomStageInput<M> {
  message: M;
  subject: string;
  /** the message's sequence in its stream (a replay sees the same number) */
  seq: number;
  /** 1 on first delivery */
  deliveryCount: number;
}

export interface CustomStageSpec<I extends CustomInputName> {
  /** lower-case letters, digits and dashes; its durable consumer, dead letters and metrics are named after it */
  name: string;
  input: I;
  /** its output table; `name` defaults to the stage's name with dashes as underscores */
  table?: { name?: string; columns: Record<string, CustomColumnType> };
  handle(input: CustomStageInput<CustomInputs[I]>, ctx: CustomStageContext): CustomOutcome | Promise<CustomOutcome>;
  /** how long a message may take before the server redelivers it, and the handler is given up on (default 30000) */
  ackWaitMs?: number;
  /** messages one process handles at once (default 16) */
  concurrency?: number;
}

/** Marks a defined stage, across copies of this package (a module may resolve its own). */
export const CUSTOM_STAGE_MARK = Symbol.for('jetstream-crawler.custom-stage');

export interface CustomStage<I extends CustomInputName = CustomInputName> extends Required<Omit<CustomStageSpec<I>, 'table'>> {
  readonly [CUSTOM_STAGE_MARK]: true;
  table: { name: string; columns: Record<string, CustomColumnType> } | null;
}

/** A stage definition that cannot run, with what is wrong. */
export class StageDefinitionError extends Error {
  override name = 'StageDefinitionError';
}

const NAME = /^[a-z][a-z0-9-]{0,47}$/;
const TABLE = /^[a-z][a-z0-9_]{0,47}$/;
/** Names the crawl's own stages, tables and views have (a custom one may not shadow them). */
const TAKEN_STAGES = ['normalize', 'seen-filter', 'politeness-gate', 'fetch', 'render', 'extract', 'simhash', 'persist', 'archive'];
const TAKEN_TABLES = ['pages', 'links', 'fetch_log', 'captures', 'hosts', 'urls', 'warc'];

export function defineStage<I extends CustomInputName>(spec: CustomStageSpec<I>): CustomStage<I> {
  const s = spec as Partial<CustomStageSpec<I>>;
  if (typeof s?.name !== 'string' || !NAME.test(s.name)) throw new StageDefinitionError(`stage name must be lower-case letters, digits and dashes, starting with a letter, got ${JSON.stringify(s?.name)}`);
  if (TAKEN_STAGES.includes(s.name)) throw new StageDefinitionError(`stage name "${s.name}" is a built-in stage's`);
  if (!CUSTOM_INPUTS.includes(s.input as CustomInputName)) throw new StageDefinitionError(`stage ${s.name}: input must be one of ${CUSTOM_INPUTS.join(', ')}, got ${JSON.stringify(s.input)}`);
  if (typeof s.handle !== 'function') throw new StageDefinitionError(`stage ${s.name}: handle must be a function`);
  const ackWaitMs = s.ackWaitMs ?? 30_000;
  if (!Number.isInteger(ackWaitMs) || ackWaitMs < 1000) throw new StageDefinitionError(`stage ${s.name}: ackWaitMs must be a whole number of ms, at least 1000`);
  const concurrency = s.concurrency ?? 16;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new StageDefinitionError(`stage ${s.name}: concurrency must be a whole number, at least 1`);
  let table: CustomStage['table'] = null;
  if (s.table) {
    const name = s.table.name ?? s.name.replace(/-/g, '_');
    if (!TABLE.test(name) || TAKEN_TABLES.includes(name) || name.endsWith('_all') || name.startsWith('raw_')) {
      throw new StageDefinitionError(`stage ${s.name}: table name "${name}" is not allowed (lower-case letters, digits, underscores; not a built-in table, not raw_* or *_all)`);
    }
    const columns = s.table.columns ?? {};
    if (Object.keys(columns).length === 0) throw new StageDefinitionError(`stage ${s.name}: table ${name} needs at least one column`);
    for (const [column, type] of Object.entries(columns)) {
      if (!TABLE.test(column)) throw new StageDefinitionError(`stage ${s.name}: column "${column}" must be lower-case letters, digits and underscores`);
      if ((SYSTEM_COLUMNS as readonly string[]).includes(column)) throw new StageDefinitionError(`stage ${s.name}: column "${column}" is added by the crawler; choose another name`);
      if (!COLUMN_TYPES.includes(type)) throw new StageDefinitionError(`stage ${s.name}: column ${column} has type ${JSON.stringify(type)}, not one of ${COLUMN_TYPES.join(', ')}`);
    }
    table = { name, columns: { ...columns } };
  }
  return { [CUSTOM_STAGE_MARK]: true, name: s.name, input: s.input as I, table, handle: s.handle, ackWaitMs, concurrency };
}

export const isCustomStage = (v: unknown): v is CustomStage => typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[CUSTOM_STAGE_MARK] === true;

/**
 * What a handler returned, checked: an outcome of the right shape, or why it is not one
 * (the message is then dead-lettered with that reason).
 */
export function checkOutcome(v: unknown, stage: CustomStage): CustomOutcome | string {
  const what = v === undefined ? 'undefined' : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? JSON.stringify(v).slice(0, 120) : `${typeof v} ${String(v).slice(0, 60)}`;
  const not = `returned ${what}, not an outcome (return emit(...), retry(ms, reason) or fail(reason))`;
  if (typeof v !== 'object' || v === null) return not;
  const o = v as Record<string, unknown>;
  if (o['kind'] === 'retry') return typeof o['afterMs'] === 'number' && o['afterMs'] >= 0 && typeof o['reason'] === 'string' ? (o as CustomOutcome) : not;
  if (o['kind'] === 'fail') return typeof o['reason'] === 'string' ? (o as CustomOutcome) : not;
  if (o['kind'] !== 'emit' || !Array.isArray(o['rows']) || !Array.isArray(o['urls'])) return not;
  const rows = o['rows'] as unknown[];
  if (rows.length > 0 && !stage.table) return `returned ${rows.length} rows, but the stage declares no table`;
  for (const [i, row] of rows.entries()) {
    const problem = rowProblem(row, stage.table!.columns);
    if (problem) return `row ${i}: ${problem}`;
  }
  for (const [i, u] of (o['urls'] as unknown[]).entries()) {
    const q = u as Partial<QueuedUrl> | null;
    if (typeof q !== 'object' || q === null || typeof q.url !== 'string') return `urls[${i}] is not { url, depth?, anchor?, priority? }`;
    if (q.depth !== undefined && (!Number.isInteger(q.depth) || q.depth < 0)) return `urls[${i}].depth must be a whole number >= 0`;
    if (q.priority !== undefined && !['high', 'normal', 'low'].includes(q.priority)) return `urls[${i}].priority must be high, normal or low`;
  }
  return o as CustomOutcome;
}

/** Why a row does not fit the table's columns, or null. */
function rowProblem(row: unknown, columns: Record<string, CustomColumnType>): string | null {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return 'not an object';
  for (const [key, value] of Object.entries(row)) {
    const type = columns[key];
    if (!type) return `unknown column "${key}" (the table has ${Object.keys(columns).join(', ')})`;
    if (value === null || value === undefined) continue;
    const ok =
      type === 'VARCHAR'
        ? typeof value === 'string'
        : type === 'BOOLEAN'
          ? typeof value === 'boolean'
          : type === 'DOUBLE'
            ? typeof value === 'number' && Number.isFinite(value)
            : type === 'TIMESTAMP'
              ? (typeof value === 'number' && Number.isFinite(value)) || (value instanceof Date && !Number.isNaN(value.getTime()))
              : typeof value === 'number' && Number.isSafeInteger(value) && (type === 'BIGINT' || Math.abs(value) <= 2_147_483_647);
    if (!ok) return `column ${key} (${type}) got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value)}`;
  }
  return null;
}

/**
 * A context for calling a stage's `handle` in a test, without a server: what the handler
 * logs is kept in `logged`.
 */
export function stageTestContext(overrides: Partial<CustomStageContext> = {}): CustomStageContext & { logged: Array<{ level: string; fields: object; message: string }> } {
  const logged: Array<{ level: string; fields: object; message: string }> = [];
  const at = (level: string) => (fields: object, message: string) => void logged.push({ level, fields, message });
  return { stage: 'test', crawlId: 'test', replaying: false, now: () => Date.now(), log: { info: at('info'), warn: at('warn'), error: at('error') }, logged, ...overrides };
}
