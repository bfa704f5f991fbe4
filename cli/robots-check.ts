import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { canonicalize } from '../stages/normalize/canonical-url.js';
import { decodeRobotsBody } from '../stages/shared/robots/robots-fetch-policy.js';
import { compileRobots, isValidProductToken, productToken } from '../stages/shared/robots/robots-rules.js';
import { UsageError } from './usage-error.js';
import { exitWhenDrained } from './exit.js';

export interface RobotsCheckOptions {
  /** robots.txt file to read; '-' = stdin */
  robots?: string;
  /** a full User-Agent string or a bare product token */
  userAgent?: string;
  /** the token to obey, instead of the user agent's product token (as the crawl's `--robots-token`) */
  robotsToken?: string;
  /** append the deciding rule to each line */
  why?: boolean;
}

export interface RobotsCheckIo {
  /** The bytes of the robots.txt named by --robots ('-' = stdin); rejects when unreadable. */
  read(file: string): Promise<Uint8Array>;
  /** One line for humans (no newline): stderr for the CLI. */
  note(line: string): void;
}

/**
 * `crawl robots-check`: for each URL, in argument order, the line `allowed URL` or
 * `disallowed URL` (with `why`: a tab and the deciding rule, or `(no matching rule)`).
 *
 * The answer is the crawler's: the file's bytes are decoded as a fetched robots.txt is
 * (first 500 KiB, BOM skipped, invalid UTF-8 replaced), the URL is canonicalised as the
 * normalize stage does (so `/a//b`, `%7E` or `utm_*` parameters are seen as the crawler sees
 * them), and the verdict comes from the politeness gate's compiled rules for the agent's
 * product token. The group's Crawl-delay, if any, goes to `io.note` as `crawl-delay: N s`.
 * Bad arguments throw a UsageError before the file is read.
 */
export async function robotsCheck(opts: RobotsCheckOptions, urls: readonly string[], io: RobotsCheckIo): Promise<string[]> {
  if (opts.robots === undefined) throw new UsageError('robots-check: --robots <file> is required (- for stdin)');
  if (opts.userAgent === undefined && opts.robotsToken === undefined) throw new UsageError('robots-check: --user-agent <ua> or --robots-token <name> is required');
  if (urls.length === 0) throw new UsageError('robots-check: give at least one URL to check');
  const token = checkedToken(opts);
  const checked = urls.map((url) => ({ url, canonical: canonicalUrl(url) }));

  let bytes: Uint8Array;
  try {
    bytes = await io.read(opts.robots);
  } catch (err) {
    const what = opts.robots === '-' ? 'stdin' : opts.robots;
    throw new UsageError(`robots-check: cannot read robots file ${what}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const { text } = decodeRobotsBody(bytes);
  const compiled = compileRobots({ kind: 'rules', body: text, fetchedAt: Date.now(), status: 200, reason: 'robots-check' }, token);
  if (compiled.crawlDelayMs !== null) io.note(`crawl-delay: ${compiled.crawlDelayMs / 1000} s`);

  return checked.map(({ url, canonical }) => {
    const v = compiled.verdict(canonical);
    let line = `${v.allowed ? 'allowed' : 'disallowed'} ${url}`;
    if (opts.why) {
      const rule = v.matchedRule ?? (new URL(canonical).pathname === '/robots.txt' ? '(/robots.txt is always allowed)' : '(no matching rule)');
      line += `\t${rule}`;
      if (canonical !== url) io.note(`${url} is checked as ${canonical}`);
    }
    return line;
  });
}

/** The token the crawler would obey: `--robots-token`, else the user agent's product token. */
function checkedToken(opts: RobotsCheckOptions): string {
  if (opts.robotsToken !== undefined) {
    if (!isValidProductToken(opts.robotsToken)) {
      throw new UsageError(`robots-check: --robots-token must be a product token of letters, _ and - (RFC 9309), got ${JSON.stringify(opts.robotsToken)}`);
    }
    return opts.robotsToken.toLowerCase();
  }
  try {
    return productToken(opts.userAgent!);
  } catch {
    throw new UsageError(`robots-check: --user-agent ${JSON.stringify(opts.userAgent)} names no product token ([A-Za-z_-]+ at its start or after "compatible;")`);
  }
}

/** The URL the crawler would check: `url` must be an absolute http(s) URL. */
function canonicalUrl(url: string): string {
  let scheme: string | null = null;
  try {
    scheme = new URL(url).protocol;
  } catch {
    /* not absolute */
  }
  if (scheme !== 'http:' && scheme !== 'https:') {
    throw new UsageError(`robots-check: ${JSON.stringify(url)} is not an absolute http(s) URL`);
  }
  const r = canonicalize(url);
  if (!r.ok) throw new UsageError(`robots-check: invalid URL ${JSON.stringify(url)}: ${r.reason}: ${r.detail}`);
  return r.url;
}

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The process's files, stdin and stderr. */
export const processIo: RobotsCheckIo = {
  read: (file) => (file === '-' ? readStdin() : readFile(file)),
  note: (line) => void process.stderr.write(`${line}\n`),
};

/** Registers `crawl robots-check` on the CLI. */
export function addRobotsCheckCommand(cli: Command): Command {
  return cli
    .command('robots-check')
    .description('whether a robots.txt allows URLs for a user-agent, decided as the crawler does: one line "allowed URL" or "disallowed URL" each')
    .argument('<url...>', 'absolute http(s) URLs to check')
    .requiredOption('--robots <file>', 'the robots.txt file to read (- for stdin)')
    .option('--user-agent <ua>', 'a User-Agent string or bare product token; its product token (the product after "compatible;", else the first) selects the group')
    .option('--robots-token <name>', 'the product token to check for, as the crawl\'s --robots-token (instead of --user-agent\'s)')
    .option('--why', 'append a tab and the deciding rule (or "(no matching rule)") to each line', false)
    .action(async (urls: string[], o: RobotsCheckOptions) => {
      const lines = await robotsCheck(o, urls, processIo);
      process.stdout.write(lines.map((l) => `${l}\n`).join(''));
      await exitWhenDrained(0);
    });
}
