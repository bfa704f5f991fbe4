import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiAnswer, JobApi } from './job-api.js';
import type { CrawlViews } from '../console/crawl-views.js';
import { CONSOLE_ROUTES } from '../console/console-routes.js';
import { ConsoleFiles } from '../console/console-files.js';
import { clearedSessionCookie, crossSite, loopbackHostHeader, sessionCookie, sessionMatches, signInPage } from '../console/console-session.js';

/** Request bodies past this are refused (413): a job's spec, seeds included, is far smaller. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** What the routes answer from: the jobs API, and what the console reads beside it (the crawl's state, its output). */
export interface ApiContext {
  jobs: JobApi;
  views: CrawlViews;
  outDir?: string;
}

type Handler = (ctx: ApiContext, params: Record<string, string>, body: unknown, query: URLSearchParams) => Promise<ApiAnswer>;

/** The HTTP API: every route, as the OpenAPI document (docs/api/openapi.json) lists them. */
export const ROUTES: ReadonlyArray<{ method: 'GET' | 'POST'; path: string; handle: Handler }> = [
  { method: 'POST', path: '/api/v1/jobs', handle: (c, _p, body) => c.jobs.create(body, 'http') },
  // the design documents' name for creating a crawl
  { method: 'POST', path: '/api/v1/crawl/start', handle: (c, _p, body) => c.jobs.create(body, 'http') },
  { method: 'GET', path: '/api/v1/jobs', handle: (c) => c.jobs.list() },
  { method: 'GET', path: '/api/v1/jobs/{id}', handle: (c, p) => c.jobs.get(p.id!) },
  { method: 'POST', path: '/api/v1/jobs/{id}/pause', handle: (c, p) => c.jobs.pause(p.id!) },
  { method: 'POST', path: '/api/v1/jobs/{id}/resume', handle: (c, p) => c.jobs.resume(p.id!) },
  { method: 'POST', path: '/api/v1/jobs/{id}/cancel', handle: (c, p) => c.jobs.cancel(p.id!) },
  ...CONSOLE_ROUTES,
  { method: 'GET', path: '/healthz', handle: async () => ({ status: 200, body: { ok: true } }) },
];

function match(path: string, pattern: string): Record<string, string> | null {
  const a = path.split('/');
  const b = pattern.split('/');
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    if (b[i]!.startsWith('{')) params[b[i]!.slice(1, -1)] = decodeURIComponent(a[i]!);
    else if (a[i] !== b[i]) return null;
  }
  return params;
}

export const problem = (status: number, field: string, reason: string): ApiAnswer => ({ status, body: { error: { field, reason } } });

export async function readBody(req: IncomingMessage): Promise<{ ok: true; body: unknown } | { ok: false; answer: ApiAnswer }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return { ok: false, answer: problem(413, '(body)', `larger than ${MAX_BODY_BYTES} bytes`) };
    chunks.push(chunk);
  }
  if (size === 0) return { ok: true, body: undefined };
  try {
    return { ok: true, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (err) {
    return { ok: false, answer: problem(400, '(body)', `not JSON: ${(err as Error).message}`) };
  }
}

async function route(ctx: ApiContext, req: IncomingMessage, url: URL): Promise<ApiAnswer> {
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const matches = ROUTES.map((r) => ({ r, params: match(path, r.path) })).filter((m) => m.params !== null);
  if (matches.length === 0) return problem(404, 'path', `no route ${path}`);
  const hit = matches.find((m) => m.r.method === req.method);
  if (!hit) return problem(405, 'method', `${req.method} is not allowed here: ${matches.map((m) => m.r.method).join(', ')}`);
  const body = req.method === 'POST' ? await readBody(req) : { ok: true as const, body: undefined };
  if (!body.ok) return body.answer;
  return hit.r.handle(ctx, hit.params!, body.body, url.searchParams);
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Whether the request carries the token as `Authorization: Bearer <token>`. Compared as
 * digests in constant time, so the answer's timing says nothing about how much matched.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m !== null && timingSafeEqual(digest(m[1]!), digest(token));
}

/** A client gets this long to send its request (headers and body): a slow one holds no socket for minutes. */
const REQUEST_TIMEOUT_MS = 30_000;

/** How a request proved it may be answered: no token needed, the token itself, or the console's session cookie. */
type Access = 'open' | 'bearer' | 'session' | null;

function accessOf(req: IncomingMessage, token: string | undefined): Access {
  if (token === undefined) return 'open';
  if (bearerMatches(req.headers.authorization, token)) return 'bearer';
  return sessionMatches(req, token) ? 'session' : null;
}

function send(res: ServerResponse, a: ApiAnswer, extraHeaders: Record<string, string> = {}): void {
  if (a.raw) {
    res.writeHead(a.status, { 'content-type': a.raw.contentType, ...a.raw.headers, ...extraHeaders });
    res.end(a.raw.data);
    return;
  }
  res.writeHead(a.status, { 'content-type': 'application/json', ...extraHeaders });
  res.end(JSON.stringify(a.body) + '\n');
}

const html = (status: number, page: string): ApiAnswer => ({ status, body: null, raw: { contentType: 'text/html; charset=utf-8', data: page, headers: { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } } });

/** The sign-in form's post: `token=...` form-encoded; the right token gets the session cookie and goes to the console. */
async function signIn(req: IncomingMessage, res: ServerResponse, token: string | undefined): Promise<number> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 64 * 1024) return answerWith(res, html(413, signInPage('the form was too large')));
    chunks.push(chunk);
  }
  if (token === undefined) {
    res.writeHead(303, { location: '/' }).end();
    return 303;
  }
  const sent = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('token')?.trim() ?? '';
  if (!bearerMatches(`Bearer ${sent}`, token)) return answerWith(res, html(401, signInPage('that is not the API token')));
  res.writeHead(303, { location: '/', 'set-cookie': sessionCookie(token), 'cache-control': 'no-store' }).end();
  return 303;
}

function answerWith(res: ServerResponse, a: ApiAnswer): number {
  send(res, a);
  return a.status;
}

/**
 * Serves the API and the console on `host:port` (port 0: any free one). With a token, every
 * request, on every path, must carry it as a Bearer token or the console's session cookie
 * (set by signing in with the token); others get 401 before anything is read, a browser
 * asking for the console the sign-in form. A request a browser sends from another site's
 * page is refused (403) with or without a token, and so, without a token, is one whose Host
 * header names something other than this machine.
 */
export async function startHttpApi(
  ctx: ApiContext,
  host: string,
  port: number,
  onError: (err: Error) => void,
  token?: string,
  /** hears every status sent (the service's metrics) */
  answered: (status: number) => void = () => undefined,
): Promise<{ server: Server; url: string }> {
  const files = new ConsoleFiles();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://api');
    const refuse = (a: ApiAnswer, headers: Record<string, string> = {}) => {
      send(res, a, headers);
      answered(a.status);
      req.resume();
    };
    if (crossSite(req)) return refuse(problem(403, 'origin', `requests from pages of ${req.headers.origin} are refused`));
    // without a token the service listens on loopback only (api-access.ts), and is asked for by a loopback name
    if (token === undefined && !loopbackHostHeader(req)) return refuse(problem(403, 'host', `without an API token only requests to a loopback address or localhost are answered, not to ${req.headers.host}`));
    if (url.pathname === '/console/sign-in' && req.method === 'POST') {
      signIn(req, res, token).then(answered, (err: Error) => {
        onError(err);
        refuse(problem(500, '(server)', 'the service failed to answer; see its log'));
      });
      return;
    }
    if (url.pathname === '/console/sign-out' && req.method === 'POST') {
      return refuse({ status: 303, body: null, raw: { contentType: 'text/plain', data: '', headers: { location: '/', 'set-cookie': clearedSessionCookie() } } });
    }
    const access = accessOf(req, token);
    if (access === null) {
      const page = req.method === 'GET' && files.answer(url.pathname, false) !== null;
      return refuse(
        page ? html(401, signInPage()) : problem(401, 'authorization', 'a valid token is required: Authorization: Bearer <token>'),
        { 'www-authenticate': 'Bearer realm="crawl"' },
      );
    }
    const file = req.method === 'GET' ? files.answer(url.pathname, access === 'session') : null;
    if (file) return refuse(file);
    route(ctx, req, url)
      .catch((err: Error): ApiAnswer => {
        onError(err);
        return problem(500, '(server)', 'the service failed to answer; see its log');
      })
      .then((a) => {
        answered(a.status);
        send(res, a);
      });
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = Math.min(server.headersTimeout, REQUEST_TIMEOUT_MS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}` };
}
