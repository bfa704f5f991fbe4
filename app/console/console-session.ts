import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The cookie the console's sign-in sets: HttpOnly, so no script reads it; SameSite=Strict, so no other site's page sends it. */
export const SESSION_COOKIE = 'crawl_console';

/**
 * The cookie's value for a token: an HMAC of it, not the token, so the browser's cookie jar
 * never holds the token itself (it still opens the console, and only while the token is the same).
 */
export const sessionValue = (token: string): string => createHmac('sha256', token).update('crawl console session').digest('base64url');

export function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

export function sessionMatches(req: IncomingMessage, token: string): boolean {
  const sent = Buffer.from(cookieOf(req.headers.cookie, SESSION_COOKIE) ?? '');
  const expected = Buffer.from(sessionValue(token));
  return sent.length === expected.length && timingSafeEqual(sent, expected);
}

export const sessionCookie = (token: string) => `${SESSION_COOKIE}=${sessionValue(token)}; HttpOnly; SameSite=Strict; Path=/`;
export const clearedSessionCookie = () => `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;

/**
 * Whether a browser sent the request from another site's page: its Origin names a host other
 * than the one it asked. Such a request is refused whatever it carries (a page elsewhere
 * must not drive a crawl on this machine). Clients that are not browsers send no Origin.
 */
export function crossSite(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true;
  }
}

/**
 * Whether a request without a token names this machine in its Host header (127.0.0.0/8,
 * [::1], localhost, or no Host at all). A page of another site whose name was made to
 * resolve to 127.0.0.1 (DNS rebinding) sends its own name there, and its requests are
 * same-origin to the browser: only the Host header tells them apart.
 */
export function loopbackHostHeader(req: IncomingMessage): boolean {
  const host = req.headers.host;
  if (host === undefined) return true;
  const name = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page a browser gets instead of the console while it has no session: a form that posts
 * the token (never in a URL, so it shows in no log or history) and gets the cookie back.
 */
export function signInPage(message?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · crawl console</title><link rel="icon" href="data:,">
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}
main{max-width:26rem;margin:10vh auto;background:#fff;border:1px solid #c9ced6;border-radius:6px;padding:1.5rem 2rem}
h1{font-size:1.4rem;margin-top:0}label{display:block;font-weight:600;margin-bottom:.3rem}
input{width:100%;box-sizing:border-box;font:inherit;padding:.45rem;border:1px solid #6b7380;border-radius:4px}
button{margin-top:1rem;font:inherit;padding:.45rem 1.2rem;border:1px solid #0b4f8a;background:#0b4f8a;color:#fff;border-radius:4px;cursor:pointer}
:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
.error{border-left:4px solid #a4161a;background:#fde8e8;padding:.5rem .8rem;margin-bottom:1rem}
</style></head>
<body><main>
<h1>Crawl console</h1>
<p>This service needs its API token (the one <code>crawl serve</code> was given in <code>--api-token-file</code> or <code>CRAWL_API_TOKEN</code>).</p>
${message ? `<p class="error" role="alert"><strong>Not signed in:</strong> ${escapeHtml(message)}</p>` : ''}
<form method="post" action="/console/sign-in">
<label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
</form>
</main></body></html>
`;
}
