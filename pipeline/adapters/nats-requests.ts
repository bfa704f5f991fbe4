import type { NatsConnection } from '@nats-io/transport-node';

/** Answers a request: its subject and body in, the reply's body out. */
export type RequestAnswer = (subject: string, data: Uint8Array) => Promise<string>;

/** Serves request subjects in a queue group: each request is answered by one member of the group. */
export interface RequestServer {
  serve(subjects: string, queue: string, answer: RequestAnswer, onError: (err: Error) => void): { unsubscribe(): void };
}

/** Requests on NATS core subjects (request-reply), for any NATS client. */
export function natsRequestServer(nc: NatsConnection): RequestServer {
  return {
    serve(subjects, queue, answer, onError) {
      return nc.subscribe(subjects, {
        queue,
        callback: (err, msg) => {
          if (err) return onError(err);
          // an answer that fails (or a reply that cannot be sent) is the server's error, never an unhandled rejection
          answer(msg.subject, msg.data)
            .then((reply) => void msg.respond(reply))
            .catch(onError);
        },
      });
    },
  };
}
