/** `crawl` commands as the benches start them: through crawlProcessArgs (the crawl's node flags), warnings only. */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { crawlProcessArgs } from '../cli/node-flags.js';

export function crawlCli(args: string[], env: NodeJS.ProcessEnv, stdio: StdioOptions = ['ignore', 'ignore', 'inherit']): ChildProcess {
  return spawn(process.execPath, crawlProcessArgs(args), { stdio, env: { ...process.env, LOG_LEVEL: 'warn', ...env } });
}

export const exited = (child: ChildProcess) => new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
