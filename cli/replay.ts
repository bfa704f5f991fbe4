import path from 'node:path';
import { openKvStores } from '../pipeline/adapters/nats-kv.js';
import { openParquetOutput } from '../pipeline/adapters/parquet/row-sink.js';
import { newestVersion } from '../pipeline/adapters/output-layout.js';
import { readStoredSettings } from '../app/settings-store.js';
import { createLogger } from '../pipeline/logger.js';
import type { LogOptions } from './log-options.js';
import { natsBodyStore } from '../pipeline/adapters/body-stream.js';
import { StageMetrics } from '../pipeline/metrics.js';
import { REPLAY_STAGES, runReplay, type ReplayOptions, type ReplayStage, type ReplaySummary } from '../app/replay.js';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { readStreamRange, type StreamRange } from '../pipeline/adapters/stream-range.js';
import { TABLE_NAMES } from '../schemas/output-tables.js';
import { joinOrOpenCrawl } from './connection.js';
import { UsageError } from './usage-error.js';
import { resolveOut } from './output-location.js';
import { loadStageModules, type LoadedStage } from '../app/custom-stages.js';
import { replayCustomStage } from '../app/custom-replay.js';
import { listCustomTables } from '../pipeline/adapters/parquet/custom-table.js';
import { isRemoteOutput } from '../pipeline/adapters/output-layout.js';

/** Every table of the output, stage modules' included: a replay's version is above all their newest, one sequence for `crawl sql --version`. */
async function outputTables(outDir: string): Promise<string[]> {
  return [...TABLE_NAMES, ...(isRemoteOutput(outDir) ? [] : (await listCustomTables(outDir)).map((t) => t.table))];
}

export interface ReplayFlags extends LogOptions {
  from?: string;
  /** replay this module's stage instead of a built-in one (one module) */
  stageModule?: string[];
  since?: string;
  fromSeq?: number;
  until?: string;
  out: string;
  crawlId?: string;
}

const DURATION = /^(\d+)(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** An ISO 8601 time (`2026-11-21T10:00:00Z`, `2026-11-21`) or a duration ago (`30m`, `2h`, `7d`). */
export function parseTime(flag: string, value: string, now = Date.now()): Date {
  const ago = DURATION.exec(value.trim());
  if (ago) return new Date(now - Number(ago[1]) * UNIT_MS[ago[2] as keyof typeof UNIT_MS]);
  if (/^\d{4}-\d{2}-\d{2}/.test(value.trim())) {
    const t = Date.parse(value.trim());
    if (!Number.isNaN(t)) return new Date(t);
  }
  throw new UsageError(`${flag} must be an ISO time (2026-11-21T10:00:00Z) or a duration ago (30m, 2h, 7d), got "${value}"`);
}

export function parseRange(o: Pick<ReplayFlags, 'since' | 'fromSeq' | 'until'>, now = Date.now()): StreamRange {
  if (o.since !== undefined && o.fromSeq !== undefined) throw new UsageError('give --since or --from-seq, not both');
  const range: StreamRange = {};
  if (o.fromSeq !== undefined) range.fromSeq = o.fromSeq;
  if (o.since !== undefined) range.since = parseTime('--since', o.since, now);
  if (o.until !== undefined) {
    if (/^\d+$/.test(o.until.trim())) range.untilSeq = Number(o.until);
    else range.until = parseTime('--until', o.until, now);
  }
  return range;
}

function describe(s: ReplaySummary): string {
  const seqs = s.firstSeq === null ? 'no messages' : `seq ${s.firstSeq}..${s.lastSeq}`;
  return `${s.messages} messages (${seqs}), ${s.rows.pages} pages, ${s.rows.links} links, ${s.rows.fetch_log} fetch_log rows, ${s.failed} failed`;
}

/**
 * Which crawl each fetch and event of the output belongs to, so a replay over a store that
 * two crawls used gives each row its own crawl's id; unknown ones (not persisted yet) get
 * `fallback`. Holds two ids per fetch in memory: about 150 MB per million pages.
 */
async function crawlIdsOfOutput(outDir: string, fallback: string): Promise<ReplayOptions['crawlOf']> {
  const byFetch = new Map<string, string>();
  const byEvent = new Map<string, string>();
  const db = await openOutputDatabase(outDir);
  try {
    for (const [f, c] of (await db.run('SELECT fetch_id, any_value(crawl_id) FROM raw_pages GROUP BY 1')).rows) byFetch.set(String(f), String(c));
    for (const [e, c] of (await db.run('SELECT event_id, any_value(crawl_id) FROM raw_fetch_log GROUP BY 1')).rows) byEvent.set(String(e), String(c));
  } finally {
    await db.close();
  }
  return ({ fetchId, eventId }) => (eventId !== undefined ? byEvent.get(eventId) : undefined) ?? (fetchId !== null ? byFetch.get(fetchId) : undefined) ?? fallback;
}

/** `crawl replay --from STAGE`: see pipeline/replay.ts. */
export async function runReplayCommand(o: ReplayFlags): Promise<number> {
  const modules = o.stageModule ?? [];
  if ((o.from === undefined) === (modules.length === 0)) throw new UsageError('give --from STAGE (one of ' + REPLAY_STAGES.join(', ') + ') or --stage-module FILE, not both');
  if (modules.length > 1) throw new UsageError('--stage-module: a replay runs one module; replay each in turn');
  if (o.from !== undefined && !(REPLAY_STAGES as readonly string[]).includes(o.from)) throw new UsageError(`--from must be one of ${REPLAY_STAGES.join(', ')}, got "${o.from}"`);
  const range = parseRange(o);
  const custom = (await loadStageModules(modules))[0];
  const outDir = resolveOut(o.out, 'replay', false);
  if (custom) return replayModule(custom, range, outDir, o);
  const conn = await joinOrOpenCrawl(outDir, 'crawl replay');
  try {
    const kv = await openKvStores(conn.nc);
    const settings = await readStoredSettings(kv);
    if (!settings) throw new UsageError('the crawl has no settings: nothing was crawled with this server or --out');
    const crawlId = o.crawlId ?? settings.crawlId;
    const crawlOf = await crawlIdsOfOutput(outDir, crawlId);
    // one number for the whole replay, above every crawl's newest: it may touch several crawls
    const version = Math.max(1, (await newestVersion(outDir, await outputTables(outDir))) + 1);
    const log = createLogger('replay', { level: o.logLevel, file: o.logFile });
    const writer = await openParquetOutput(outDir, { version, staleTmpAgeMs: 10 * 60 * 1000, threads: 1, memoryLimit: '256MB' });
    let summary: ReplaySummary;
    try {
      summary = await runReplay((stream, r, onWindow) => readStreamRange(conn.nc, stream, r, onWindow), {
        from: o.from as ReplayStage,
        range,
        crawlOf,
        ctx: { settings: { ...settings, crawlId }, clock: { now: () => Date.now() }, log, metrics: new StageMetrics(), kv, maxPayloadBytes: conn.nc.info?.max_payload ?? 1024 * 1024, bodies: natsBodyStore(conn.nc) },
        write: async (rows) => void (await writer.write(rows)),
        onProgress: (s) => process.stderr.write(`replay: ${describe(s)}\n`),
      });
    } finally {
      await writer.close();
    }
    for (const f of summary.failures) process.stderr.write(`replay: failed: ${f}\n`);
    const retained = summary.window ? ` (retained: seq ${summary.window.firstSeq}..${summary.window.lastSeq})` : '';
    process.stdout.write(`replay from ${o.from}: ${describe(summary)}${retained} -> version ${version} in ${outDir}; nothing fetched or published\n`);
    return summary.failed > 0 ? 1 : 0;
  } finally {
    await conn.close();
  }
}

/** `crawl replay --stage-module FILE`: the module's stage over its input's retained messages into a new version of its table. */
async function replayModule(loaded: LoadedStage, range: StreamRange, outDir: string, o: ReplayFlags): Promise<number> {
  const { stage } = loaded;
  if (!stage.table) throw new UsageError(`stage module ${loaded.module}: its stage ${stage.name} declares no table, so a replay has nothing to write`);
  const conn = await joinOrOpenCrawl(outDir, 'crawl replay');
  try {
    const settings = await readStoredSettings(await openKvStores(conn.nc));
    if (!settings) throw new UsageError('the crawl has no settings: nothing was crawled with this server or --out');
    // one number for the whole output, above every table's newest, as a built-in replay's
    const version = Math.max(1, (await newestVersion(outDir, [...(await outputTables(outDir)), stage.table.name])) + 1);
    const log = createLogger('replay', { level: o.logLevel, file: o.logFile });
    const summary = await replayCustomStage((stream, r, onWindow) => readStreamRange(conn.nc, stream, r, onWindow), loaded, {
      range,
      outDir,
      version,
      crawlId: o.crawlId ?? settings.crawlId,
      log,
      bodies: natsBodyStore(conn.nc),
      onProgress: (s) => process.stderr.write(`replay: ${s.messages} messages, ${s.rows} rows, ${s.failed} failed\n`),
    });
    for (const f of summary.failures) process.stderr.write(`replay: failed: ${f}\n`);
    const seqs = summary.firstSeq === null ? 'no messages' : `seq ${summary.firstSeq}..${summary.lastSeq}`;
    const retained = summary.window ? ` (retained: seq ${summary.window.firstSeq}..${summary.window.lastSeq})` : '';
    const unsent = summary.urlsNotSent > 0 ? `, ${summary.urlsNotSent} queued URLs not sent` : '';
    process.stdout.write(
      `replay of ${stage.name}: ${summary.messages} messages (${seqs}), ${summary.rows} rows into ${stage.table.name}, ${summary.failed} failed${unsent}${retained} -> version ${version} in ${outDir}; nothing fetched or published\n`,
    );
    return summary.failed > 0 ? 1 : 0;
  } finally {
    await conn.close();
  }
}
