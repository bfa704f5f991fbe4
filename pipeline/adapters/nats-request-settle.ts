import { RequestOne } from '@nats-io/nats-core/internal';

/** The parts of the client's one-reply request (nats-core 3.x, lib/request.js) this touches. */
interface RequestOneInternals {
  timer?: { cancel(): void };
  mux: { cancel(request: unknown): void };
  deferred: { resolve(msg: unknown): void };
  resolver(err: Error | null, msg: unknown): void;
}

let applied = false;

/**
 * Stops the client from building an Error for every request that succeeds.
 *
 * nats-core 3.4's `RequestOne.resolver`, on a reply, resolves the request and then calls
 * `cancel()`, which rejects the already-resolved promise with `new RequestError("cancelled")`.
 * The rejection is a no-op, but the Error captures a stack trace, and every KV read and
 * write, publish ack and API call is a request: a visible share of the crawl's CPU (see
 * docs/performance.md#the-nats-clients-writes-and-requests), which `noAsyncTraces` does not
 * remove. On success this does what the client does without that rejection: stop the timer,
 * drop the request from the mux, resolve.
 * Errors go through the client's own code unchanged.
 *
 * This reaches into a class the client exports only from `@nats-io/nats-core/internal`;
 * if a client version changes its shape, this does nothing and returns false.
 */
export function settleRequestsWithoutErrors(): boolean {
  if (applied) return true;
  const proto = (RequestOne as unknown as { prototype?: RequestOneInternals }).prototype;
  if (!proto || typeof proto.resolver !== 'function') return false;
  const original = proto.resolver;
  proto.resolver = function resolver(this: RequestOneInternals, err: Error | null, msg: unknown) {
    if (err || !this.mux || !this.deferred) return original.call(this, err, msg);
    this.timer?.cancel();
    this.mux.cancel(this);
    this.deferred.resolve(msg);
  };
  applied = true;
  return true;
}
