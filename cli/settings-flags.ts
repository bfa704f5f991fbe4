import type { Command } from 'commander';
import { collect, parseIntOption, UsageError } from './usage-error.js';
import { parseResolveRule } from '../pipeline/adapters/resolve-map.js';
import { defaultCrawlId, parseSettings, SettingsError, type CrawlSettings, type CrawlSettingsInput } from '../pipeline/settings.js';

/** The crawl settings flags, shared by `crawl run` and `crawl topology apply`. */
export function addSettingsOptions(cmd: Command): Command {
  return cmd
    .option('--resolve <pattern=address>', 'map hosts matching PATTERN (e.g. *.site.test) to ADDRESS[:PORT], like curl (repeatable)', collect, [])
    .option('--max-depth <n>', 'link hops from a seed to follow (default 5)', parseIntOption('--max-depth', 0, 1000))
    .option('--max-pages <n>', 'stop admitting URLs after this many (0 = no limit)', parseIntOption('--max-pages', 0))
    .option('--partitions <p>', 'partitions per edge (default 16)', parseIntOption('--partitions', 1, 1024))
    .option('--min-delay-ms <n>', 'minimum gap between requests to one host (default 1000)', parseIntOption('--min-delay-ms', 0, 3_600_000))
    .option('--user-agent <s>', 'User-Agent header, with a contact URL; its product token is matched in robots.txt')
    .option('--include <pattern>', 'only crawl URLs matching this glob or /regex/ (repeatable)', collect, [])
    .option('--exclude <pattern>', 'never crawl URLs matching this glob or /regex/ (repeatable)', collect, [])
    .option('--crawl-id <id>', 'name of this crawl in the output (default crawl-YYYYMMDD of its first run)');
}

export interface SettingsFlags {
  resolve: string[];
  maxDepth?: number;
  maxPages?: number;
  partitions?: number;
  minDelayMs?: number;
  userAgent?: string;
  include: string[];
  exclude: string[];
  crawlId?: string;
}

/**
 * The crawl's settings: what it was started with (if anything), overridden by the flags
 * given now. Invalid values are usage errors that name the option.
 */
export function mergeSettings(stored: CrawlSettings | null, o: SettingsFlags): CrawlSettings {
  for (const r of o.resolve) {
    try {
      parseResolveRule(r);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const s: Partial<CrawlSettingsInput> = {};
  if (o.maxDepth !== undefined) s.maxDepth = o.maxDepth;
  if (o.maxPages !== undefined) s.maxPages = o.maxPages;
  if (o.partitions !== undefined) s.partitions = o.partitions;
  if (o.minDelayMs !== undefined) s.minDelayMs = o.minDelayMs;
  if (o.userAgent !== undefined) s.userAgent = o.userAgent;
  if (o.resolve.length > 0) s.resolve = o.resolve;
  if (o.include.length > 0) s.include = o.include;
  if (o.exclude.length > 0) s.exclude = o.exclude;
  if (o.crawlId !== undefined) s.crawlId = o.crawlId;
  try {
    return parseSettings({ ...(stored ?? { crawlId: defaultCrawlId() }), ...s });
  } catch (err) {
    if (err instanceof SettingsError) throw new UsageError(err.message);
    throw err;
  }
}
