/** `crawl` commands as the benches start them: through crawlProcessArgs (the crawl's node flags) and CRAWL_ENV, warnings only unless `env` says otherwise. */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { CRAWL_ENV, crawlProcessArgs } from '../cli/node-flags.js';

export function crawlCli(args: string[], env: NodeJS.ProcessEnv, opts: { stdio?: StdioOptions; nodeArgs?: string[] } = {}): ChildProcess {
  return spawn(process.execPath, crawlProcessArgs(args, opts.nodeArgs), { stdio: opts.stdio ?? ['ignore', 'ignore', 'inherit'], env: { ...CRAWL_ENV, ...process.env, LOG_LEVEL: 'warn', ...env } });
}

export const exited = (child: ChildProcess) => new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
