import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiAnswer, JobApi } from './job-api.js';

/** Request bodies past this are refused (413): a job's spec, seeds included, is far smaller. */
export const MAX_BODY_BYTES = 1024 * 1024;

type Handler = (api: JobApi, params: Record<string, string>, body: unknown) => Promise<ApiAnswer>;

/** The HTTP API: every route, as the OpenAPI document (docs/api/openapi.json) lists them. */
export const ROUTES: ReadonlyArray<{ method: 'GET' | 'POST'; path: string; handle: Handler }> = [
  { method: 'POST', path: '/api/v1/jobs', handle: (api, _p, body) => api.create(body, 'http') },
  // the design documents' name for creating a crawl
  { method: 'POST', path: '/api/v1/crawl/start', handle: (api, _p, body) => api.create(body, 'http') },
  { method: 'GET', path: '/api/v1/jobs', handle: (api) => api.list() },
  { method: 'GET', path: '/api/v1/jobs/{id}', handle: (api, p) => api.get(p.id!) },
  { method: 'POST', path: '/api/v1/jobs/{id}/pause', handle: (api, p) => api.pause(p.id!) },
  { method: 'POST', path: '/api/v1/jobs/{id}/resume', handle: (api, p) => api.resume(p.id!) },
  { method: 'POST', path: '/api/v1/jobs/{id}/cancel', handle: (api, p) => api.cancel(p.id!) },
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

const problem = (status: number, field: string, reason: string): ApiAnswer => ({ status, body: { error: { field, reason } } });

async function readBody(req: IncomingMessage): Promise<{ ok: true; body: unknown } | { ok: false; answer: ApiAnswer }> {
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

async function route(api: JobApi, req: IncomingMessage): Promise<ApiAnswer> {
  const path = new URL(req.url ?? '/', 'http://api').pathname.replace(/\/+$/, '') || '/';
  const matches = ROUTES.map((r) => ({ r, params: match(path, r.path) })).filter((m) => m.params !== null);
  if (matches.length === 0) return problem(404, 'path', `no route ${path}`);
  const hit = matches.find((m) => m.r.method === req.method);
  if (!hit) return problem(405, 'method', `${req.method} is not allowed here: ${matches.map((m) => m.r.method).join(', ')}`);
  const body = req.method === 'POST' ? await readBody(req) : { ok: true as const, body: undefined };
  if (!body.ok) return body.answer;
  return hit.r.handle(api, hit.params!, body.body);
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

/**
 * Serves the API on `host:port` (port 0: any free one). With a token, every request, on
 * every path, must carry it as a Bearer token; others get 401 before anything is read.
 */
export async function startHttpApi(
  api: JobApi,
  host: string,
  port: number,
  onError: (err: Error) => void,
  token?: string,
  /** hears every status sent (the service's metrics) */
  answered: (status: number) => void = () => undefined,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="crawl"' });
      res.end(JSON.stringify(problem(401, 'authorization', 'a valid token is required: Authorization: Bearer <token>').body) + '\n');
      answered(401);
      req.resume();
      return;
    }
    route(api, req)
      .catch((err: Error): ApiAnswer => {
        onError(err);
        return problem(500, '(server)', 'the service failed to answer; see its log');
      })
      .then((a) => {
        answered(a.status);
        res.writeHead(a.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(a.body) + '\n');
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
