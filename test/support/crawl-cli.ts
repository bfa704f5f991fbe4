import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** the built CLI (tests run from dist/, so this is dist/cli/main.js) */
export const CLI = path.resolve(here, '../../cli/main.js');

export interface CliRun {
  child: ChildProcess;
  /** what it has written to stderr so far (the last 20,000 characters) */
  stderrSoFar(): string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/**
 * Stops a command as a person does (SIGTERM) and waits for it, so what it started (`crawl
 * serve`'s embedded nats-server) stops with it; SIGKILL after `graceMs` if it does not end.
 */
export async function stopCli(run: CliRun, graceMs = 15_000): Promise<void> {
  if (run.child.exitCode !== null || run.child.signalCode !== null) return;
  run.child.kill('SIGTERM');
  const timer = setTimeout(() => run.child.kill('SIGKILL'), graceMs);
  await run.done;
  clearTimeout(timer);
}

/** A word for bash: `it's` -> `'it'\''s'` (for tests that pipe the CLI into other tools). */
export const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * A proxy the machine's environment names would carry the crawls of the tests off loopback:
 * they get none unless a test gives one (an empty variable is no proxy).
 */
const NO_PROXY_ENV = { http_proxy: '', HTTP_PROXY: '', https_proxy: '', HTTPS_PROXY: '', no_proxy: '', NO_PROXY: '' };

/** Starts `crawl ARGS...` as its own process, like a user would; `input`, if given, is its whole stdin. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', ...NO_PROXY_ENV, ...env },
  });
  if (input !== undefined) child.stdin!.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-20_000)));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done, stderrSoFar: () => stderr };
}

export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000, input?: string) {
  const run = startCli(args, env, input);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), timeoutMs);
  const result = await run.done;
  clearTimeout(timer);
  return result;
}

/** After a SIGKILL of `crawl run`, its nats-server is orphaned: stop it (the next run would too). */
export function killOrphanServer(outDir: string): void {
  const pidFile = path.join(outDir, 'nats', 'nats-server.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** The jobs API's base URL (`http://127.0.0.1:PORT`) that `crawl serve` prints once it listens. */
export async function serveApiUrl(run: CliRun): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const m = /jobs API on (http:\/\/[^\s/]+)\//.exec(run.stderrSoFar());
    if (m) return m[1]!;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`crawl serve did not start: ${run.stderrSoFar().slice(-2000)}`);
}
