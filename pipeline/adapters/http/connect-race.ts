/**
 * Happy eyeballs (RFC 8305 §5) over a host's addresses: the first attempt starts at once;
 * each next one starts when the previous failed or after `attemptDelayMs` without an answer,
 * while the earlier ones keep trying; the first to connect wins and the others are aborted.
 *
 * Why racing rather than one address at a time with the connect timeout split between them:
 * an address that does not answer at all (a dead server, a firewall that drops) then costs
 * 250 ms instead of its share of the timeout, and an address that answers slowly (a distant
 * server, a loaded one) is never abandoned for being slow: it keeps its attempt until the
 * whole connect timeout. (Node's own `autoSelectFamily` abandons each attempt after 250 ms.)
 * The price is a second half-open connection for a moment when the first address is slow.
 */

export interface RaceOptions {
  /** RFC 8305's "Connection Attempt Delay": 250 ms recommended */
  attemptDelayMs: number;
  /** aborts every attempt (the connect timeout, or the request's own abort) */
  signal: AbortSignal;
  /** a failure that ends the race at once: the path to every address is broken (a proxy that is down) */
  isFatal?: (err: unknown) => boolean;
  /** told of each address that failed (not of those aborted because another won) */
  onFailed?: (target: number, err: unknown) => void;
}

export interface RaceWinner<S> {
  socket: S;
  /** index of the target that connected */
  index: number;
}

/** All attempts failed: `errors[i]` is what target i's attempt failed with. */
export class AllAttemptsFailedError extends AggregateError {
  override readonly name = 'AllAttemptsFailedError';
  /** the first attempt's code, so the failure classifies like a single connection's */
  readonly code: string | undefined;
  constructor(errors: unknown[], message: string) {
    super(errors, message);
    this.code = (errors[0] as { code?: unknown } | undefined)?.code as string | undefined;
  }
}

export function raceConnect<S extends { destroy(): unknown }>(
  count: number,
  attempt: (index: number, signal: AbortSignal) => Promise<S>,
  describeTarget: (index: number) => string,
  opts: RaceOptions,
): Promise<RaceWinner<S>> {
  return new Promise<RaceWinner<S>>((resolve, reject) => {
    const controllers: AbortController[] = [];
    const errors: unknown[] = new Array(count);
    let failedCount = 0;
    let started = 0;
    let done = false;
    let timer: NodeJS.Timeout | undefined;

    const finish = () => {
      done = true;
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
    };
    const abortAll = (reason: unknown, except = -1) => {
      controllers.forEach((c, i) => {
        if (i !== except) c.abort(reason);
      });
    };
    const onAbort = () => {
      if (done) return;
      finish();
      abortAll(opts.signal.reason);
      reject(opts.signal.reason);
    };

    const startNext = () => {
      clearTimeout(timer);
      if (done || started >= count) return;
      const index = started++;
      const ac = new AbortController();
      controllers.push(ac);
      attempt(index, ac.signal).then(
        (socket) => {
          if (done) {
            socket.destroy();
            return;
          }
          finish();
          // the losers: their sockets are destroyed by their own abort handling
          abortAll(new Error('another address connected first'), index);
          resolve({ socket, index });
        },
        (err: unknown) => {
          if (done) return;
          errors[index] = err;
          failedCount++;
          if (opts.isFatal?.(err)) {
            finish();
            abortAll(err);
            reject(err);
            return;
          }
          opts.onFailed?.(index, err);
          if (failedCount === count) {
            finish();
            if (count === 1) reject(err);
            else {
              const each = errors.map((e, i) => `${describeTarget(i)}: ${e instanceof Error ? e.message : String(e)}`);
              reject(new AllAttemptsFailedError(errors, `none of ${count} addresses connected (${each.join('; ')})`));
            }
            return;
          }
          // a failed attempt does not wait out the delay: the next address starts now
          if (index === started - 1) startNext();
        },
      );
      if (started < count) timer = setTimeout(startNext, opts.attemptDelayMs);
    };

    if (opts.signal.aborted) {
      reject(opts.signal.reason);
      return;
    }
    if (count === 0) {
      reject(new Error('no address to connect to'));
      return;
    }
    opts.signal.addEventListener('abort', onAbort, { once: true });
    startNext();
  });
}
