import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { UsageError } from './usage-error.js';

/**
 * Whether a listen address reaches this machine only: 127.0.0.0/8, ::1, localhost. Anything
 * else (0.0.0.0, ::, a LAN or public address, a host name) is reachable from elsewhere.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

/** Shorter tokens can be guessed; `openssl rand -hex 32` makes a good one. */
export const MIN_API_TOKEN_CHARS = 16;

/**
 * The API token: `--api-token-file FILE`, else CRAWL_API_TOKEN (never a flag's value: a
 * command line shows in `ps`). Outside loopback the service refuses to start without one.
 */
export function apiToken(o: { apiTokenFile?: string; host: string }, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let token: string | undefined;
  if (o.apiTokenFile !== undefined) {
    try {
      token = readFileSync(o.apiTokenFile, 'utf8').trim();
    } catch (err) {
      throw new UsageError(`--api-token-file: cannot read ${o.apiTokenFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  } else if (env.CRAWL_API_TOKEN) token = env.CRAWL_API_TOKEN.trim();
  if (token !== undefined && token.length < MIN_API_TOKEN_CHARS) {
    throw new UsageError(`the API token is too short: at least ${MIN_API_TOKEN_CHARS} characters (e.g. \`openssl rand -hex 32\`)`);
  }
  if (token !== undefined && /\s/.test(token)) throw new UsageError('the API token may not contain spaces or line breaks');
  if (token === undefined && !isLoopbackHost(o.host)) {
    throw new UsageError(
      `--host ${o.host} is reachable from other machines: give an API token (--api-token-file FILE or CRAWL_API_TOKEN), or listen on 127.0.0.1`,
    );
  }
  return token;
}
