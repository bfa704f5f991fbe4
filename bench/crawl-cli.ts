/** `crawl` commands as the benches start them: through crawlProcessArgs (the crawl's node flags), warnings only unless `env` says otherwise. */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { crawlProcessArgs } from '../cli/node-flags.js';

export function crawlCli(args: string[], env: NodeJS.ProcessEnv, opts: { stdio?: StdioOptions; nodeArgs?: string[] } = {}): ChildProcess {
  return spawn(process.execPath, crawlProcessArgs(args, opts.nodeArgs), { stdio: opts.stdio ?? ['ignore', 'ignore', 'inherit'], env: { ...process.env, LOG_LEVEL: 'warn', ...env } });
}

export const exited = (child: ChildProcess) => new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
