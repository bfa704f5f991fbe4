import { Option, type Command } from 'commander';
import { z } from 'zod';
import { EDGES, SUBJECTS } from '../topology/index.js';
import { STAGE_NAMES } from '../pipeline/stage.js';
import { decodeDeadLetter, decodeMessage, decodeSeeds } from '../schemas/index.js';
import { connectionPublisher } from '../pipeline/adapters/stream-access.js';
import { streamAdmin } from '../pipeline/adapters/stream-admin.js';
import { StreamNotFoundError, type StreamAdmin, type StreamMessage } from '../ports/stream-admin.js';
import type { Publisher } from '../ports/streams.js';
import { joinCrawl } from './connection.js';
import { exitWhenDrained } from './exit.js';
import { formatTable, oneLine } from './table-format.js';
import { UsageError, parseIntOption } from './usage-error.js';

const FORMATS = ['table', 'json'] as const;
type Format = (typeof FORMATS)[number];
const DLQ_STREAM = EDGES.deadletter.stream;
const DEFAULT_LIMIT = 100;
/** table mode: reason and payload preview are cut to this many characters */
const REASON_WIDTH = 60;
const PREVIEW_WIDTH = 60;

export interface DeadLettersOptions {
  stage?: string;
  format: string;
  limit: number;
  requeue: boolean;
  out: string;
}

/** One message of CRAWL_DEADLETTER, as listed. */
export interface ListedLetter {
  /** sequence in CRAWL_DEADLETTER */
  seq: number;
  stage: string;
  /** ISO time the stage gave up, null if the letter does not say */
  failed_at: string | null;
  delivery_count: number | null;
  /** the original message's subject and its sequence in its stream (null: the letter is not decodable) */
  subject: string | null;
  stream: string | null;
  stream_seq: number | null;
  reason: string;
  /** the original payload's `url` if it has one, else null */
  url: string | null;
  bytes: number;
  /** what the table shows: the url, or the byte length */
  preview: string;
}

interface Letter extends ListedLetter {
  data: Uint8Array | null;
}

export function addDeadLettersCommand(cli: Command, defaultOut: string): Command {
  return cli
    .command('dead-letters')
    .description('list the messages stages gave up on (CRAWL_DEADLETTER, oldest first); --requeue sends them back to their stage')
    .option('--stage <name>', `only this stage's letters: ${STAGE_NAMES.join(' | ')}, or a stage module's name`)
    .addOption(new Option('--format <format>', 'table | json').default('table'))
    .option('--limit <n>', 'list (or requeue) at most this many letters', parseIntOption('--limit', 1, 1_000_000), DEFAULT_LIMIT)
    .option(
      '--requeue',
      'publish each listed letter’s original message to its original subject again (after a fix), then delete the letter',
      false,
    )
    .option('--out <dir>', 'the running crawl’s output directory (when it runs an embedded server)', defaultOut)
    .action(async (o: DeadLettersOptions) => exitWhenDrained(await deadLetters(o)));
}

/** `crawl dead-letters`: lists CRAWL_DEADLETTER; with --requeue, republishes the originals and deletes the letters. */
export async function deadLetters(o: DeadLettersOptions): Promise<number> {
  if (!(FORMATS as readonly string[]).includes(o.format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got "${o.format}"`);
  // a stage module's name is any such word (app/custom-stages.ts)
  if (o.stage !== undefined && !(STAGE_NAMES as readonly string[]).includes(o.stage) && !/^[a-z][a-z0-9-]{0,47}$/.test(o.stage)) {
    throw new UsageError(`--stage must be one of ${STAGE_NAMES.join(', ')}, or a stage module's name (lowercase letters, digits and -), got "${o.stage}"`);
  }
  const format = o.format as Format;
  const limit = o.limit ?? DEFAULT_LIMIT;
  const nc = await joinCrawl(o.out, 'crawl dead-letters');
  try {
    const admin = streamAdmin(nc);
    const filter = o.stage ? `${SUBJECTS.deadletter}.${o.stage}` : EDGES.deadletter.subjects[0];
    const total = await countLetters(admin, filter, o.stage);
    const letters = total === 0 ? [] : await readLetters(admin, filter, limit);
    const what = o.stage ? `dead letters for stage ${o.stage}` : 'dead letters';
    if (letters.length === 0) {
      if (format === 'json') process.stdout.write('[]\n');
      (format === 'json' ? process.stderr : process.stdout).write(`no ${what}\n`);
      return 0;
    }
    if (!o.requeue) {
      process.stdout.write(format === 'json' ? JSON.stringify(letters.map(listed), null, 2) + '\n' : table(letters, Math.max(total, letters.length), what));
      return 0;
    }
    return await requeue(connectionPublisher(nc), admin, letters, format);
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

/** How many letters the filter matches (and whether the stream is there at all). */
async function countLetters(admin: StreamAdmin, filter: string, stage: string | undefined): Promise<number> {
  try {
    return stage ? ((await admin.subjectCounts(DLQ_STREAM, filter))[filter] ?? 0) : (await admin.streamState(DLQ_STREAM)).messages;
  } catch (err) {
    if (err instanceof StreamNotFoundError) {
      throw new UsageError(`no stream ${DLQ_STREAM} on the crawl's NATS server (apply the topology: crawl run, or crawl topology apply)`);
    }
    throw err;
  }
}

/** Oldest first, by direct gets (next message on the filter after the last one): leaves nothing on the server. */
async function readLetters(admin: StreamAdmin, filter: string, limit: number): Promise<Letter[]> {
  const letters: Letter[] = [];
  let next = 1;
  while (letters.length < limit) {
    const m = await admin.readFrom(DLQ_STREAM, filter, next);
    if (!m) break;
    letters.push(toLetter(m));
    next = m.seq + 1;
  }
  return letters;
}

function toLetter(m: StreamMessage): Letter {
  // the runner publishes with msgID dlq:<stream>:<seq>, so the id names the original stream
  const origin = /^dlq:([^:]+):\d+$/.exec(m.msgId ?? '');
  const stageFromSubject = m.subject.slice(SUBJECTS.deadletter.length + 1);
  try {
    const dl = decodeDeadLetter(m.data);
    const url = payloadUrl(dl.subject, dl.data);
    return {
      seq: m.seq,
      stage: dl.stage,
      failed_at: isoTime(dl.failed_at),
      delivery_count: dl.delivery_count,
      subject: dl.subject,
      stream: origin?.[1] ?? null,
      stream_seq: dl.stream_seq,
      reason: dl.reason,
      url,
      bytes: dl.data.length,
      preview: url ?? `${dl.data.length} bytes`,
      data: dl.data,
    };
  } catch (err) {
    return {
      seq: m.seq,
      stage: stageFromSubject,
      failed_at: m.time instanceof Date && !Number.isNaN(m.time.getTime()) ? m.time.toISOString() : null,
      delivery_count: null,
      subject: null,
      stream: origin?.[1] ?? null,
      stream_seq: null,
      reason: `(not a readable dead letter: ${(err as Error).message})`,
      url: null,
      bytes: m.data.length,
      preview: `${m.data.length} bytes (whole letter)`,
      data: null,
    };
  }
}

const WithUrl = z.object({ url: z.string() });

/** The `url` of a crawl message (msgpack, or a seed's JSON / plain text), or null. */
function payloadUrl(subject: string, data: Uint8Array): string | null {
  try {
    return subject === SUBJECTS.seeds ? decodeSeeds(data)[0]!.url : decodeMessage(WithUrl, data, 'payload').url;
  } catch {
    return null;
  }
}

function isoTime(ms: number): string | null {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

function listed(l: Letter): ListedLetter {
  const { data: _data, ...rest } = l;
  return rest;
}


function table(letters: Letter[], total: number, what: string): string {
  const columns = ['seq', 'stage', 'failed_at', 'deliveries', 'subject', 'stream_seq', 'reason', 'payload'];
  const rows = letters.map((l) => [l.seq, l.stage, l.failed_at, l.delivery_count, l.subject, l.stream_seq, l.reason, l.preview]);
  const footer = letters.length < total ? `(${letters.length} of ${total} ${what}; --limit N shows more)` : `(${letters.length} ${what})`;
  return formatTable(columns, rows, { footer, nullText: '-', maxWidth: { 6: REASON_WIDTH, 7: PREVIEW_WIDTH } });
}

/**
 * Republishes each letter's original payload to its original subject, msgID `requeue:<dlq seq>`
 * (a requeue interrupted and run again within the duplicate window does not publish twice),
 * and deletes the letter only once the publish is acked.
 */
async function requeue(publisher: Publisher, admin: StreamAdmin, letters: Letter[], format: Format): Promise<number> {
  let done = 0;
  let failed = 0;
  const results: Array<ListedLetter & { requeued_to: { stream: string; seq: number; duplicate: boolean } | null; error: string | null }> = [];
  for (const l of letters) {
    if (l.data === null || l.subject === null) {
      failed += 1;
      const error = 'not a readable dead letter; left in place';
      process.stderr.write(`skipped dead letter #${l.seq} (${l.stage}): ${error}\n`);
      results.push({ ...listed(l), requeued_to: null, error });
      continue;
    }
    try {
      const ack = (await publisher.publish([{ subject: l.subject, data: l.data, msgId: `requeue:${l.seq}`, ...(l.stream ? { expectStream: l.stream } : {}) }]))[0]!;
      if (!(await admin.deleteMessage(DLQ_STREAM, l.seq))) throw new Error(`dead letter #${l.seq} was deleted already`);
      done += 1;
      results.push({ ...listed(l), requeued_to: { stream: ack.stream ?? l.stream ?? '', seq: ack.seq, duplicate: ack.duplicate }, error: null });
      if (format === 'table') {
        const again = ack.duplicate ? ' (already published by an earlier requeue)' : '';
        process.stdout.write(`requeued #${l.seq} ${l.stage}: ${l.subject} -> ${ack.stream} #${ack.seq}${again}  ${oneLine(l.preview, PREVIEW_WIDTH)}\n`);
      }
    } catch (err) {
      failed += 1;
      const error = oneLine((err as Error).message, 200);
      process.stderr.write(`failed to requeue dead letter #${l.seq} (${l.stage}) to ${l.subject}: ${error}; left in place\n`);
      results.push({ ...listed(l), requeued_to: null, error });
    }
  }
  const summary = `requeued ${done} dead letter${done === 1 ? '' : 's'}${failed ? `, ${failed} left in the queue` : ''}\n`;
  if (format === 'json') {
    process.stdout.write(JSON.stringify(results, null, 2) + '\n');
    process.stderr.write(summary);
  } else {
    process.stdout.write(summary);
  }
  return failed === 0 ? 0 : 1;
}
