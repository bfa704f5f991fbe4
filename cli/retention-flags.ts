import type { Command } from 'commander';
import { EDGES } from '../topology/index.js';
import { DEFAULT_RETENTION, type RetentionOptions, type RetentionPolicyFor } from '../ops/nats/topology.js';
import { collect, UsageError } from './usage-error.js';

export interface RetentionFlags {
  streamMaxAge?: string;
  streamMaxBytes?: string;
  streamRetention?: string[];
}

const AGE_UNITS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const SIZE_UNITS = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, KIB: 1024, MIB: 1024 ** 2, GIB: 1024 ** 3, TIB: 1024 ** 4 } as const;

/** `14d`, `36h`, `90m`; `0` keeps messages without an age limit. */
export function parseAge(flag: string, value: string): number {
  const v = value.trim();
  if (v === '0') return 0;
  const m = /^(\d+)(m|h|d)$/.exec(v);
  if (!m) throw new UsageError(`${flag} must be a duration such as 14d, 36h or 90m (0 = no limit), got "${value}"`);
  return Number(m[1]) * AGE_UNITS[m[2] as keyof typeof AGE_UNITS];
}

/** `50GB`, `500MiB`, `1TB`; `-1` or `unlimited` = no size limit. */
export function parseSize(flag: string, value: string): number {
  const v = value.trim();
  if (v === '-1' || v.toLowerCase() === 'unlimited') return -1;
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)$/i.exec(v);
  if (!m) throw new UsageError(`${flag} must be a size such as 50GB or 500MiB (-1 = no limit), got "${value}"`);
  return Math.round(Number(m[1]) * SIZE_UNITS[m[2]!.toUpperCase() as keyof typeof SIZE_UNITS]);
}

/** The streams whose limits the flags set (a stream kept with another's limits follows that one). */
const LIMITED_STREAMS = Object.entries(EDGES).filter(([, e]) => !('retainedWith' in e));

/** A stream by its edge name (`fetched`) or stream name (`CRAWL_FETCHED`). */
function streamName(flag: string, name: string): string {
  const follower = Object.entries(EDGES).find(([k, e]) => 'retainedWith' in e && (k === name.toLowerCase() || e.stream === name.toUpperCase()));
  if (follower && 'retainedWith' in follower[1]) {
    throw new UsageError(`${flag}: ${follower[1].stream} keeps the limits of ${follower[1].retainedWith}, whose messages refer to it: set ${follower[1].retainedWith}=...`);
  }
  const edge = LIMITED_STREAMS.find(([k, e]) => k === name.toLowerCase() || e.stream === name.toUpperCase());
  if (!edge) throw new UsageError(`${flag}: unknown stream "${name}": one of ${LIMITED_STREAMS.map(([k]) => k).join(', ')}`);
  return edge[1].stream;
}

export function addRetentionOptions(cmd: Command): Command {
  return cmd
    .option('--stream-max-age <duration>', 'how long every stream keeps messages: the replay window, e.g. 14d (default 14d, or $CRAWL_STREAM_MAX_AGE)')
    .option('--stream-max-bytes <size>', 'bytes each stream keeps at most, oldest dropped first, e.g. 50GB (default no limit, or $CRAWL_STREAM_MAX_BYTES)')
    .option('--stream-retention <stream=age[,size]>', 'limits for one stream, e.g. fetched=3d,200GB (repeatable; streams: ' + LIMITED_STREAMS.map(([k]) => k).join(', ') + ')', collect, []);
}

/**
 * The retention each stream gets from the flags (or the environment). A stream no flag
 * speaks about keeps the limits it has (a new one gets the defaults), so a resumed
 * `crawl run` does not undo limits set earlier.
 */
export function retentionPolicy(o: RetentionFlags, env: NodeJS.ProcessEnv = process.env): RetentionPolicyFor {
  const ageText = o.streamMaxAge ?? env.CRAWL_STREAM_MAX_AGE;
  const sizeText = o.streamMaxBytes ?? env.CRAWL_STREAM_MAX_BYTES;
  const age = ageText !== undefined && ageText !== '' ? parseAge(o.streamMaxAge ? '--stream-max-age' : 'CRAWL_STREAM_MAX_AGE', ageText) : undefined;
  const size = sizeText !== undefined && sizeText !== '' ? parseSize(o.streamMaxBytes ? '--stream-max-bytes' : 'CRAWL_STREAM_MAX_BYTES', sizeText) : undefined;
  const perStream = new Map<string, Partial<RetentionOptions>>();
  for (const rule of o.streamRetention ?? []) {
    const m = /^([^=]+)=([^,]+)(?:,(.+))?$/.exec(rule.trim());
    if (!m) throw new UsageError(`--stream-retention must look like fetched=3d or fetched=3d,200GB, got "${rule}"`);
    const stream = streamName('--stream-retention', m[1]!);
    const maxAgeMs = parseAge('--stream-retention', m[2]!);
    const queue = Object.entries(EDGES).find(([, e]) => e.stream === stream && 'queue' in e);
    if (queue && maxAgeMs !== 0) {
      throw new UsageError(`--stream-retention: ${stream} holds the URLs waiting for their host, which wait as long as their host makes them: it has no age limit (a size limit refuses new URLs instead: ${queue[0]}=0,50GB)`);
    }
    perStream.set(stream, {
      maxAgeMs,
      ...(m[3] !== undefined ? { maxBytes: parseSize('--stream-retention', m[3]) } : {}),
    });
  }
  return (stream) => {
    const own = perStream.get(stream);
    if (!own && age === undefined && size === undefined) return undefined;
    return {
      maxAgeMs: own?.maxAgeMs ?? age ?? DEFAULT_RETENTION.maxAgeMs,
      maxBytes: own?.maxBytes ?? size ?? DEFAULT_RETENTION.maxBytes,
    };
  };
}
