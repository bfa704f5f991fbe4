/**
 * Starting Debian's Chromium headless through playwright-core (which downloads no browser).
 * The flags keep Chromium from reaching anything on its own: the background-networking ones
 * stop its calls home (without them it tries Google's hosts at every start), and every
 * connection it would still open itself goes to a sink on loopback that refuses it, since
 * all the page's requests are meant to come to the route handler instead.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { Browser } from 'playwright-core';

/** Debian's package; CHROMIUM_PATH names another binary. */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
}

/** Why rendering cannot work on this machine, in one line, or null when Chromium is there. */
export function chromiumMissing(path = chromiumPath()): string | null {
  return existsSync(path) ? null : `rendering needs Chromium at ${path}: install Debian's package (apt-get install chromium, or scripts/setup.sh) or set CHROMIUM_PATH`;
}

export function chromiumArgs(opts: { memoryMb: number; sinkPort: number }): string[] {
  return [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-default-apps',
    '--disable-extensions',
    '--mute-audio',
    // containers often give /dev/shm a few MB, which crashes renderers
    '--disable-dev-shm-usage',
    // a page's scripts get this much heap; past it its renderer dies and the render fails (the memory bound)
    `--js-flags=--max-old-space-size=${opts.memoryMb}`,
    // whatever bypasses the route handler (a preconnect, a prefetch) meets the sink, loopback included
    `--proxy-server=http://127.0.0.1:${opts.sinkPort}`,
    '--proxy-bypass-list=<-loopback>',
    // and no name resolves inside the browser: it has no business looking any up
    '--host-resolver-rules=MAP * ~NOTFOUND',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  ];
}

/** A loopback listener that closes every connection at once and counts them (each is a leak past the route handler). */
export async function startSink(onConnection: () => void): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((socket) => {
    onConnection();
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * playwright-core is loaded at the first launch, not with this module: loading it costs every
 * crawl process tens of MB of RSS and of live heap (which each full garbage collection marks
 * again) and part of a second of start-up, and most crawls render nothing
 * (docs/performance.md#playwright-core-loaded-only-to-render).
 */
let playwright: Promise<typeof import('playwright-core')> | undefined;

/**
 * Launches Chromium headless. playwright-core gives it a fresh, empty profile
 * (`--user-data-dir` in a new temporary folder) and removes it when the browser closes.
 */
export async function launchChromium(opts: { memoryMb: number; sinkPort: number; executablePath?: string }): Promise<Browser> {
  const executablePath = opts.executablePath ?? chromiumPath();
  const missing = chromiumMissing(executablePath);
  if (missing) throw new Error(missing);
  playwright ??= import('playwright-core');
  const { chromium } = await playwright;
  return chromium.launch({
    executablePath,
    headless: true,
    args: chromiumArgs(opts),
    // a start takes well under a second; a machine under load may need more
    timeout: 60_000,
    // playwright's own SIGINT/SIGTERM handling would kill the browser under a render the runner is still finishing
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
}
