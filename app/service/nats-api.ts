import type { RequestServer } from '../../pipeline/adapters/nats-requests.js';
import type { ApiAnswer, JobApi } from './job-api.js';
import { MAX_BODY_BYTES } from './http-api.js';
import { API_SUBJECTS } from '../../topology/index.js';

/** The API on NATS request subjects, for any NATS client: `crawl.api.jobs.<operation>`. */
export const API_SUBJECT = API_SUBJECTS.jobs;

const OPERATIONS: Record<string, (api: JobApi, body: Record<string, unknown> | undefined) => Promise<ApiAnswer>> = {
  create: (api, body) => api.create(body, 'nats'),
  list: (api) => api.list(),
  get: (api, body) => withId(body, (id) => api.get(id)),
  pause: (api, body) => withId(body, (id) => api.pause(id)),
  resume: (api, body) => withId(body, (id) => api.resume(id)),
  cancel: (api, body) => withId(body, (id) => api.cancel(id)),
};

export const NATS_OPERATIONS = Object.keys(OPERATIONS);

async function withId(body: Record<string, unknown> | undefined, op: (id: string) => Promise<ApiAnswer>): Promise<ApiAnswer> {
  const id = body?.id;
  if (typeof id !== 'string' || id === '') return { status: 400, body: { error: { field: 'id', reason: 'a job id is required: {"id": "job-..."}' } } };
  return op(id);
}

/**
 * Answers `crawl.api.jobs.<op>` requests with the same JSON as the HTTP API, plus its status:
 * `{"status": 201, "body": {...}}`. Every service answers (a queue group): one reply each.
 */
export function serveNatsApi(requests: RequestServer, api: JobApi, onError: (err: Error) => void, answered: (status: number) => void = () => undefined): { unsubscribe(): void } {
  const answerOf = async (subject: string, data: Uint8Array): Promise<ApiAnswer> => {
    const op = OPERATIONS[subject.slice(API_SUBJECT.length + 1)];
    if (!op) return { status: 404, body: { error: { field: 'subject', reason: `no operation ${subject}: one of ${NATS_OPERATIONS.join(', ')}` } } };
    if (data.length > MAX_BODY_BYTES) return { status: 413, body: { error: { field: '(body)', reason: `larger than ${MAX_BODY_BYTES} bytes` } } };
    let body: unknown;
    try {
      body = data.length > 0 ? JSON.parse(new TextDecoder().decode(data)) : undefined;
    } catch (e) {
      return { status: 400, body: { error: { field: '(body)', reason: `not JSON: ${(e as Error).message}` } } };
    }
    return op(api, body as Record<string, unknown> | undefined);
  };
  const reply = async (subject: string, data: Uint8Array): Promise<string> => {
    const a = await answerOf(subject, data).catch((e: Error): ApiAnswer => {
      onError(e);
      return { status: 500, body: { error: { field: '(server)', reason: 'the service failed to answer; see its log' } } };
    });
    answered(a.status);
    return JSON.stringify(a);
  };
  return requests.serve(`${API_SUBJECT}.*`, 'crawl-serve', reply, onError);
}
