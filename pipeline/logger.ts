import { createWriteStream } from 'node:fs';
import { Writable } from 'node:stream';
import { pino } from 'pino';

export type Logger = pino.Logger;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogOptions {
  /** `--log-level` (else LOG_LEVEL); on a terminal it also says what the terminal shows */
  level?: string;
  /** `--log-file`: every record at the level, as JSON lines */
  file?: string;
  /**
   * whether stderr is a person's terminal (default: whether it is a TTY); a worker thread's
   * stderr is a pipe to its process's, so the process tells the thread
   */
  terminal?: boolean;
}

/** The level a terminal shows unless told otherwise: what needs a person's attention. */
const TERMINAL_LEVEL: LogLevel = 'warn';

/**
 * Logs on stderr (stdout is for command output). When stderr is not a terminal (a service
 * manager, a pipe, CI) they are JSON lines at the level (default info), for machines. On a
 * terminal a person reads them between progress lines, so only warnings and errors are
 * shown, one readable line each, unless `--log-level` or LOG_LEVEL asks for more; the rest
 * goes to `--log-file` as JSON lines.
 */
export function createLogger(name: string, opts: LogOptions = {}, stderr: NodeJS.WriteStream = process.stderr): Logger {
  const explicit = opts.level ?? process.env.LOG_LEVEL;
  const level = checkLevel(explicit ?? 'info');
  const streams: pino.StreamEntry[] = [];
  if (opts.terminal ?? stderr.isTTY === true) streams.push({ level: pinoLevel(explicit ? level : TERMINAL_LEVEL), stream: terminalLines(stderr) });
  else streams.push({ level: pinoLevel(level), stream: stderr === process.stderr ? pino.destination({ dest: 2, sync: false }) : stderr });
  if (opts.file) streams.push({ level: pinoLevel(level), stream: createWriteStream(opts.file, { flags: 'a' }) });
  const lowest = streams.map((s) => s.level as pino.Level).sort((a, b) => pino.levels.values[a]! - pino.levels.values[b]!)[0]!;
  return pino(
    {
      name,
      level: lowest,
      base: { pid: process.pid },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((a) => scrub(a, 2)) as Parameters<typeof method>);
        },
      },
    },
    pino.multistream(streams),
  );
}

/**
 * What a URL may say in a log: its scheme and host. A path or query can carry a session id
 * or a signed token, a user-info part a password (`nats://user:pass@host`), and a log file is
 * read by more people than the crawl's output: URLs are in the crawl log (fetch_log) instead.
 */
export function scrubUrls(text: string): string {
  return text.replace(
    /\b([a-z][a-z0-9+.-]{1,15}):\/\/(?:[^\s@/"'<>]*@)?([^\s/?#"'<>@,]+)([/?#][^\s"'<>,]*)?/gi,
    (_m, scheme: string, host: string, rest: string | undefined) => `${scheme}://${host}${rest && rest.length > 1 ? '/…' : ''}`,
  );
}

function scrub(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrubUrls(value);
  if (depth <= 0 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    const copy = new Error(scrubUrls(value.message));
    copy.name = value.name;
    copy.stack = value.stack === undefined ? undefined : scrubUrls(value.stack);
    return copy;
  }
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth - 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrub(v, depth - 1);
  return out;
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

function checkLevel(level: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`log level (--log-level, LOG_LEVEL) must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
  return level as LogLevel;
}

/** multistream takes no 'silent' entry: a level above fatal stands for it */
const pinoLevel = (level: LogLevel): pino.Level => (level === 'silent' ? 'fatal' : level);

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };
const SKIPPED_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'v']);

/**
 * JSON records as one line each for a person: `warning: robots.txt unavailable ... (host=a.example status=503)`.
 * The line first clears the progress line it interrupts; the next progress tick redraws it.
 */
function terminalLines(out: NodeJS.WriteStream): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        out.write(`\r\x1b[K${readableRecord(line)}\n`);
      }
      done();
    },
  });
}

export function readableRecord(json: string): string {
  let r: Record<string, unknown>;
  try {
    r = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const fields = Object.entries(r)
    .filter(([k]) => !SKIPPED_FIELDS.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const level = LEVEL_NAMES[Number(r.level)] ?? String(r.level);
  return `${level}: ${String(r.msg ?? '')}${fields.length > 0 ? ` (${fields.join(' ')})` : ''}`;
}
