import type { NatsConnection, Subscription } from '@nats-io/transport-node';
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
export function serveNatsApi(nc: NatsConnection, api: JobApi, onError: (err: Error) => void, answered: (status: number) => void = () => undefined): Subscription {
  return nc.subscribe(`${API_SUBJECT}.*`, {
    queue: 'crawl-serve',
    callback: (err, msg) => {
      if (err) return onError(err);
      const op = OPERATIONS[msg.subject.slice(API_SUBJECT.length + 1)];
      const answer = (async (): Promise<ApiAnswer> => {
        if (!op) return { status: 404, body: { error: { field: 'subject', reason: `no operation ${msg.subject}: one of ${NATS_OPERATIONS.join(', ')}` } } };
        if (msg.data.length > MAX_BODY_BYTES) return { status: 413, body: { error: { field: '(body)', reason: `larger than ${MAX_BODY_BYTES} bytes` } } };
        let body: unknown;
        try {
          body = msg.data.length > 0 ? JSON.parse(new TextDecoder().decode(msg.data)) : undefined;
        } catch (e) {
          return { status: 400, body: { error: { field: '(body)', reason: `not JSON: ${(e as Error).message}` } } };
        }
        return op(api, body as Record<string, unknown> | undefined);
      })();
      answer
        .catch((e: Error): ApiAnswer => {
          onError(e);
          return { status: 500, body: { error: { field: '(server)', reason: 'the service failed to answer; see its log' } } };
        })
        .then((a) => {
          answered(a.status);
          msg.respond(JSON.stringify(a));
        });
    },
  });
}
